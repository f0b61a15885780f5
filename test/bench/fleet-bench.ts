/**
 * The fleet benchmark, of real processes: gateways sharing a real Redis, behind HAProxy with
 * deploy/haproxy.cfg, over one standalone localnet. Every figure is a ratio against a baseline measured
 * in the same run:
 *  1. upstream calls per second with sends in flight, 3 replicas vs 1 (target <= 1.2);
 *  2. send-and-confirm latency, Redis store vs memory store, in alternating pairs (target <= 1.05);
 *  3. GetFees req/s through HAProxy to 3 replicas vs 1 replica direct, driven by h2load (Debian
 *     nghttp2-client), an external load generator;
 *  4. sends landed and expired under 50% drops with a random replica killed -9 (and restarted) every
 *     10 s (target: every unexpired send lands);
 *  5. with `--redis cluster|sentinel`: sends under 50% drops with the master of the chain's keys killed -9
 *     every 20 s (and restarted): landed / taken (target 100%), and the longest window of refused sends.
 * `--redis single|cluster|sentinel` picks the shared store (one redis-server; a 3+3 Redis Cluster; 1+1 with
 * 3 sentinels); row 1 then also runs 6 replicas.
 * Run: npx node test/bench/fleet-bench.ts [--redis single] [--minutes 2] [--only calls,latency,fees,kills,master-kills]
 */
import { execFile, execFileSync } from "node:child_process";
import { parseArgs } from "node:util";
import type { Signature } from "@solana/kit";
import { chainKeyPrefix } from "../../src/store/redis.ts";
import { FLEET_KEY, restSend, restStatus, startGatewayProcess, startHaproxy } from "../fleet/fleet-harness.ts";
import type { GatewayProcess } from "../fleet/fleet-harness.ts";
import { startRedisServer } from "../store/redis-server.ts";
import { startRedisCluster, startRedisSentinel } from "../store/redis-topologies.ts";
import type { RedisTopologyServer } from "../store/redis-topologies.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";

const { values: args } = parseArgs({
  options: {
    minutes: { type: "string", default: "2" },
    only: { type: "string", default: "calls,latency,fees,kills,master-kills" },
    redis: { type: "string", default: "single" },
    "latency-sends": { type: "string", default: "30" },
  },
});
const only = new Set(args.only.split(","));
const CHAIN = "fleet";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The shared store of this run, whatever its topology. */
async function startStore(
  kind: string,
): Promise<Pick<RedisTopologyServer, "env" | "flush" | "stop"> & Partial<RedisTopologyServer>> {
  if (kind === "cluster") return startRedisCluster();
  if (kind === "sentinel") return startRedisSentinel();
  if (kind !== "single") throw new Error(`--redis must be single, cluster or sentinel, got ${kind}`);
  const server = await startRedisServer({ appendonly: true });
  return {
    env: { SOLGATE_REDIS_URL: server.url },
    flush: () =>
      new Promise((resolve) => execFile("redis-cli", ["-p", String(server.port), "flushall"], () => resolve())),
    stop: () => server.stop(),
  };
}

const fixture: ChainFixture = await startChainFixture({ slotMs: 400, confirmSlots: 1, finalizeSlots: 8 });
const redis = await startStore(args.redis);
/** Gateways share the store unless started with `shared = false`. */
const SHARED = true;
const running: GatewayProcess[] = [];

async function gateway(shared: boolean, port?: number): Promise<GatewayProcess> {
  const g = await startGatewayProcess({
    rpcUrl: fixture.localnet.rpcUrl,
    wsUrl: fixture.localnet.wsUrl,
    chain: CHAIN,
    ...(port === undefined ? {} : { port }),
    extra: { SOLGATE_TX_REBROADCAST_MS: "2000", ...(shared ? redis.env : {}) },
  });
  running.push(g);
  return g;
}

async function stopAll(): Promise<void> {
  await Promise.all(running.splice(0).map((g) => g.kill()));
  await redis.flush();
}

/** Upstream calls started by these gateways so far (their Prometheus counters). */
async function upstreamCalls(gateways: GatewayProcess[]): Promise<number> {
  let total = 0;
  for (const g of gateways) {
    const text = await (await fetch(`http://127.0.0.1:${g.metricsPort}/metrics`)).text();
    for (const line of text.split("\n")) {
      if (line.startsWith("solgate_upstream_attempts_started_total{")) total += Number(line.split(" ").at(-1));
    }
  }
  return total;
}

async function transfers(count: number) {
  const payer = await fixture.funded(100);
  const blockhash = await fixture.latestBlockhash();
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      transferTransaction({ payer, blockhash, lamports: 1_000_000n + BigInt(i) }),
    ),
  );
}

/** Calls per second over `seconds` while `inFlight` sends (never landing: dropped) are followed. */
async function callRate(gateways: GatewayProcess[], sendVia: string[], seconds: number): Promise<number> {
  await fixture.localnet.control({ dropRate: 1 });
  const txs = await transfers(50);
  await Promise.all(txs.map((t, i) => restSend(sendVia[i % sendVia.length], CHAIN, t.wire)));
  await sleep(2000);
  const before = await upstreamCalls(gateways);
  await sleep(seconds * 1000);
  const after = await upstreamCalls(gateways);
  await fixture.localnet.control({ dropRate: 0 });
  return (after - before) / seconds;
}

if (only.has("calls")) {
  const rate = async (replicas: number) => {
    const gateways = await Promise.all(Array.from({ length: replicas }, () => gateway(SHARED)));
    const r = await callRate(
      gateways,
      gateways.map((g) => g.url),
      10,
    );
    await stopAll();
    return r;
  };
  const single = await rate(1);
  const three = await rate(3);
  const six = args.redis === "single" ? undefined : await rate(6);
  const ratio = (x: number) =>
    `${(x / single).toFixed(2)} ${x / single <= 1.2 ? "(at target <= 1.2)" : "(OVER the 1.2 target)"}`;
  console.log(
    `upstream calls/s with 50 sends in flight (redis ${args.redis}): 1 replica ${single.toFixed(1)}, 3 replicas ${three.toFixed(1)}, ratio ${ratio(three)}` +
      (six === undefined ? "" : `; 6 replicas ${six.toFixed(1)}, ratio ${ratio(six)}`),
  );
}

if (only.has("latency")) {
  const withRedis = await gateway(SHARED);
  const inMemory = await gateway(false);
  const n = Number(args["latency-sends"]);
  const txs = await transfers(2 * n);
  const times: { redis: number[]; memory: number[] } = { redis: [], memory: [] };
  for (let i = 0; i < n; i++) {
    // Alternate which goes first, so that neither always meets the same phase of a slot.
    const order = i % 2 === 0 ? (["redis", "memory"] as const) : (["memory", "redis"] as const);
    for (const which of order) {
      const tx = txs[2 * i + (which === "redis" ? 0 : 1)];
      const url = which === "redis" ? withRedis.url : inMemory.url;
      const started = performance.now();
      const res = await fetch(`${url}/v1/${CHAIN}/transactions/send`, {
        method: "POST",
        headers: { authorization: `Bearer ${FLEET_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ transaction: Buffer.from(tx.wire).toString("base64"), confirm: true }),
      });
      const body = (await res.json()) as { status?: string; code?: string };
      // At least confirmed: a chain that finalized first makes `finalized` a right answer too.
      if (res.status !== 200 || (body.status !== "confirmed" && body.status !== "finalized"))
        throw new Error(`a confirm-and-wait send answered ${res.status} ${JSON.stringify(body)}`);
      times[which].push(performance.now() - started);
    }
  }
  await stopAll();
  const r = median(times.redis);
  const m = median(times.memory);
  console.log(
    `send-and-confirm median: Redis store ${r.toFixed(0)} ms, memory store ${m.toFixed(0)} ms, ratio ${(r / m).toFixed(3)} (target <= 1.05)`,
  );
}

/** GetFees over REST (h2c) with h2load: requests per second. */
function h2loadRate(url: string): number {
  const out = execFileSync(
    "h2load",
    ["-c", "16", "-m", "4", "-D", "5", "-H", `authorization: Bearer ${FLEET_KEY}`, `${url}/v1/${CHAIN}/network/fees`],
    { encoding: "utf8" },
  );
  const match = /finished in [\d.]+s, ([\d.]+) req\/s/.exec(out);
  if (match === null) throw new Error(`h2load printed no rate:\n${out}`);
  return Number(match[1]);
}

if (only.has("fees")) {
  const three = [await gateway(SHARED), await gateway(SHARED), await gateway(SHARED)];
  const proxy = await startHaproxy(three.map((g) => g.port));
  const direct = h2loadRate(three[0].url);
  const proxied = h2loadRate(proxy.url);
  await proxy.stop();
  await stopAll();
  console.log(
    `GetFees (REST, h2c, h2load 16 connections): 1 replica direct ${direct.toFixed(0)} req/s, 3 replicas through HAProxy ${proxied.toFixed(0)} req/s, ratio ${(proxied / direct).toFixed(2)}`,
  );
}

if (only.has("kills")) {
  const minutes = Number(args.minutes);
  const three = [await gateway(SHARED), await gateway(SHARED), await gateway(SHARED)];
  const proxy = await startHaproxy(three.map((g) => g.port));
  await fixture.localnet.control({ dropRate: 0.5 });
  const sent: string[] = [];
  const ends = Date.now() + minutes * 60_000;
  let kills = 0;
  let refused = 0;
  const killer = (async () => {
    while (Date.now() < ends) {
      await sleep(10_000);
      const i = Math.floor(Math.random() * three.length);
      const victim = three[i];
      await victim.kill();
      kills++;
      three[i] = await gateway(SHARED, victim.port);
    }
  })();
  while (Date.now() < ends) {
    const [tx] = await transfers(1);
    const answer = await restSend(proxy.url, CHAIN, tx.wire).catch(() => undefined);
    if (answer?.httpStatus === 200) sent.push(tx.signature);
    else refused++;
    await sleep(200);
  }
  await killer;
  // Every send is followed to its end: a blockhash lives about 60 s at 400 ms slots.
  const final = new Map<string, string>();
  const deadline = Date.now() + 90_000;
  while (final.size < sent.length && Date.now() < deadline) {
    for (const s of sent.filter((x) => !final.has(x))) {
      const a = await restStatus(proxy.url, CHAIN, s).catch(() => undefined);
      if (a?.ok && ["finalized", "failed", "expired"].includes(a.status)) final.set(s, a.status);
    }
    await sleep(1000);
  }
  const { value } = await fixture.upstream.rpc
    .getSignatureStatuses(sent as Signature[], { searchTransactionHistory: true })
    .send();
  const landed = value.filter((v) => v !== null).length;
  const expired = [...final.values()].filter((s) => s === "expired").length;
  await proxy.stop();
  await stopAll();
  console.log(
    `kills: ${minutes} min, ${kills} replicas killed -9, ${sent.length} sends taken (${refused} refused): ${landed} landed, ${expired} expired, ${sent.length - final.size} unsettled (target: all land)`,
  );
}

if (only.has("master-kills") && redis.killMaster !== undefined) {
  const killMaster = redis.killMaster;
  const minutes = Number(args.minutes);
  const three = [await gateway(SHARED), await gateway(SHARED), await gateway(SHARED)];
  const proxy = await startHaproxy(three.map((g) => g.port));
  await fixture.localnet.control({ dropRate: 0.5 });
  const ends = Date.now() + minutes * 60_000;
  let kills = 0;
  const killer = (async () => {
    while (Date.now() + 20_000 < ends) {
      await sleep(20_000);
      await killMaster(`${chainKeyPrefix(CHAIN)}active`);
      kills++;
    }
  })();
  // A client that sends one transfer every 200 ms and retries a refused one (same bytes) every 250 ms.
  const taken: string[] = [];
  let refusals = 0;
  let longestRefusedMs = 0;
  while (Date.now() < ends) {
    const [tx] = await transfers(1);
    const firstRefusedAt = performance.now();
    for (let attempt = 0; ; attempt++) {
      const answer = await restSend(proxy.url, CHAIN, tx.wire).catch(() => undefined);
      if (answer?.httpStatus === 200) {
        taken.push(tx.signature);
        if (attempt > 0) longestRefusedMs = Math.max(longestRefusedMs, performance.now() - firstRefusedAt);
        break;
      }
      if (answer !== undefined && answer.httpStatus !== 503)
        throw new Error(`a send answered ${answer.httpStatus} ${JSON.stringify(answer.body)}`);
      refusals++;
      await sleep(250);
    }
    await sleep(200);
  }
  await killer;
  const final = new Map<string, string>();
  const deadline = Date.now() + 120_000;
  while (final.size < taken.length && Date.now() < deadline) {
    for (const s of taken.filter((x) => !final.has(x))) {
      const a = await restStatus(proxy.url, CHAIN, s).catch(() => undefined);
      if (a?.ok && ["finalized", "failed", "expired"].includes(a.status)) final.set(s, a.status);
    }
    await sleep(1000);
  }
  const { value } = await fixture.upstream.rpc
    .getSignatureStatuses(taken as Signature[], { searchTransactionHistory: true })
    .send();
  const landed = value.filter((v) => v !== null).length;
  await proxy.stop();
  await stopAll();
  console.log(
    `master kills (redis ${args.redis}): ${minutes} min, ${kills} masters killed -9, ${taken.length} sends taken, ${refusals} refusals retried: ` +
      `landed / taken ${landed}/${taken.length} = ${((100 * landed) / Math.max(1, taken.length)).toFixed(1)}% (target 100%), ` +
      `longest window of refused sends ${(longestRefusedMs / 1000).toFixed(1)} s`,
  );
}

await redis.stop();
await fixture.stop();
