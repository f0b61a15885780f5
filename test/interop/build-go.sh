#!/usr/bin/env bash
# Builds the Go interop client from proto/, from scratch: installs protoc-gen-go and protoc-gen-go-grpc
# at the versions go.mod pins (its `tool` block) into test/interop/.bin, generates the Go code with buf
# (template test/interop/go/buf.gen.yaml, managed mode for go_package), and builds the client there.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$root/test/interop/.bin"
mkdir -p "$bin"

cd "$root/test/interop/go"
GOBIN="$bin" go install tool

cd "$root"
rm -rf test/interop/go/gen
PATH="$bin:$PATH" "$root/node_modules/.bin/buf" generate --template test/interop/go/buf.gen.yaml

cd "$root/test/interop/go"
go vet ./...
go build -buildvcs=false -o "$bin/solgate-interop-go" .
echo "built $bin/solgate-interop-go"
