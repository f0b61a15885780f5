/**
 * The fleet benchmark, of real processes: gateways sharing a real Redis, behind HAProxy with
 * deploy/haproxy.cfg, over one standalone localnet. Every figure is a ratio against a baseline measured
 * in the same run:
 *  1. upstream calls per second with sends in flight, 3 replicas vs 1 (target <= 1.2);
 *  2. send-and-confirm latency, Redis store vs memory store, in alternating pairs (target <= 1.05);
 *  3. GetFees req/s through HAProxy to 3 replicas vs 1 replica direct, driven by h2load (Debian
 *     nghttp2-client), an external load generator;
 *  4. sends landed and expired under 50% drops with a random replica killed -9 (and restarted) every
 *     10 s (target: every unexpired send lands).
 * Run: npx node test/bench/fleet-bench.ts [--minutes 2] [--only calls,latency,fees,kills]
 */
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";
import type { Signature } from "@solana/kit";
import { connectRedis } from "../../src/store/redis.ts";
import { FLEET_KEY, restSend, restStatus, startGatewayProcess, startHaproxy } from "../fleet/fleet-harness.ts";
import type { GatewayProcess } from "../fleet/fleet-harness.ts";
import { startRedisServer } from "../store/redis-server.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";

const { values: args } = parseArgs({
  options: {
    minutes: { type: "string", default: "2" },
    only: { type: "string", default: "calls,latency,fees,kills" },
    "latency-sends": { type: "string", default: "30" },
  },
});
const only = new Set(args.only.split(","));
const CHAIN = "fleet";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const fixture: ChainFixture = await startChainFixture({ slotMs: 400, confirmSlots: 1, finalizeSlots: 8 });
const redis = await startRedisServer({ appendonly: true });
const running: GatewayProcess[] = [];

async function gateway(redisUrl: string | undefined, port?: number): Promise<GatewayProcess> {
  const g = await startGatewayProcess({
    rpcUrl: fixture.localnet.rpcUrl,
    wsUrl: fixture.localnet.wsUrl,
    chain: CHAIN,
    ...(redisUrl === undefined ? {} : { redisUrl }),
    ...(port === undefined ? {} : { port }),
    extra: { SOLGATE_TX_REBROADCAST_MS: "2000" },
  });
  running.push(g);
  return g;
}

async function stopAll(): Promise<void> {
  await Promise.all(running.splice(0).map((g) => g.kill()));
  const probe = await connectRedis({ topology: { kind: "single", url: redis.url } });
  await probe.client.flushAll();
  await probe.close();
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
  const one = await gateway(redis.url);
  const single = await callRate([one], [one.url], 10);
  await stopAll();
  const three = [await gateway(redis.url), await gateway(redis.url), await gateway(redis.url)];
  const fleet = await callRate(
    three,
    three.map((g) => g.url),
    10,
  );
  await stopAll();
  console.log(
    `upstream calls/s with 50 sends in flight: 1 replica ${single.toFixed(1)}, 3 replicas ${fleet.toFixed(1)}, ratio ${(fleet / single).toFixed(2)} (target <= 1.2)`,
  );
}

if (only.has("latency")) {
  const withRedis = await gateway(redis.url);
  const inMemory = await gateway(undefined);
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
  const three = [await gateway(redis.url), await gateway(redis.url), await gateway(redis.url)];
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
  const three = [await gateway(redis.url), await gateway(redis.url), await gateway(redis.url)];
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
      three[i] = await gateway(redis.url, victim.port);
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

await redis.stop();
await fixture.stop();
