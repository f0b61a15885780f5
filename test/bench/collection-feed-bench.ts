/**
 * The collection feed through the gateway as deployed (its own process, so its RSS is its own) on the localnet
 * world (a 1,000-member collection), fed by real traffic: a member of the collection moved back and forth with
 * signed SPL Token transfers (test/collections/feed/member-transfers.ts). For each mode (the feed following
 * blocks from the Geyser stream, then with getBlock alone: the baseline):
 *  1. upstream JSON-RPC calls/s (the gateway's own counters) with 1 WatchCollection stream, then with N
 *     (default 10,000): flat as watchers grow means a ratio near 1;
 *  2. the gateway's RSS before any stream and with N open gRPC WatchCollection streams (target < 500 MB);
 *  3. the delay from the block to a stream client while the N streams are open: for each transfer's event at
 *     each of 10 probe streams (opened last, so served last in each fan-out), from the localnet producing the
 *     block (the `created_at` of its Geyser block meta at processed, wall clock) to the probe receiving the event
 *     (target p99 <= 1 s with Geyser). The other N - 10 streams are held by a child process (so that their
 *     decoding does not delay the probes), which reports how many got every event.
 *
 *   npx node test/bench/collection-feed-bench.ts [--watchers 10000] [--seconds 10] [--transfers 20] [--modes geyser,getblock]
 */
import { fork, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import type { Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { CommitmentLevel, Geyser, SubscribeRequestSchema } from "../../gen/geyser/geyser_pb.js";
import { CollectionService } from "../../gen/solgate/v1/collection_service_pb.js";
import { startCollectionWorld } from "../collections/collection-world.ts";
import { createMemberCourier } from "../collections/feed/member-transfers.ts";

const { values: args } = parseArgs({
  options: {
    watchers: { type: "string", default: "10000" },
    seconds: { type: "string", default: "10" },
    transfers: { type: "string", default: "20" },
    modes: { type: "string", default: "geyser,getblock" },
  },
});
const WATCHERS = Number(args.watchers);
const SECONDS = Number(args.seconds);
const TRANSFERS = Number(args.transfers);
const API_KEY = "bench-key-0123456789abcdef";
const headers = { Authorization: `Bearer ${API_KEY}` };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanups: (() => Promise<unknown> | unknown)[] = [];

const PROBES = Math.min(10, WATCHERS);

// The child that holds the streams that are not probes: it counts what each receives, and says so when asked.
if (process.env.COLLECTION_BENCH_HOLDER !== undefined) {
  const { baseUrl, address, streams } = JSON.parse(process.env.COLLECTION_BENCH_HOLDER) as {
    baseUrl: string;
    address: string;
    streams: number;
  };
  const clients = Array.from({ length: 20 }, () => createClient(CollectionService, createGrpcTransport({ baseUrl })));
  const counts = new Uint32Array(streams);
  const abort = new AbortController();
  for (let i = 0; i < streams; i++)
    void (async () => {
      const watch = clients[i % clients.length]!.watchCollection(
        { chain: "bench", address },
        { headers, signal: abort.signal },
      );
      for await (const res of watch) if (res.message.case === "event") counts[i]!++;
    })().catch(() => {});
  process.on("message", (want: number) => {
    let events = 0;
    let complete = 0;
    for (const n of counts) {
      events += n;
      if (n >= want) complete++;
    }
    process.send!({ events, complete });
  });
  await new Promise(() => {});
}

const world = await startCollectionWorld(1000);
cleanups.push(() => world.stop());
const collection = world.generated.mint;
const courier = await createMemberCourier(world.localnet.rpcUrl, world.manifest, 0);

// When the localnet produced each block, as it states it (processed block metas' created_at, wall clock).
const produced = new Map<bigint, number>();
const geyserAbort = new AbortController();
cleanups.push(() => geyserAbort.abort());
{
  const geyser = createClient(Geyser, createGrpcTransport({ baseUrl: world.localnet.geyserUrl! }));
  async function* request() {
    yield create(SubscribeRequestSchema, { commitment: CommitmentLevel.PROCESSED, blocksMeta: { meta: {} } });
    await new Promise((resolve) => geyserAbort.signal.addEventListener("abort", resolve));
  }
  void (async () => {
    for await (const update of geyser.subscribe(request(), { signal: geyserAbort.signal }))
      if (update.updateOneof.case === "blockMeta" && update.createdAt !== undefined)
        produced.set(update.updateOneof.value.slot, timestampMs(update.createdAt));
  })().catch(() => {});
}

interface Gateway {
  child: ChildProcess;
  port: number;
  metricsPort: number;
}

async function spawnGateway(geyser: boolean): Promise<Gateway> {
  const main = fileURLToPath(new URL("../../src/main.ts", import.meta.url));
  const child = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      SOLGATE_RPC_URL: world.localnet.rpcUrl,
      SOLGATE_WS_URL: world.localnet.wsUrl,
      SOLGATE_CHAIN: "bench",
      SOLGATE_API_KEYS: API_KEY,
      // Heartbeats would be 10,000 messages every period: the streams' opening is seen by their headers instead.
      SOLGATE_FEED_HEARTBEAT_MS: "300000",
      ...(geyser ? { SOLGATE_GEYSER_URL: world.localnet.geyserUrl! } : {}),
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = () => {
    child.kill("SIGTERM");
    return exited;
  };
  cleanups.push(stop);
  return new Promise((resolve, reject) => {
    let buffered: string | undefined = "";
    child.once("exit", (code) => reject(new Error(`gateway exited with ${code}`)));
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (text: string) => {
      if (buffered === undefined) return;
      buffered += text;
      for (const line of buffered.split("\n")) {
        if (!line.includes("solgate listening")) continue;
        buffered = undefined;
        const event = JSON.parse(line) as { port: number; metricsPort: number };
        resolve({ child, port: event.port, metricsPort: event.metricsPort });
        return;
      }
    });
  });
}

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))!;
  return Number(line.replace(/\D+/g, "")) / 1024;
}

async function upstreamCalls(gateway: Gateway): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
  const byMethod = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^solgate_upstream_attempts_started_total\{[^}]*method="([^"]+)"[^}]*\} (\d+)/.exec(line);
    if (match) byMethod.set(match[1]!, (byMethod.get(match[1]!) ?? 0) + Number(match[2]));
  }
  return byMethod;
}

async function callRate(gateway: Gateway): Promise<{ total: number; byMethod: string }> {
  const before = await upstreamCalls(gateway);
  const from = performance.now();
  await sleep(SECONDS * 1000);
  const after = await upstreamCalls(gateway);
  const elapsed = (performance.now() - from) / 1000;
  const rates = [...after]
    .map(([method, n]) => [method, (n - (before.get(method) ?? 0)) / elapsed] as const)
    .filter(([, rate]) => rate > 0)
    .sort((a, b) => b[1] - a[1]);
  return {
    total: rates.reduce((sum, [, rate]) => sum + rate, 0),
    byMethod: rates.map(([method, rate]) => `${method} ${rate.toFixed(2)}`).join(", ") || "none",
  };
}

async function openStreams(gateway: Gateway): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
  let open = 0;
  for (const line of text.split("\n")) {
    const match = /^solgate_open_streams\{[^}]*method="WatchCollection"[^}]*\} (\d+)/.exec(line);
    if (match) open += Number(match[1]);
  }
  return open;
}

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

interface ModeResult {
  mode: string;
  rssBefore: number;
  rssWith: number;
  oneCalls: { total: number; byMethod: string };
  manyCalls: { total: number; byMethod: string };
  delays: number[];
  received: number;
}

async function run(mode: string): Promise<ModeResult> {
  const gateway = await spawnGateway(mode === "geyser");
  const baseUrl = `http://127.0.0.1:${gateway.port}`;
  const clients: Client<typeof CollectionService>[] = Array.from({ length: 20 }, () =>
    createClient(CollectionService, createGrpcTransport({ baseUrl })),
  );
  const abort = new AbortController();
  // Per stream: each event's slot and when it arrived (wall clock).
  const arrivals: [bigint, number][][] = [];
  const streams: Promise<void>[] = [];
  const openStream = (i: number) => {
    const mine: [bigint, number][] = [];
    arrivals.push(mine);
    streams.push(
      (async () => {
        try {
          const watch = clients[i % clients.length]!.watchCollection(
            { chain: "bench", address: collection },
            { headers, signal: abort.signal },
          );
          for await (const res of watch) {
            if (res.message.case === "event") mine.push([res.message.value.slot, Date.now()]);
          }
        } catch {
          // aborted at the end
        }
      })(),
    );
  };
  // Open as the gateway counts them (its open-streams gauge), a first message being minutes away.
  const allOpen = async (n: number) => {
    const deadline = Date.now() + 120_000;
    while ((await openStreams(gateway)) < n && Date.now() < deadline) await sleep(200);
  };

  const rssBefore = rssMb(gateway.child.pid!);
  openStream(0);
  await allOpen(1);
  // Past the collection's first read and the first block reads.
  await sleep(5000);
  const oneCalls = await callRate(gateway);
  const holder = fork(fileURLToPath(import.meta.url), [], {
    env: {
      ...process.env,
      COLLECTION_BENCH_HOLDER: JSON.stringify({ baseUrl, address: collection, streams: WATCHERS - PROBES }),
    },
  });
  const holderExited = new Promise((resolve) => holder.once("exit", resolve));
  await allOpen(WATCHERS - PROBES + 1);
  for (let i = 1; i < PROBES; i++) openStream(i);
  await allOpen(WATCHERS);
  await sleep(2000);
  const rssWith = rssMb(gateway.child.pid!);
  const manyCalls = await callRate(gateway);

  for (let t = 0; t < TRANSFERS; t++) {
    await courier.move();
    await sleep(200);
  }
  const asked = () =>
    new Promise<{ events: number; complete: number }>((resolve) => {
      holder.once("message", (answer) => resolve(answer as { events: number; complete: number }));
      holder.send(TRANSFERS);
    });
  const deadline = Date.now() + 60_000;
  let held = await asked();
  while ((arrivals.some((a) => a.length < TRANSFERS) || held.complete < WATCHERS - PROBES) && Date.now() < deadline) {
    await sleep(500);
    held = await asked();
  }
  holder.kill("SIGTERM");
  await holderExited;
  const delays: number[] = [];
  let received = held.events;
  for (const mine of arrivals)
    for (const [slot, at] of mine) {
      received++;
      const made = produced.get(slot);
      if (made !== undefined) delays.push(at - made);
    }
  delays.sort((a, b) => a - b);
  abort.abort();
  await Promise.all(streams);
  gateway.child.kill("SIGTERM");
  return { mode, rssBefore, rssWith, oneCalls, manyCalls, delays, received };
}

const results: ModeResult[] = [];
for (const mode of args.modes!.split(",")) results.push(await run(mode));

console.log(
  `collection feed through the gateway process, ${WATCHERS} gRPC WatchCollection streams of one collection ` +
    `(localnet world, 1,000 members), ${TRANSFERS} real member transfers`,
);
for (const r of results) {
  const n = r.delays.length;
  console.log(
    `\n[${r.mode}] RSS ${r.rssBefore.toFixed(0)} MB before any stream, ${r.rssWith.toFixed(0)} MB with ${WATCHERS} ` +
      `(${(((r.rssWith - r.rssBefore) * 1024) / WATCHERS).toFixed(1)} KB per stream; target < 500 MB)`,
  );
  console.log(
    `[${r.mode}] upstream calls/s: 1 stream ${r.oneCalls.total.toFixed(2)} (${r.oneCalls.byMethod}); ` +
      `${WATCHERS} streams ${r.manyCalls.total.toFixed(2)} (${r.manyCalls.byMethod}); ratio ${(r.manyCalls.total / Math.max(0.01, r.oneCalls.total)).toFixed(2)}`,
  );
  console.log(
    `[${r.mode}] block -> probe stream (${PROBES} probes, ${WATCHERS} streams open): ${r.received}/${WATCHERS * TRANSFERS} events received by all streams; ` +
      `p50 ${percentile(r.delays, 50).toFixed(0)} ms, p99 ${percentile(r.delays, 99).toFixed(0)} ms, ` +
      `max ${(r.delays[n - 1] ?? Number.NaN).toFixed(0)} ms (from the block's production)`,
  );
}
const geyser = results.find((r) => r.mode === "geyser");
const polled = results.find((r) => r.mode === "getblock");
if (geyser !== undefined && polled !== undefined)
  console.log(
    `\np99 Geyser / getBlock: ${(percentile(geyser.delays, 99) / percentile(polled.delays, 99)).toFixed(2)} ` +
      `(${percentile(geyser.delays, 99).toFixed(0)} vs ${percentile(polled.delays, 99).toFixed(0)} ms; target with Geyser <= 1,000 ms)`,
  );
for (const fn of cleanups.reverse()) await fn();
process.exit(0);
