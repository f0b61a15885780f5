#!/usr/bin/env bash
# Builds the Rust interop client (tonic + prost, generated from proto/ in build.rs with a vendored protoc).
# The target dir stays under test/interop/rust/target (gitignored). Jobs: 1 by default, to leave a core
# to whatever else runs on a 2-core machine; CI (nothing else running) uses both.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
jobs="${INTEROP_CARGO_JOBS:-$([ "${CI:-}" = true ] && echo 2 || echo 1)}"
cargo build --locked -j "$jobs" \
  --manifest-path "$root/test/interop/rust/Cargo.toml" \
  --target-dir "$root/test/interop/rust/target"
echo "built $root/test/interop/rust/target/debug/solgate-interop"
