#!/usr/bin/env bash
# Regenerates every client's committed code from proto/ (`npm run generate:clients`):
#   clients/go/solgate/v1/     Go messages, grpc-go and connect-go stubs (buf, clients/go/buf.gen.yaml)
#   packages/client/src/gen/   TypeScript messages and services (protoc-gen-es, packages/client/buf.gen.yaml)
#   clients/rust/proto/        the .proto files the Rust crate compiles in its build.rs: proto/ and the
#                              third_party/ files it imports (buf ls-files --include-imports), copied
# The Go plugins are installed from the Go module proxy at the versions clients/go/tools/go.mod pins.
# CI runs this and fails if the committed files differ (git diff).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
buf="$root/node_modules/.bin/buf"
bin="$root/clients/.bin"

mkdir -p "$bin"
(cd clients/go/tools && GOBIN="$bin" go install tool)

rm -rf clients/go/solgate
PATH="$bin:$PATH" "$buf" generate --template clients/go/buf.gen.yaml

rm -rf packages/client/src/gen
"$buf" generate --template packages/client/buf.gen.yaml

rm -rf clients/rust/proto
"$buf" ls-files proto --include-imports | while read -r file; do
  case "$file" in
    proto/*) dest="clients/rust/proto/${file#proto/}" ;;
    third_party/proto/*) dest="clients/rust/proto/${file#third_party/proto/}" ;;
    *) continue ;; # well-known types: protoc-bin-vendored ships them
  esac
  mkdir -p "$(dirname "$dest")"
  cp "$file" "$dest"
done
echo "generated: clients/go/solgate, packages/client/src/gen, clients/rust/proto"
