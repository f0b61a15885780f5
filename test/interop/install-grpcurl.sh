#!/usr/bin/env bash
# Installs grpcurl from the Go module proxy into test/interop/.bin (pinned: the newest release when
# this was written; `@latest` would make CI depend on the day it runs).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
GOBIN="$root/test/interop/.bin" go install github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4
"$root/test/interop/.bin/grpcurl" -version
