#!/usr/bin/env bash
# The Connect conformance suite (connectrpc.com/conformance) in server mode, against Solgate's own server
# stack (server.ts): every protocol, codec, compression and stream type config.yaml declares, over HTTP/1.1
# and h2c. The runner and the suite's protos come from the Go module proxy (Go only; no BSR), and the protos'
# TypeScript is generated here into gen/ with the project's own protoc-gen-es.
#
#   bash test/conformance/run.sh [runner flags, e.g. --run '**/unary/**' -v]
# CONFORMANCE_UNARY_PATH=off runs the same suite with the lean unary path off (the router serves all).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version=v1.0.7
export GOFLAGS=-mod=mod
bin="$root/.cache/conformance/$version"
if [ ! -x "$bin/connectconformance" ]; then
  mkdir -p "$bin"
  GOBIN="$bin" go install "connectrpc.com/conformance/cmd/connectconformance@$version"
fi
module="$(cd "$bin" && go mod download -json "connectrpc.com/conformance@$version" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')"
[ -d "$module/proto" ] || { echo "conformance protos not found in $module" >&2; exit 1; }
rm -rf "$here/gen"
(cd "$here" && "$root/node_modules/.bin/buf" generate "$module/proto" --template buf.gen.yaml)
cd "$root"
"$root/node_modules/.bin/tsc" --noEmit -p "$here/tsconfig.json"
exec "$bin/connectconformance" --mode server --conf "$here/config.yaml" \
  --known-failing @"$here/known-deviations.txt" "$@" -- "$root/node_modules/.bin/node" "$here/server.ts"
