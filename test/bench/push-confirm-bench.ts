/**
 * Send-and-confirm through the gateway on the Geyser stream, against @solana/kit's
 * sendAndConfirmTransactionFactory straight to the same localnet (its WebSocket), in one run: the gateway as
 * deployed (`node src/main.ts`, its own process, SOLGATE_GEYSER_URL = the localnet's Yellowstone server) on a
 * localnet with priority-fee traffic; gRPC SendTransaction with confirm true from this process. Pairs start at
 * the same (random) phase of a slot, alternating which goes first; prints medians, means, p90 and the ratio
 * gateway / kit (issue 29's target: <= 0.9). `--geyser off` runs the gateway on PubSub and polling alone.
 * (Its own file beside push-bench.ts, whose parts another branch reshapes.)
 * Run: npx node test/bench/push-confirm-bench.ts [--sends 40] [--slot-ms 400] [--geyser on|off]
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  lamports,
  pipe,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import type { KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { startLocalnet } from "@solgate/localnet";
import { TransactionStatus } from "../../gen/solgate/v1/transaction_pb.js";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";

const { values: args } = parseArgs({
  options: {
    sends: { type: "string", default: "40" },
    "slot-ms": { type: "string", default: "400" },
    geyser: { type: "string", default: "on" },
  },
});
const API_KEY = "bench-key-0123456789abcdef";
const headers = { Authorization: `Bearer ${API_KEY}` };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const localnet = await startLocalnet({ slotMs: Number(args["slot-ms"]), traffic: true, world: false });
const cleanups: (() => unknown)[] = [() => localnet.stop()];

/** The gateway as deployed (`node src/main.ts`), in its own process: the load comes from outside it. */
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
      SOLGATE_WS_URL: localnet.wsUrl,
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

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

const gateway = await spawnGateway();
const baseUrl = `http://127.0.0.1:${gateway.port}`;

async function confirm(): Promise<void> {
  const SLOT_MS = Number(args["slot-ms"]);
  const SENDS = Number(args.sends);
  const rpc = createSolanaRpc(localnet.rpcUrl);
  const rpcSubscriptions = createSolanaRpcSubscriptions(localnet.wsUrl);
  const sendAndConfirm = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions });
  const client = createClient(TransactionService, createGrpcTransport({ baseUrl }));
  const payer = await generateKeyPairSigner();
  const airdrop = await rpc.requestAirdrop(payer.address, lamports(1_000_000_000_000n)).send();
  for (;;) {
    const { value } = await rpc.getSignatureStatuses([airdrop]).send();
    if (value[0]?.confirmationStatus === "confirmed" || value[0]?.confirmationStatus === "finalized") break;
    await sleep(50);
  }
  const transfer = async (from: KeyPairSigner, amount: bigint) => {
    const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
    const to = (await generateKeyPairSigner()).address;
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(from, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
      (m) =>
        appendTransactionMessageInstructions([getTransferSolInstruction({ source: from, destination: to, amount })], m),
    );
    const signed = await signTransactionMessageWithSigners(message);
    return { signed, wire: new Uint8Array(Buffer.from(getBase64EncodedWireTransaction(signed), "base64")) };
  };
  const viaGateway = async (wire: Uint8Array) => {
    const { result } = await client.sendTransaction({ transaction: wire, confirm: true }, { headers });
    if (result?.status !== TransactionStatus.CONFIRMED && result?.status !== TransactionStatus.FINALIZED)
      throw new Error(`gateway: ${TransactionStatus[result?.status ?? 0]}`);
  };
  const viaKit = (signed: Awaited<ReturnType<typeof transfer>>["signed"]) =>
    sendAndConfirm(signed as never, { commitment: "confirmed" });
  // Warm both paths.
  for (let i = 0; i < 3; i++) {
    await viaGateway((await transfer(payer, 1_000_000n + BigInt(i))).wire);
    await viaKit((await transfer(payer, 2_000_000n + BigInt(i))).signed);
  }
  // Both sends of a pair start at the same (random) phase after a slot notification: a localnet latency is mostly
  // "time to the next slot, then one to confirm", so the phase cancels out.
  const abort = new AbortController();
  const slots = await rpcSubscriptions.slotNotifications().subscribe({ abortSignal: abort.signal });
  let nextSlot: (() => void)[] = [];
  void (async () => {
    for await (const _ of slots) {
      for (const resolve of nextSlot) resolve();
      nextSlot = [];
    }
  })().catch(() => {});
  const atPhase = async (phaseMs: number) => {
    await new Promise<void>((resolve) => nextSlot.push(resolve));
    await sleep(phaseMs);
  };
  const gatewayMs: number[] = [];
  const kitMs: number[] = [];
  for (let i = 0; i < SENDS; i++) {
    const a = await transfer(payer, 3_000_000n + BigInt(i));
    const b = await transfer(payer, 4_000_000n + BigInt(i));
    const phase = Math.random() * SLOT_MS;
    const runs = [
      async () => {
        await atPhase(phase);
        const t = performance.now();
        await viaGateway(a.wire);
        gatewayMs.push(performance.now() - t);
      },
      async () => {
        await atPhase(phase);
        const t = performance.now();
        await viaKit(b.signed);
        kitMs.push(performance.now() - t);
      },
    ];
    if (i % 2 === 1) runs.reverse();
    for (const run of runs) await run();
  }
  abort.abort();
  const summary = (xs: number[]) => {
    const sorted = [...xs].sort((p, q) => p - q);
    return {
      median: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      mean: xs.reduce((p, q) => p + q, 0) / xs.length,
    };
  };
  const g = summary(gatewayMs);
  const k = summary(kitMs);
  console.log(
    `\nSend-and-confirm, ${SENDS} pairs, slot ${SLOT_MS} ms, gateway Geyser ${args.geyser}:\n` +
      `   gateway (gRPC, confirm true): median ${g.median.toFixed(0)} ms, mean ${g.mean.toFixed(0)} ms, p90 ${g.p90.toFixed(0)} ms\n` +
      `   kit sendAndConfirmTransactionFactory: median ${k.median.toFixed(0)} ms, mean ${k.mean.toFixed(0)} ms, p90 ${k.p90.toFixed(0)} ms\n` +
      `   ratio gateway / kit: median ${(g.median / k.median).toFixed(2)}, mean ${(g.mean / k.mean).toFixed(2)} (target <= 0.9)`,
  );
}

try {
  await confirm();
} finally {
  for (const fn of cleanups.reverse()) await fn();
}
