/**
 * FeeService.WatchFees benchmark, against the gateway as deployed (`node src/main.ts`, its own process,
 * default settings) on a real localnet with priority-fee traffic started for the run:
 *  1. freshness: for each estimate a watcher receives, the time since the localnet announced its slot
 *     (slotSubscribe on the localnet's WebSocket, read by this process too); target <= 50 ms;
 *  2. memory: 10,000 open WatchFees streams over 20 HTTP/2 connections (binary gRPC, the lean path):
 *     the gateway's RSS before any stream and with them (target < 500 MB), and that every stream still
 *     gets the estimates (events delivered per stream over a window).
 * Run: npx node test/bench/push-bench.ts [--streams 10000] [--slot-ms 400] [--only freshness,memory] [--geyser on|off]
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
import type { Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createSolanaRpcSubscriptions } from "@solana/kit";
import { startLocalnet } from "@solgate/localnet";
import { FeeService } from "../../gen/solgate/v1/fee_service_pb.js";

const { values: args } = parseArgs({
  options: {
    streams: { type: "string", default: "10000" },
    "slot-ms": { type: "string", default: "400" },
    only: { type: "string" },
    geyser: { type: "string", default: "on" },
  },
});
const PARTS = new Set((args.only ?? "freshness,memory").split(","));
const STREAMS = Number(args.streams);
const API_KEY = "bench-key-0123456789abcdef";
const headers = { Authorization: `Bearer ${API_KEY}` };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const localnet = await startLocalnet({ slotMs: Number(args["slot-ms"]), traffic: true, world: false });
const cleanups: (() => unknown)[] = [() => localnet.stop()];

/** The gateway as deployed, in its own process, so that its RSS is its own. */
async function spawnGateway(): Promise<{ child: ChildProcess; port: number }> {
  const main = fileURLToPath(new URL("../../src/main.ts", import.meta.url));
  const child = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      SOLGATE_RPC_URL: localnet.rpcUrl,
      SOLGATE_CHAIN: "bench",
      SOLGATE_API_KEYS: API_KEY,
      // The localnet's Geyser stream (--geyser on, the default): new blocks read at once; off: polling alone.
      ...(args.geyser === "off" ? {} : { SOLGATE_GEYSER_URL: localnet.geyserUrl }),
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  cleanups.push(() => child.kill("SIGTERM"));
  return new Promise((resolve, reject) => {
    let buffered: string | undefined = "";
    child.once("exit", (code) => reject(new Error(`gateway exited with ${code}`)));
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (text: string) => {
      if (buffered === undefined) return; // listening: the rest of its log is read and dropped
      buffered += text;
      for (const line of buffered.split("\n")) {
        if (!line.includes("solgate listening")) continue;
        buffered = undefined;
        resolve({ child, port: (JSON.parse(line) as { port: number }).port });
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

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

const gateway = await spawnGateway();
const baseUrl = `http://127.0.0.1:${gateway.port}`;

async function freshness(): Promise<void> {
  const announced = new Map<bigint, number>();
  const abort = new AbortController();
  const subscriptions = createSolanaRpcSubscriptions(localnet.wsUrl);
  const slots = await subscriptions.slotNotifications().subscribe({ abortSignal: abort.signal });
  void (async () => {
    for await (const n of slots) announced.set(n.slot, performance.now());
  })().catch(() => {});
  const client = createClient(FeeService, createGrpcTransport({ baseUrl }));
  const delays: number[] = [];
  let first = true;
  const until = performance.now() + 30_000;
  try {
    for await (const res of client.watchFees({}, { headers, signal: abort.signal })) {
      const at = performance.now();
      if (res.event.case !== "estimate") continue;
      if (first) {
        first = false; // the current estimate, sent at once: not a new block's
        continue;
      }
      const slotAt = announced.get(res.event.value.slot);
      if (slotAt !== undefined) delays.push(at - slotAt);
      if (at > until) break;
    }
  } finally {
    abort.abort();
  }
  delays.sort((a, b) => a - b);
  console.log(
    `\n1. Freshness over 30 s: ${delays.length} estimates; time from the localnet announcing the slot to the watcher ` +
      `receiving its estimate: median ${percentile(delays, 50).toFixed(0)} ms, p90 ${percentile(delays, 90).toFixed(0)} ms, ` +
      `max ${delays[delays.length - 1]?.toFixed(0)} ms (target <= 50 ms)`,
  );
}

async function memory(): Promise<void> {
  const clients: Client<typeof FeeService>[] = Array.from({ length: 20 }, () =>
    createClient(FeeService, createGrpcTransport({ baseUrl })),
  );
  const abort = new AbortController();
  const received = new Uint32Array(STREAMS);
  const streams: Promise<void>[] = [];
  let opened = 0;
  const baseline = rssMb(gateway.child.pid!);
  const t = performance.now();
  await new Promise<void>((allOpen) => {
    for (let i = 0; i < STREAMS; i++) {
      streams.push(
        (async () => {
          try {
            for await (const res of clients[i % clients.length].watchFees({}, { headers, signal: abort.signal })) {
              if (res.event.case === "estimate" && received[i]++ === 0 && ++opened === STREAMS) allOpen();
            }
          } catch {
            // aborted at the end
          }
        })(),
      );
    }
  });
  const openedMs = performance.now() - t;
  await sleep(2000);
  const before = received.reduce((a, b) => a + b, 0);
  await sleep(10_000);
  const window = received.reduce((a, b) => a + b, 0) - before;
  let live = 0;
  for (const n of received) if (n > 1) live++;
  const rss = rssMb(gateway.child.pid!);
  console.log(
    `\n2. ${STREAMS} WatchFees streams (opened in ${(openedMs / 1000).toFixed(1)} s): gateway RSS ${rss.toFixed(0)} MB ` +
      `(before any stream ${baseline.toFixed(0)} MB; ${(((rss - baseline) * 1024) / STREAMS).toFixed(1)} KB per stream); ` +
      `${window} estimates delivered in 10 s (${(window / STREAMS).toFixed(1)} per stream); ` +
      `${live} of ${STREAMS} streams got more than the first (target: RSS < 500 MB)`,
  );
  abort.abort();
  await Promise.all(streams);
}

try {
  if (PARTS.has("freshness")) await freshness();
  if (PARTS.has("memory")) await memory();
} finally {
  for (const fn of cleanups.reverse()) await fn();
}
