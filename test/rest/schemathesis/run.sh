#!/usr/bin/env bash
# Property-based tests of the REST surface against its own OpenAPI document: schemathesis (PyPI, in a
# venv under ~/.cache/solgate) reads /openapi.json from a running gateway with its embedded localnet and
# sends schema-valid and schema-invalid requests to every operation, with every check on. A 5xx, a
# schema-valid request refused, an invalid one accepted, or an answer off its documented shape fails it, and
# so does an error-level line in the gateway's log or the gateway dying under it.
# Bounded: SCHEMATHESIS_MAX_EXAMPLES cases per operation (default 30) and SCHEMATHESIS_MAX_TIME seconds
# in all (default 150). Deterministic (the same cases every run) unless SCHEMATHESIS_SEED names a seed.
# Settings: schemathesis.toml beside this script; hooks.py drops the failures JSON Schema cannot prevent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
version=4.32.5
venv="${XDG_CACHE_HOME:-$HOME/.cache}/solgate/schemathesis-$version"
if [ ! -x "$venv/bin/schemathesis" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "schemathesis==$version"
fi

work=$(mktemp -d)
log="$work/gateway.log"
cleanup() {
  if [ -n "${pid:-}" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Port 0 everywhere: the gateway, its metrics and the localnet pick free ports; the banner says which.
# The pinned node itself (not npx, which would not pass SIGTERM on), so that the cleanup's kill reaches the
# gateway, which then stops its localnet child.
(cd "$root" && exec env HOST=127.0.0.1 PORT=0 METRICS_PORT=0 LOCALNET_PORT=0 LOCALNET_WORLD_DIR="$work/world" \
  LOCALNET_COLLECTION_SIZE=20 LOCALNET_TOKEN_HOLDERS=50 SOLGATE_DEMO=0 LOG_LEVEL=warn \
  "$root/node_modules/.bin/node" src/main.ts >"$log" 2>&1) &
pid=$!
for _ in $(seq 1 240); do
  grep -q '^API key' "$log" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "schemathesis: the gateway did not start" >&2; exit 1; }
  sleep 0.5
done
url=$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$log" | head -n 1 | sed 's/listening on //')
key=$(grep '^API key' "$log" | head -n 1 | sed 's/.*: //')
[ -n "$url" ] && [ -n "$key" ] || { cat "$log"; echo "schemathesis: no URL or API key in the banner" >&2; exit 1; }
echo "gateway at $url"

# Run from the temporary folder: schemathesis keeps a cache in its working directory.
cd "$work"
if [ -n "${SCHEMATHESIS_SEED:-}" ]; then randomness=(--seed "$SCHEMATHESIS_SEED"); else randomness=(--generation-deterministic); fi
set +e
SCHEMATHESIS_HOOKS=hooks PYTHONPATH="$here" "$venv/bin/schemathesis" --config-file "$here/schemathesis.toml" run "$url/openapi.json" \
  --url "$url" \
  -H "Authorization: Bearer $key" \
  --checks all \
  --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-30}" \
  --max-time "${SCHEMATHESIS_MAX_TIME:-150}" \
  "${randomness[@]}" \
  --no-color
status=$?
set -e
# The gateway's own targets, as the abuse bench has them: alive at the end, and no error-level log line
# ("level":"error" or "fatal": the logger writes labels, not pino's numbers) while schemathesis ran. Either
# fails the step, whatever schemathesis said.
if ! kill -0 "$pid" 2>/dev/null; then
  tail -n 40 "$log"
  echo "schemathesis: the gateway died during the run" >&2
  status=1
fi
errors=$(grep -cE '"level":"(error|fatal)"' "$log" || true)
if [ "$errors" -gt 0 ]; then
  grep -E '"level":"(error|fatal)"' "$log" | head -n 20
  echo "schemathesis: $errors error-level gateway log line(s) (target 0)" >&2
  status=1
else
  echo "schemathesis: 0 error-level gateway log lines"
fi
exit $status
