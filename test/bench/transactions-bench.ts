/**
 * TransactionService benchmark, all on one real localnet started for the run:
 *  1. send-and-confirm latency through Solgate (real server, gRPC client, confirm true) against
 *     @solana/kit's sendAndConfirmTransactionFactory straight to the localnet (WebSocket notifications),
 *     in pairs that start at the same phase of a slot; prints medians, means and the ratio (target <= 1.10);
 *  2. landing rate with and without rebroadcast while the localnet drops 50% of submissions;
 *  3. 10,000 concurrent WatchStatus streams against a gateway in its own process: upstream calls per
 *     second (target: flat in the number of streams) and the gateway's RSS (target < 500 MB).
 * Run: npx node test/bench/transactions-bench.ts [--slot-ms 200] [--sends 60] [--ws on|off] [--delay-ms 0] [--landing 200] [--streams 10000]
 *      [--only latency,landing,watchers]
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import type { Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import type { KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { TransactionStatus } from "../../gen/solgate/v1/transaction_pb.js";
import { createChainRegistry } from "../../src/chains.ts";
import { createFeeMarket } from "../../src/fees/fee-market.ts";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import { createProgramAccounts } from "../../src/programs/program-accounts.ts";
import { createCollections } from "../../src/collections/collections.ts";
import { createApiKeyChecker } from "../../src/server/auth.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createRoutes } from "../../src/server/routes.ts";
import { createServer } from "../../src/server/server.ts";
import { createTransactions } from "../../src/transactions/transactions.ts";
import type { TransactionsOptions } from "../../src/transactions/transactions.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import { createAccounts } from "../../src/accounts/accounts.ts";
import { createWallets } from "../../src/wallets/wallets.ts";
import { createTokenHolders } from "../../src/tokens/token-holders.ts";

const { values: args } = parseArgs({
  options: {
    "slot-ms": { type: "string", default: "200" },
    // `off`: Solgate without the node's WebSocket (polling alone), to see what the notifications give.
    ws: { type: "string", default: "on" },
    // Milliseconds the localnet waits before answering each HTTP request: a provider across a network.
    "delay-ms": { type: "string", default: "0" },
    sends: { type: "string", default: "60" },
    landing: { type: "string", default: "200" },
    streams: { type: "string", default: "10000" },
    only: { type: "string" },
  },
});
const PARTS = new Set((args.only ?? "latency,landing,watchers").split(","));
const SLOT_MS = Number(args["slot-ms"]);
const SENDS = Number(args.sends);
const LANDING = Number(args.landing);
const STREAMS = Number(args.streams);
const API_KEY = "bench-key-0123456789abcdef";
const headers = { Authorization: `Bearer ${API_KEY}` };

const localnet = await startLocalnet({ slotMs: SLOT_MS, confirmSlots: 1, finalizeSlots: 32 });
void localnet.exited.then((how) => {
  if (!how.expected) console.error(`the localnet died (code ${how.code}, signal ${how.signal}):\n${how.stderr}`);
});
const rpc = createSolanaRpc(localnet.rpcUrl);
const rpcSubscriptions = createSolanaRpcSubscriptions(localnet.wsUrl);
const cleanups: (() => Promise<unknown> | void)[] = [() => localnet.stop()];
process.on("uncaughtException", async (error) => {
  console.error(error);
  for (const fn of cleanups.reverse()) await fn();
  process.exit(1);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function funded(sol: number): Promise<KeyPairSigner> {
  const signer = await generateKeyPairSigner();
  const signature = await rpc.requestAirdrop(signer.address, BigInt(sol * 1e9) as never).send();
  for (;;) {
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    if (value[0]?.confirmationStatus === "confirmed" || value[0]?.confirmationStatus === "finalized") return signer;
    await sleep(20);
  }
}

async function signedTransfer(payer: KeyPairSigner, lamports: bigint) {
  const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const to = (await generateKeyPairSigner()).address;
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) =>
      appendTransactionMessageInstructions(
        [getTransferSolInstruction({ source: payer, destination: to, amount: lamports })],
        m,
      ),
  );
  const signed = await signTransactionMessageWithSigners(message);
  return { signed, wire: new Uint8Array(Buffer.from(getBase64EncodedWireTransaction(signed), "base64")) };
}

/** An in-process Solgate on port 0 (production server, routes, upstream, fee market, transactions core). */
async function startSolgate(options: Partial<TransactionsOptions>, chain: LocalnetHandle = localnet) {
  const upstream = createUpstream({
    chain: "localnet",
    rpcUrls: [chain.rpcUrl],
    wsUrl: args.ws === "off" ? null : chain.wsUrl,
  });
  const fees = createFeeMarket({ upstream });
  fees.start();
  const transactions = createTransactions({ upstream, fees, ...options });
  transactions.start();
  const chains = createChainRegistry(
    [
      {
        name: "localnet",
        upstream,
        programs: createProgramAccounts({ upstream }),
        fees,
        transactions,
        collections: createCollections({ upstream }),
        accounts: createAccounts({ upstream }),
        wallets: createWallets({ upstream }),
        tokens: createTokenHolders({ upstream }),
      },
    ],
    "localnet",
  );
  const server = createServer({
    routes: createRoutes({ chains }),
    auth: createApiKeyChecker([API_KEY]),
    logger: createLogger({ level: "silent" }),
  });
  const listening = await server.listen(0, "127.0.0.1");
  const client = createClient(
    TransactionService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${listening.port}` }),
  );
  const close = async () => {
    await listening.close();
    transactions.stop();
    await fees.stop();
    await upstream.close();
  };
  cleanups.push(close);
  return { client, transactions, close };
}

function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  // Mean without the slowest and fastest 10%: the machine is shared, and a stalled node response skews a mean.
  const cut = Math.floor(sorted.length / 10);
  const kept = sorted.slice(cut, sorted.length - cut);
  return { median: at(0.5), p90: at(0.9), mean, trimmed: kept.reduce((a, b) => a + b, 0) / kept.length };
}

const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

// 1. Latency ---------------------------------------------------------------------------------------
async function latency(): Promise<void> {
  const solgate = await startSolgate({});
  const sendAndConfirm = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions });
  const payer = await funded(1000);
  await localnet.control({ delayMs: Number(args["delay-ms"]) });
  const viaSolgate: number[] = [];
  const viaKit: number[] = [];
  // Warm both paths (connections, JIT, the fee market's first blocks).
  for (let i = 0; i < 3; i++) {
    await solgate.client.sendTransaction({ transaction: (await signedTransfer(payer, 1_000_000n)).wire }, { headers });
    await sendAndConfirm((await signedTransfer(payer, 1_000_000n)).signed as never, { commitment: "confirmed" });
  }
  // A localnet transaction executes at the next slot and is confirmed one slot later, so a latency is
  // mostly "time to the next slot" and depends on when in its slot a send starts. Both sends of a pair
  // start at the same phase (a random one per pair) after a slot notification, so that phase cancels out.
  const slotsDone = new AbortController();
  const slots = await rpcSubscriptions.slotNotifications().subscribe({ abortSignal: slotsDone.signal });
  // The next slot to start after the call (an iterator would hand back ones queued meanwhile).
  let nextSlotStarts: (() => void)[] = [];
  void (async () => {
    for await (const _ of slots) {
      for (const resolve of nextSlotStarts) resolve();
      nextSlotStarts = [];
    }
  })().catch(() => {});
  const atPhase = async (phaseMs: number) => {
    await new Promise<void>((resolve) => nextSlotStarts.push(resolve));
    await sleep(phaseMs);
  };
  const pairDifferences: number[] = [];
  for (let i = 0; i < SENDS; i++) {
    const a = await signedTransfer(payer, 1_000_000n + BigInt(i));
    const b = await signedTransfer(payer, 2_000_000n + BigInt(i));
    const phase = Math.random() * SLOT_MS;
    let solgateMs = 0;
    let kitMs = 0;
    // Alternate who goes first, so that neither always follows the other.
    const runs = [
      async () => {
        await atPhase(phase);
        const t = performance.now();
        const { result } = await solgate.client.sendTransaction({ transaction: a.wire }, { headers });
        if (result?.status !== TransactionStatus.CONFIRMED)
          throw new Error(`solgate: ${TransactionStatus[result?.status ?? 0]}`);
        solgateMs = performance.now() - t;
      },
      async () => {
        await atPhase(phase);
        const t = performance.now();
        await sendAndConfirm(b.signed as never, { commitment: "confirmed" });
        kitMs = performance.now() - t;
      },
    ];
    if (i % 2 === 1) runs.reverse();
    for (const run of runs) await run();
    viaSolgate.push(solgateMs);
    viaKit.push(kitMs);
    pairDifferences.push(solgateMs - kitMs);
  }
  const s = stats(viaSolgate);
  const k = stats(viaKit);
  console.log(
    `\n1. send-and-confirm latency, ${SENDS} sends each, slot ${SLOT_MS} ms, confirmed after 1 slot, Solgate's WebSocket ${args.ws}, HTTP answers delayed ${args["delay-ms"]} ms`,
  );
  console.log(`   Solgate (gRPC, confirm true): median ${fmt(s.median)}, mean ${fmt(s.mean)}, p90 ${fmt(s.p90)}`);
  console.log(`   kit sendAndConfirmTransaction: median ${fmt(k.median)}, mean ${fmt(k.mean)}, p90 ${fmt(k.p90)}`);
  console.log(
    `   ratio Solgate / kit: median ${(s.median / k.median).toFixed(2)}, trimmed mean ${(s.trimmed / k.trimmed).toFixed(2)}, mean ${(s.mean / k.mean).toFixed(2)} (target <= 1.10)`,
  );
  const d = stats(pairDifferences);
  console.log(`   Solgate - kit, same slot phase: median ${d.median.toFixed(1)} ms, mean ${d.mean.toFixed(1)} ms`);
  slotsDone.abort();
  await localnet.control({ delayMs: 0 });
  await solgate.close();
}

// 2. Landing rate under 50% drops ---------------------------------------------------------------------
async function landing(): Promise<void> {
  // A fast chain with the real ratio of blockhash window to rebroadcast period: 150 blocks of 40 ms = 6 s,
  // rebroadcast every 200 ms (as 60 s to 2 s on mainnet).
  const fast = await startLocalnet({ slotMs: 40, confirmSlots: 1, finalizeSlots: 32, faults: { seed: 42 } });
  cleanups.push(() => fast.stop());
  const fastRpc = createSolanaRpc(fast.rpcUrl);
  const payers: KeyPairSigner[] = [];
  for (let i = 0; i < 4; i++) {
    const signer = await generateKeyPairSigner();
    await fastRpc.requestAirdrop(signer.address, (10n ** 12n) as never).send();
    payers.push(signer);
  }
  await sleep(500);
  console.log(`\n2. landing rate, ${LANDING} concurrent sends (confirm true), localnet dropping 50% of submissions`);
  for (const [label, rebroadcastIntervalMs] of [
    ["with rebroadcast every 200 ms", 200],
    ["without rebroadcast", 1e9],
  ] as const) {
    const solgate = await startSolgate({ rebroadcastIntervalMs }, fast);
    await fast.control({ dropRate: 0.5 });
    const { value: blockhash } = await fastRpc.getLatestBlockhash({ commitment: "confirmed" }).send();
    const wires = await Promise.all(
      Array.from({ length: LANDING }, async (_, i) => {
        const to = (await generateKeyPairSigner()).address;
        const message = pipe(
          createTransactionMessage({ version: 0 }),
          (m) => setTransactionMessageFeePayerSigner(payers[i % payers.length], m),
          (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
          (m) =>
            appendTransactionMessageInstructions(
              [getTransferSolInstruction({ source: payers[i % payers.length], destination: to, amount: 1_000_000n })],
              m,
            ),
        );
        return new Uint8Array(
          Buffer.from(getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message)), "base64"),
        );
      }),
    );
    const started = performance.now();
    const results = await Promise.all(
      wires.map((transaction) => solgate.client.sendTransaction({ transaction }, { headers })),
    );
    const landed = results.filter((r) => r.result?.status === TransactionStatus.CONFIRMED).length;
    const expired = results.filter((r) => r.result?.status === TransactionStatus.EXPIRED).length;
    console.log(
      `   ${label}: ${landed}/${LANDING} confirmed (${((100 * landed) / LANDING).toFixed(1)}%), ${expired} expired, ` +
        `${solgate.transactions.stats().rebroadcasts} rebroadcasts, all settled in ${fmt(performance.now() - started)}`,
    );
    await fast.control({ dropRate: 0 });
    await solgate.close();
  }
}

// 3. Many watchers ----------------------------------------------------------------------------------
/** The gateway as deployed (`node src/main.ts`), in its own process, so its RSS is its own. */
async function spawnGateway(): Promise<{ child: ChildProcess; port: number; metricsPort: number }> {
  const main = fileURLToPath(new URL("../../src/main.ts", import.meta.url));
  // BENCH_GATEWAY_NODE_ARGS: Node flags for the gateway alone (e.g. --heapsnapshot-signal=SIGUSR2 to inspect its heap).
  const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
  const child = spawn(process.execPath, [...nodeArgs, main], {
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      SOLGATE_RPC_URL: localnet.rpcUrl,
      SOLGATE_CHAIN: "bench",
      SOLGATE_API_KEYS: API_KEY,
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  cleanups.push(() => {
    child.kill("SIGTERM");
  });
  return new Promise((resolve, reject) => {
    let buffered = "";
    child.once("exit", (code) => reject(new Error(`gateway exited with ${code}`)));
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (text: string) => {
      if (process.env.GATEWAY_LOG) process.stderr.write(text);
      buffered += text;
      for (const line of buffered.split("\n")) {
        if (!line.includes("solgate listening")) continue;
        const event = JSON.parse(line) as { port: number; metricsPort: number };
        resolve({ child, port: event.port, metricsPort: event.metricsPort });
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

async function upstreamCalls(metricsPort: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const byMethod = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^solgate_upstream_requests_total\{[^}]*method="([^"]+)"[^}]*\} (\d+)/.exec(line);
    if (match) byMethod.set(match[1], (byMethod.get(match[1]) ?? 0) + Number(match[2]));
  }
  return byMethod;
}

/** The gateway's V8 heap in use and its memory outside the heap (buffers, native), from its metrics, in MB. */
async function heapMb(metricsPort: number): Promise<{ heap: number; external: number }> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1] ?? NaN) / 1e6;
  return { heap: read("nodejs_heap_size_used_bytes"), external: read("nodejs_external_memory_bytes") };
}

async function watchers(): Promise<void> {
  const gateway = await spawnGateway();
  const baseUrl = `http://127.0.0.1:${gateway.port}`;
  // Several HTTP/2 connections, as many clients would open.
  const clients: Client<typeof TransactionService>[] = Array.from({ length: 20 }, () =>
    createClient(TransactionService, createGrpcTransport({ baseUrl })),
  );
  const payer = await funded(1000);
  // Frozen, nothing lands: every stream stays open on a submitted transaction, as under load.
  await localnet.control({ freeze: true });
  const signatures: string[] = [];
  for (let i = 0; i < 100; i++) {
    const { wire, signed } = await signedTransfer(payer, 1_000_000n + BigInt(i));
    await clients[0].sendTransaction({ transaction: wire, confirm: false }, { headers });
    signatures.push(getSignatureFromTransaction(signed));
  }
  console.log(
    `\n3. WatchStatus streams on ${signatures.length} in-flight transactions, gateway in its own process (default settings)`,
  );
  const controller = new AbortController();
  const streams: Promise<void>[] = [];
  // Streams that have seen their first record and not ended: what the calls and RSS are read against. A stream
  // the server ends or fails before the bench aborts them all is counted by how it ended, not as open.
  let live = 0;
  let settled = 0;
  let heartbeats = 0;
  const endedEarly = new Map<string, number>();
  const open = (count: number) =>
    new Promise<void>((allSettled) => {
      if (count <= 0) return allSettled();
      const target = settled + count;
      const settle = () => {
        if (++settled === target) allSettled();
      };
      for (let i = 0; i < count; i++) {
        const client = clients[streams.length % clients.length];
        const signature = signatures[streams.length % signatures.length];
        streams.push(
          (async () => {
            let seen = false;
            let how = "ended by the server";
            try {
              for await (const event of client.watchStatus({ signature }, { headers, signal: controller.signal })) {
                if (event.event.case === "record" && !seen) {
                  seen = true;
                  live++;
                  settle();
                }
                if (event.event.case === "heartbeat") heartbeats++;
              }
            } catch (err) {
              how =
                ConnectError.from(err).code === Code.Canceled
                  ? "canceled"
                  : `failed: ${ConnectError.from(err).message}`;
            }
            if (seen) live--;
            else settle();
            if (!controller.signal.aborted) endedEarly.set(how, (endedEarly.get(how) ?? 0) + 1);
          })(),
        );
      }
    });
  const baselineRss = rssMb(gateway.child.pid!);
  console.log(`   gateway RSS before any stream: ${baselineRss.toFixed(0)} MB`);
  for (const total of [...new Set([100, 1_000, STREAMS])].filter((n) => n <= STREAMS)) {
    const t = performance.now();
    await open(total - streams.length);
    const openedMs = performance.now() - t;
    await sleep(1000);
    // The window runs between the two readings' arrivals: a gateway busy with heartbeats answers late.
    const before = await upstreamCalls(gateway.metricsPort);
    const liveBefore = live;
    const from = performance.now();
    await sleep(10_000);
    const after = await upstreamCalls(gateway.metricsPort);
    const window = performance.now() - from;
    const memory = await heapMb(gateway.metricsPort);
    const rss = rssMb(gateway.child.pid!);
    const liveAfter = live;
    const rate = (method?: string) => {
      let sum = 0;
      for (const [m, n] of after) if (method === undefined || m === method) sum += n - (before.get(m) ?? 0);
      return (sum * 1000) / window;
    };
    const polling = ["getSignatureStatuses", "getBlockHeight", "getTransaction", "isBlockhashValid"].reduce(
      (sum, m) => sum + rate(m),
      0,
    );
    console.log(
      `   ${String(total).padStart(6)} streams started, ${liveBefore} open at the first reading and ${liveAfter} at the last ` +
        `(opened in ${fmt(openedMs)}): status polling ${polling.toFixed(1)} calls/s ` +
        `(getSignatureStatuses ${rate("getSignatureStatuses").toFixed(1)}/s), rebroadcasts ${rate("sendTransaction").toFixed(1)}/s, ` +
        `whole gateway ${rate().toFixed(1)}/s; gateway RSS ${rss.toFixed(0)} MB ` +
        `(V8 heap in use ${memory.heap.toFixed(0)} MB, external ${memory.external.toFixed(0)} MB)`,
    );
    if (liveAfter < total)
      console.log(
        `   target missed: ${total - liveAfter} of ${total} streams not open when measured (${[...endedEarly].map(([k, n]) => `${n} ${k}`).join(", ") || "never opened"})`,
      );
  }
  controller.abort();
  await Promise.all(streams);
  await localnet.control({ freeze: false });
  console.log(`   (targets: calls/s flat in the number of streams; RSS < 500 MB; ${heartbeats} heartbeats seen)`);
  console.log(
    `   (the chain is frozen so that streams stay open: the 100 unseen transactions are rebroadcast every 2 s)`,
  );
  // Waited for, so that the gateway never outlives the bench (and its stdout reader).
  const exited = new Promise((resolve) => gateway.child.once("exit", resolve));
  gateway.child.kill("SIGTERM");
  await Promise.race([exited, sleep(15_000)]);
}

if (PARTS.has("latency")) await latency();
if (PARTS.has("landing")) await landing();
if (PARTS.has("watchers")) await watchers();
for (const fn of cleanups.reverse()) await fn();
process.exit(0);
