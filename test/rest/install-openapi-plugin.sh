#!/usr/bin/env bash
# Installs protoc-gen-connect-openapi (the buf plugin behind gen/openapi/) from the Go module proxy,
# at the version pinned in test/rest/openapi-plugin/go.mod, verified by its go.sum.
# Idempotent: a binary already built from the same go.sum is kept. Prints the directory holding it.
#
#   bin=$(bash test/rest/install-openapi-plugin.sh) && PATH="$bin:$PATH" npx buf generate --template buf.gen.openapi.yaml
#
# The binary lives outside the work tree (default ~/.cache/solgate/openapi-plugin/<go.sum hash>/bin,
# or $SOLGATE_TOOLS_DIR/...), so a fresh clone on the same machine, CI included, reuses it: the first
# build takes minutes on a 2-core machine. `go install module@version` is not used because it asks
# the proxy for the module's version list, which the proxy reachable here refuses; building from a
# pinned module needs only the modules themselves.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
module="$here/openapi-plugin"
command -v go >/dev/null || { echo "install-openapi-plugin: Go is required (https://go.dev/dl/)" >&2; exit 1; }

stamp="$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-16)"
dir="${SOLGATE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/solgate}/openapi-plugin/$stamp/bin"
bin="$dir/protoc-gen-connect-openapi"

if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  echo "install-openapi-plugin: building protoc-gen-connect-openapi into $dir (first time only)" >&2
  # Build to a temporary name, then rename: an interrupted build never leaves a half-written plugin.
  (cd "$module" && GOFLAGS=-mod=readonly go build -o "$bin.tmp.$$" github.com/sudorandom/protoc-gen-connect-openapi)
  mv "$bin.tmp.$$" "$bin"
fi
echo "$dir"
