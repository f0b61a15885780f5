#!/usr/bin/env bash
# Builds the Geyser interop client: the official Rust Yellowstone client (yellowstone-grpc-client from
# crates.io) in a small binary. Target dir under test/interop/geyser-rust/target (gitignored). Jobs as
# build-rust.sh: 1 by default, both cores on CI.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
jobs="${INTEROP_CARGO_JOBS:-$([ "${CI:-}" = true ] && echo 2 || echo 1)}"
cargo build --locked -j "$jobs" \
  --manifest-path "$root/test/interop/geyser-rust/Cargo.toml" \
  --target-dir "$root/test/interop/geyser-rust/target"
echo "built $root/test/interop/geyser-rust/target/debug/solgate-geyser-interop"
