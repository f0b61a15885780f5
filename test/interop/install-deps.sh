#!/usr/bin/env bash
# Installs what the interop tests need beyond node_modules, Go and Rust: Debian's Chromium for the
# browser test. Idempotent: does nothing when /usr/bin/chromium is already there. Called by .ci/run.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo present)"
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq chromium >/dev/null
echo "chromium: $(/usr/bin/chromium --version)"
