#!/usr/bin/env bash
# Packs @solgate/localnet, installs the tarball into a new project in a temp directory (from the npm
# registry, so not part of `npm test`), and checks that `npx @solgate/localnet --help` works there and
# that the command starts and answers getHealth, under the Node found first on PATH.
#   bash packages/localnet/test/cli/pack-check.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'kill -- "-$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
pid=
(cd "$here" && npm pack --silent --pack-destination "$work" >/dev/null)
mkdir "$work/project" && cd "$work/project"
echo '{"name":"project","version":"1.0.0","private":true}' > package.json
npm install --silent --no-audit --no-fund "$work"/solgate-localnet-*.tgz
echo "node on PATH: $(node --version)"
npx @solgate/localnet --help | head -1
# Its own process group, so that the trap ends npx and everything under it.
setsid npx @solgate/localnet --reset --rpc-port 0 --quiet & pid=$!
for _ in $(seq 1 200); do grep -q "WebSocket PubSub URL" test-ledger/validator.log 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/.*JSON RPC URL: //p' test-ledger/validator.log)
answer=$(curl -s "$url" -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"getHealth"}')
echo "getHealth at $url: $answer"
[[ "$answer" == *'"result":"ok"'* ]]
echo "pack-check: ok"
