#!/usr/bin/env bash
# What CI can check of the deployment on a machine without a container engine (docs/fleet.md, "What is checked"):
# 1. the Containerfile's steps run as plain processes, in the same order: `npm ci --omit=dev --workspaces=false`
#    into an empty directory, gen/ and src/ copied beside it, then the image's CMD as an unprivileged user with
#    the image's environment (NODE_ENV=production) against a localnet; the HEALTHCHECK command must pass, a real
#    call must be answered, and SIGTERM must end the process cleanly;
# 2. the Kubernetes manifests against the Kubernetes JSON schemas (kubernetes-validate from PyPI, which carries
#    them; strict: unknown fields fail), and the kustomization's list against the files;
# 3. deploy/haproxy.cfg with the compose file's environment (`haproxy -c`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
node="$root/node_modules/.bin/node"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { "$node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
# The instruction lines of the Containerfile, to run what it says rather than a copy of it.
instr() { grep -E "^$1 " "$root/Containerfile"; }

echo "-- image steps as processes"
instr RUN | grep -q -- "npm ci --omit=dev --workspaces=false" || { echo "Containerfile: the npm ci step changed; update this script" >&2; exit 1; }
app="$work/app"; mkdir -p "$app"
cp "$root/package.json" "$root/package-lock.json" "$app/"
(cd "$app" && npm ci --omit=dev --workspaces=false --ignore-scripts --no-audit --no-fund --loglevel=error)
# (typescript is there: @solana/kit names it as a peer dependency.)
for dev in @solgate/localnet @solgate/client vitest @biomejs/biome; do
  if [ -e "$app/node_modules/$dev" ]; then echo "the production install has the dev package $dev" >&2; exit 1; fi
done
cp -r "$root/gen" "$root/src" "$app/"
echo "production node_modules: $(du -sh "$app/node_modules" | cut -f1)"

# A chain to point the gateway at: the localnet from the repo (the image never carries it).
rpc_port=$(free_port)
LOCALNET_PORT=$rpc_port LOCALNET_TRAFFIC=0 LOCALNET_WORLD=0 "$node" "$root/packages/localnet/src/main.ts" >"$work/localnet.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do
  curl -sf -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"getHealth"}' "http://127.0.0.1:$rpc_port" >/dev/null && break
  sleep 0.25
done

port=$(free_port); metrics=$(free_port)
key=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
# The image's ENV lines, then what a deployment sets. As root, drop to an unprivileged user as `USER node` does.
run_as=()
if [ "$(id -u)" = 0 ]; then run_as=(setpriv --reuid=65534 --regid=65534 --clear-groups); chmod -R a+rX "$work"; fi
(cd "$app" && exec env -i PATH="$PATH" HOME=/nonexistent NODE_ENV=production HOST=127.0.0.1 PORT="$port" \
  METRICS_HOST=127.0.0.1 METRICS_PORT="$metrics" SOLGATE_RPC_URL="http://127.0.0.1:$rpc_port" SOLGATE_API_KEYS="$key" \
  "${run_as[@]}" "$node" src/main.ts) >"$work/gateway.log" 2>&1 &
gateway=$!; pids+=($gateway)
health=$(grep -A1 "^HEALTHCHECK " "$root/Containerfile" | grep -o 'fetch(.*exit(1))' | head -n 1)
health=${health//\\\"/\"}
[ -n "$health" ] || { echo "Containerfile: no HEALTHCHECK fetch found" >&2; exit 1; }
ok=""
for _ in $(seq 1 120); do
  if PORT=$port "$node" -e "$health" 2>/dev/null; then ok=1; break; fi
  kill -0 "$gateway" 2>/dev/null || break
  sleep 0.25
done
[ -n "$ok" ] || { cat "$work/gateway.log"; echo "the image's HEALTHCHECK never passed" >&2; exit 1; }
echo "HEALTHCHECK passes"
fees=$(curl -sf -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/localnet/network/fees" || curl -sf -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/mainnet/network/fees" || true)
if [ -z "$fees" ]; then
  fees=$(curl -sf -H "Authorization: Bearer $key" -H 'content-type: application/json' -d '{}' "http://127.0.0.1:$port/solgate.v1.FeeService/GetFees")
fi
echo "$fees" | grep -q '"baseFee\|"priority\|"levels' || { echo "no fees answer: $fees" >&2; exit 1; }
echo "a real call is answered"
kill -TERM "$gateway"
rc=0; wait "$gateway" || rc=$?
[ "$rc" = 0 ] || { cat "$work/gateway.log"; echo "the gateway exited $rc on SIGTERM" >&2; exit 1; }
echo "SIGTERM: clean exit"

echo "-- Kubernetes manifests against the schemas"
version=1.37.0
venv="${XDG_CACHE_HOME:-$HOME/.cache}/solgate/kubernetes-validate-$version"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "kubernetes-validate==$version"
fi
k8s="$root/deploy/kubernetes"
listed=$(sed -n '/^resources:/,/^[a-z]/p' "$k8s/kustomization.yaml" | grep -o '[a-z-]*\.yaml' | sort)
present=$(cd "$k8s" && ls *.yaml | grep -v kustomization.yaml | sort)
[ "$listed" = "$present" ] || { echo "kustomization.yaml lists: $listed; the folder has: $present" >&2; exit 1; }
"$venv/bin/kubernetes-validate" --strict --kubernetes-version 1.34 $(printf "$k8s/%s " $present)

echo "-- HAProxy configuration, with the compose file's environment"
SOLGATE_FRONT=0.0.0.0:8080 SOLGATE_GATEWAY_1=gateway1:8080 SOLGATE_GATEWAY_2=gateway2:8080 SOLGATE_GATEWAY_3=gateway3:8080 \
  haproxy -c -q -f "$root/deploy/haproxy.cfg"
echo "deploy checks passed"
