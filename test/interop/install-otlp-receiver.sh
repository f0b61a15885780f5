#!/usr/bin/env bash
# A Python virtual environment with the official OTLP protobuf definitions (PyPI opentelemetry-proto),
# for the OTLP receiver of test/interop/otlp.test.ts. Idempotent; prints the interpreter's path last.
set -euo pipefail
venv="${SOLGATE_OTLP_VENV:-$HOME/.cache/solgate/otlp-venv}"
if ! "$venv/bin/python" -c "import opentelemetry.proto.collector.trace.v1.trace_service_pb2" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "opentelemetry-proto==1.45.2"
fi
echo "$venv/bin/python"
