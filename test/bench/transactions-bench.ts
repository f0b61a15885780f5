/**
 * TransactionService benchmark, all on one real localnet started for the run:
 *  1. send-and-confirm latency through Solgate (real server, gRPC client, confirm true) against
 *     @solana/kit's sendAndConfirmTransactionFactory straight to the localnet (WebSocket notifications),
 *     interleaved; prints medians, means and the ratio (target <= 1.10);
 *  2. landing rate with and without rebroadcast while the localnet drops 50% of submissions;
 *  3. 10,000 concurrent WatchStatus streams against a gateway in its own process: upstream calls per
 *     second (target: flat in the number of streams) and the gateway's RSS (target < 500 MB).
 * Run: npx node test/bench/transactions-bench.ts [--slot-ms 200] [--sends 40] [--landing 200] [--streams 10000]
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
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
import type { KeyPairSigner, Signature } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { TransactionStatus } from "../../gen/solgate/v1/transaction_pb.js";
import { createChainRegistry } from "../../src/chains.ts";
import { createFeeMarket } from "../../src/fees/fee-market.ts";
import { startLocalnet } from "../../src/localnet/launcher.ts";
import type { LocalnetHandle } from "../../src/localnet/launcher.ts";
import { createProgramAccounts } from "../../src/programs/program-accounts.ts";
import { createApiKeyChecker } from "../../src/server/auth.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createRoutes } from "../../src/server/routes.ts";
import { createServer } from "../../src/server/server.ts";
import { createTransactionService } from "../../src/transactions/transaction-service.ts";
import type { TransactionServiceOptions } from "../../src/transactions/transaction-service.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";

const { values: args } = parseArgs({
  options: {
    "slot-ms": { type: "string", default: "200" },
    sends: { type: "string", default: "40" },
    landing: { type: "string", default: "200" },
    streams: { type: "string", default: "10000" },
  },
});
const SLOT_MS = Number(args["slot-ms"]);
const SENDS = Number(args.sends);
const LANDING = Number(args.landing);
const STREAMS = Number(args.streams);
const API_KEY = "bench-key-0123456789abcdef";
const headers = { Authorization: `Bearer ${API_KEY}` };

const localnet = await startLocalnet({ slotMs: SLOT_MS, confirmSlots: 1, finalizeSlots: 32 });
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
    (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: to, amount: lamports })], m),
  );
  const signed = await signTransactionMessageWithSigners(message);
  return { signed, wire: new Uint8Array(Buffer.from(getBase64EncodedWireTransaction(signed), "base64")) };
}

/** An in-process Solgate on port 0 (production server, routes, upstream, fee market, transactions core). */
async function startSolgate(options: Partial<TransactionServiceOptions>) {
  const upstream = createUpstream({ chain: "localnet", rpcUrls: [localnet.rpcUrl] });
  const fees = createFeeMarket({ upstream });
  if (!process.env.NOFEES) fees.start();
  const transactions = createTransactionService({ upstream, fees, ...options });
  transactions.start();
  const chains = createChainRegistry([{ name: "localnet", upstream, programs: createProgramAccounts({ upstream }), fees, transactions }], "localnet");
  const server = createServer({ routes: createRoutes({ chains }), auth: createApiKeyChecker([API_KEY]), logger: createLogger({ level: "silent" }) });
  const listening = await server.listen(0, "127.0.0.1");
  const client = createClient(TransactionService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${listening.port}` }));
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
  return { median: at(0.5), p90: at(0.9), mean };
}

const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

// 1. Latency ---------------------------------------------------------------------------------------
async function latency(): Promise<void> {
  const solgate = await startSolgate({});
  const sendAndConfirm = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions });
  const payer = await funded(1000);
  const viaSolgate: number[] = [];
  const viaKit: number[] = [];
  // Warm both paths (connections, JIT, the fee market's first blocks).
  for (let i = 0; i < 3; i++) {
    await solgate.client.sendTransaction({ transaction: (await signedTransfer(payer, 1_000_000n)).wire }, { headers });
    await sendAndConfirm((await signedTransfer(payer, 1_000_000n)).signed as never, { commitment: "confirmed" });
  }
  for (let i = 0; i < SENDS; i++) {
    const a = await signedTransfer(payer, 1_000_000n + BigInt(i));
    const b = await signedTransfer(payer, 2_000_000n + BigInt(i));
    // Alternate who goes first, so that slot phase favours neither.
    const runs = [
      async () => {
        const t = performance.now();
        const { result } = await solgate.client.sendTransaction({ transaction: a.wire }, { headers });
        if (result?.status !== TransactionStatus.CONFIRMED) throw new Error(`solgate: ${TransactionStatus[result?.status ?? 0]}`);
        viaSolgate.push(performance.now() - t);
      },
      async () => {
        const t = performance.now();
        await sendAndConfirm(b.signed as never, { commitment: "confirmed" });
        viaKit.push(performance.now() - t);
      },
    ];
    if (i % 2 === 1) runs.reverse();
    for (const run of runs) {
      await run();
      // Start the next send at a random phase of the slot.
      await sleep(Math.random() * SLOT_MS);
    }
  }
  const s = stats(viaSolgate);
  const k = stats(viaKit);
  console.log(`\n1. send-and-confirm latency, ${SENDS} sends each, slot ${SLOT_MS} ms, confirmed after 1 slot`);
  console.log(`   Solgate (gRPC, confirm true): median ${fmt(s.median)}, mean ${fmt(s.mean)}, p90 ${fmt(s.p90)}`);
  console.log(`   kit sendAndConfirmTransaction: median ${fmt(k.median)}, mean ${fmt(k.mean)}, p90 ${fmt(k.p90)}`);
  console.log(`   ratio Solgate / kit: median ${(s.median / k.median).toFixed(2)}, mean ${(s.mean / k.mean).toFixed(2)} (target <= 1.10)`);
  await solgate.close();
}

await latency();
for (const fn of cleanups.reverse()) await fn();
process.exit(0);
