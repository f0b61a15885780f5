/**
 * FeeService.WatchFees benchmark, against the gateway as deployed (`node src/main.ts`, its own process,
 * default settings) on a real localnet with priority-fee traffic started for the run:
 *  1. freshness: for each estimate a watcher receives, the time since the localnet announced its slot
 *     (slotSubscribe on the localnet's WebSocket, read by this process too); target <= 50 ms;
 *     The baseline is the localnet producing the block, as it states it (its Geyser `created_at`); the PubSub
 *     slotNotification's arrival is printed beside it;
 *  2. memory: 10,000 open WatchFees streams over 20 HTTP/2 connections (binary gRPC, the lean path):
 *     the gateway's RSS before any stream and with them (target < 500 MB), and that every stream still
 *     gets the estimates (events delivered per stream over a window);
 *  3. calls: upstream JSON-RPC calls per second the gateway makes (its own Prometheus counters, by method),
 *     idle and with 10,000 watchers open (WatchFees streams over 20 HTTP/2 connections); target <= 1 with Geyser on.
 *     Then, with those open, 1,000 WatchStatus streams on 20 sends made through Solgate that the localnet drops
 *     (so they stay in flight): what status polling and rebroadcasts add, by method.
 * Each part runs against a fresh gateway per Geyser setting: `--geyser both` runs it off, then on (the baseline
 * and the figure in one run).
 * Run: npx node test/bench/push-bench.ts [--streams 10000] [--slot-ms 400] [--only freshness,memory,calls] [--geyser on|off|both]
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
import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { CommitmentLevel, Geyser, SubscribeRequestSchema } from "../../gen/geyser/geyser_pb.js";
import { FeeService } from "../../gen/solgate/v1/fee_service_pb.js";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { createSolanaRpc, generateKeyPairSigner } from "@solana/kit";
import type { Signature } from "@solana/kit";
import { transferTransaction } from "../transactions/chain-fixture.ts";

const { values: args } = parseArgs({
  options: {
    streams: { type: "string", default: "10000" },
    "slot-ms": { type: "string", default: "400" },
    only: { type: "string" },
    geyser: { type: "string", default: "on" },
  },
});
const PARTS = new Set((args.only ?? "freshness,memory,calls").split(","));
const STREAMS = Number(args.streams);
const API_KEY = "bench-key-0123456789abcdef";
const headers = { Authorization: `Bearer ${API_KEY}` };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const localnet = await startLocalnet({ slotMs: Number(args["slot-ms"]), traffic: true, world: false });
const cleanups: (() => unknown)[] = [() => localnet.stop()];

interface Gateway {
  child: ChildProcess;
  port: number;
  metricsPort: number;
  geyser: boolean;
}

/** The gateway as deployed, in its own process, so that its RSS is its own. */
async function spawnGateway(geyser: boolean): Promise<Gateway> {
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
      ...(geyser ? { SOLGATE_GEYSER_URL: localnet.geyserUrl } : {}),
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  cleanups.push(() => {
    child.kill("SIGTERM");
    return exited;
  });
  return new Promise((resolve, reject) => {
    let buffered: string | undefined = "";
    child.once("exit", (code) => reject(new Error(`gateway exited with ${code}`)));
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (text: string) => {
      if (process.env.GATEWAY_LOG) process.stderr.write(text);
      if (buffered === undefined) return; // listening: the rest of its log is read and dropped
      buffered += text;
      for (const line of buffered.split("\n")) {
        if (!line.includes("solgate listening")) continue;
        buffered = undefined;
        const event = JSON.parse(line) as { port: number; metricsPort: number };
        resolve({ child, port: event.port, metricsPort: event.metricsPort, geyser });
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

/** Wall-clock milliseconds with performance.now()'s resolution (the localnet stamps its blocks with Date.now()). */
const wallNow = () => performance.timeOrigin + performance.now();

async function freshness(gateway: Gateway): Promise<void> {
  const baseUrl = `http://127.0.0.1:${gateway.port}`;
  // Two baselines per slot: when the localnet produced the block, as it states it (the `created_at` of its
  // Geyser block meta at processed: stamped in the localnet process when the block is made, wall clock);
  // and when its PubSub slotNotification reached this process (the earlier bench's baseline).
  const announced = new Map<bigint, number>();
  const produced = new Map<bigint, number>();
  const abort = new AbortController();
  const subscriptions = createSolanaRpcSubscriptions(localnet.wsUrl);
  const slots = await subscriptions.slotNotifications().subscribe({ abortSignal: abort.signal });
  void (async () => {
    for await (const n of slots) announced.set(n.slot, wallNow());
  })().catch(() => {});
  if (localnet.geyserUrl !== undefined) {
    const geyser = createClient(Geyser, createGrpcTransport({ baseUrl: localnet.geyserUrl }));
    async function* request() {
      yield create(SubscribeRequestSchema, { commitment: CommitmentLevel.PROCESSED, blocksMeta: { meta: {} } });
      await new Promise((resolve) => abort.signal.addEventListener("abort", resolve));
    }
    void (async () => {
      for await (const update of geyser.subscribe(request(), { signal: abort.signal })) {
        if (update.updateOneof.case === "blockMeta" && update.createdAt !== undefined)
          produced.set(update.updateOneof.value.slot, timestampMs(update.createdAt));
      }
    })().catch(() => {});
  }
  const client = createClient(FeeService, createGrpcTransport({ baseUrl }));
  const delays: number[] = [];
  const sinceProduced: number[] = [];
  let sameSlot = 0;
  let first = true;
  const until = performance.now() + 30_000;
  try {
    for await (const res of client.watchFees({}, { headers, signal: abort.signal })) {
      const at = wallNow();
      if (res.event.case !== "estimate") continue;
      if (first) {
        first = false; // the current estimate, sent at once: not a new block's
        continue;
      }
      const slot = res.event.value.slot;
      const slotAt = announced.get(slot);
      if (slotAt !== undefined) delays.push(at - slotAt);
      const producedAt = produced.get(slot);
      if (producedAt !== undefined) {
        sinceProduced.push(at - producedAt);
        // Still that slot: the localnet has not produced the next block yet.
        if (!produced.has(slot + 1n) && at - producedAt < Number(args["slot-ms"])) sameSlot++;
      }
      if (performance.now() > until) break;
    }
  } finally {
    abort.abort();
  }
  delays.sort((a, b) => a - b);
  sinceProduced.sort((a, b) => a - b);
  const figures = (xs: number[]) =>
    `median ${percentile(xs, 50)?.toFixed(1)} ms, p90 ${percentile(xs, 90)?.toFixed(1)} ms, max ${xs.at(-1)?.toFixed(1)} ms`;
  console.log(
    `\n1. Freshness over 30 s (geyser ${gateway.geyser ? "on" : "off"}): ${sinceProduced.length} estimates; from the localnet producing the block ` +
      `(its Geyser created_at) to the watcher receiving its levels: ${figures(sinceProduced)} (target <= 50 ms); ` +
      `${sameSlot} of ${sinceProduced.length} within the same slot. From the PubSub slotNotification reaching the bench: ` +
      `${delays.length} estimates, ${figures(delays)}`,
  );
}

async function memory(gateway: Gateway): Promise<void> {
  const baseUrl = `http://127.0.0.1:${gateway.port}`;
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

/** Upstream calls the gateway has started so far, by method (its Prometheus counters). */
async function upstreamCalls(gateway: Gateway): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
  const byMethod = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^solgate_upstream_attempts_started_total\{[^}]*method="([^"]+)"[^}]*\} (\d+)/.exec(line);
    if (match) byMethod.set(match[1], (byMethod.get(match[1]) ?? 0) + Number(match[2]));
  }
  return byMethod;
}

/** Calls per second over `seconds`, in all and by method (busiest first). */
async function callRate(gateway: Gateway, seconds: number): Promise<{ total: number; byMethod: string }> {
  const before = await upstreamCalls(gateway);
  const from = performance.now();
  await sleep(seconds * 1000);
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

async function calls(gateway: Gateway): Promise<void> {
  const baseUrl = `http://127.0.0.1:${gateway.port}`;
  const seconds = 20;
  await sleep(3000); // start-up reads (backfill, first blockhash) are not the steady state
  const idle = await callRate(gateway, seconds);
  const clients: Client<typeof FeeService>[] = Array.from({ length: 20 }, () =>
    createClient(FeeService, createGrpcTransport({ baseUrl })),
  );
  const abort = new AbortController();
  let opened = 0;
  let failed = 0;
  const streams: Promise<void>[] = [];
  const openedAt = performance.now();
  await new Promise<void>((allSettled) => {
    // On a loaded machine the last streams can take long to see their first estimate: after 2 minutes the
    // reading goes on with those open (the count is printed).
    const cap = setTimeout(allSettled, 120_000);
    const settle = () => {
      if (opened + failed === STREAMS) {
        clearTimeout(cap);
        allSettled();
      }
    };
    for (let i = 0; i < STREAMS; i++) {
      streams.push(
        (async () => {
          let first = true;
          try {
            for await (const res of clients[i % clients.length].watchFees({}, { headers, signal: abort.signal })) {
              if (first && res.event.case === "estimate") {
                opened++;
                settle();
              }
              first = false;
            }
          } catch {
            // aborted at the end, or failed before its first estimate (counted)
          }
          if (first) {
            failed++;
            settle();
          }
        })(),
      );
    }
  });
  const openSeconds = (performance.now() - openedAt) / 1000;
  await sleep(2000);
  const watched = await callRate(gateway, seconds);
  console.log(
    `\n3. Upstream JSON-RPC calls/s (geyser ${gateway.geyser ? "on" : "off"}), each over ${seconds} s: ` +
      `idle ${idle.total.toFixed(2)} (${idle.byMethod}); with ${opened} WatchFees watchers open ` +
      `in ${openSeconds.toFixed(0)} s (${failed} of ${STREAMS} failed) ${watched.total.toFixed(2)} ` +
      `(${watched.byMethod}) (target <= 1 with Geyser on)`,
  );

  // Statuses: sends through Solgate that never land (dropped), each watched by 50 WatchStatus streams.
  const rpc = createSolanaRpc(localnet.rpcUrl);
  const payer = await generateKeyPairSigner();
  const airdrop = await rpc.requestAirdrop(payer.address, (10n ** 10n) as never).send();
  const landed = new Set(["confirmed", "finalized"]);
  while (
    !landed.has((await rpc.getSignatureStatuses([airdrop as Signature]).send()).value[0]?.confirmationStatus ?? "")
  )
    await sleep(100);
  await localnet.control({ dropRate: 1 });
  const transactions = createClient(TransactionService, createGrpcTransport({ baseUrl }));
  const statusStreams: Promise<void>[] = [];
  // One blockhash, read just before the sends, and the 20 sends made at once: a blockhash lives ~60 s at
  // 400 ms slots (the node's preflight refuses it after 144 blocks, 57.6 s), and on a machine this loaded
  // 20 sends one after the other took over a minute (4-8 s apart, the bench's own event loop busy with the
  // 10,000 streams; the gateway answered each in 5-1,300 ms): the last ones were refused, rightly, as
  // BLOCKHASH_EXPIRED. At once, every send has the whole lifetime, and the reading below sees them in flight.
  const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const readAt = performance.now();
  const txs = await Promise.all(
    Array.from({ length: 20 }, (_, i) => transferTransaction({ payer, blockhash, lamports: 1_000_000n + BigInt(i) })),
  );
  const refusals: string[] = [];
  const sent = await Promise.all(
    txs.map(async (tx) => {
      try {
        await transactions.sendTransaction({ transaction: tx.wire, confirm: false }, { headers });
        return true;
      } catch (error) {
        // What a refusal needs to be judged: how old the blockhash was, against its last valid block height.
        const height = await rpc.getBlockHeight({ commitment: "confirmed" }).send();
        refusals.push(
          `${error instanceof Error ? error.message : String(error)} (${((performance.now() - readAt) / 1000).toFixed(1)} s ` +
            `after reading the blockhash; block height ${height}, lastValidBlockHeight ${blockhash.lastValidBlockHeight})`,
        );
        return false;
      }
    }),
  );
  const sendSeconds = (performance.now() - readAt) / 1000;
  for (const [i, tx] of txs.entries()) {
    if (!sent[i]) continue;
    for (let j = 0; j < 50; j++)
      statusStreams.push(
        (async () => {
          try {
            for await (const _ of transactions.watchStatus(
              { signature: tx.signature },
              { headers, signal: abort.signal },
            ));
          } catch {
            // aborted at the end
          }
        })(),
      );
  }
  await sleep(2000);
  const withStatus = await callRate(gateway, seconds);
  // Were the sends still in flight at the end of the reading? (A lapsed blockhash ends them: fewer calls.)
  const { value: stillValid } = await rpc.isBlockhashValid(blockhash.blockhash, { commitment: "processed" }).send();
  await localnet.control({ dropRate: 0 });
  console.log(
    `   with 1,000 WatchStatus streams added on 20 sends through Solgate kept in flight (the localnet drops them): ` +
      `${withStatus.total.toFixed(2)} (${withStatus.byMethod}); ${sent.filter(Boolean).length} sends taken in ` +
      `${sendSeconds.toFixed(1)} s, ${statusStreams.length} streams opened, blockhash ` +
      `${stillValid ? "still valid" : "lapsed"} at the end of the reading` +
      (refusals.length === 0 ? "" : `; ${refusals.length} refused, e.g. ${refusals[0]}`),
  );
  abort.abort();
  await Promise.all([...streams, ...statusStreams]);
}

const SETTINGS = args.geyser === "both" ? [false, true] : [args.geyser !== "off"];
try {
  for (const part of ["freshness", "memory", "calls"] as const) {
    if (!PARTS.has(part)) continue;
    for (const geyser of SETTINGS) {
      const gateway = await spawnGateway(geyser);
      if (part === "freshness") await freshness(gateway);
      if (part === "memory") await memory(gateway);
      if (part === "calls") await calls(gateway);
      await cleanups.pop()!();
    }
  }
} finally {
  for (const fn of cleanups.reverse()) await fn();
}
