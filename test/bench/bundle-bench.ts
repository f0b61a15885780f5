/**
 * Bundle bench (issue 30, "0 partial bundles over 1,000 bundles, with a failing member injected at
 * random"), through Solgate: a real localnet child with its block engine, Solgate as `npm start` runs it
 * (its own process, SOLGATE_RPC_URL + SOLGATE_JITO_URL pointing at that localnet), and this process as
 * the client (Connect JSON over HTTP/1.1, SendBundle then GetBundleStatus until final). Bundles hold 1-5
 * transfers with a tip in the last; about half get one member, at a random place, that moves more than
 * its payer holds (it fails when run). Then every bundle is checked on the chain itself (getSignatureStatuses
 * at the localnet, not through Solgate): all of its transactions landed, in one slot, or none did.
 *
 *   npx node test/bench/bundle-bench.ts [--bundles 1000] [--concurrency 16] [--seed 30]
 *
 * Prints: bundles sent and refused, landed whole / none / partial, split slots, failing-but-landed,
 * the landed share (of all bundles, and of those without a failing member), and how often Solgate's
 * final status agrees with the chain.
 */
import { spawn } from "node:child_process";
import net from "node:net";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import {
  address,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import type { Address, KeyPairSigner, Signature } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { startLocalnet } from "@solgate/localnet";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { BundleStatus } from "../../gen/solgate/v1/transaction_pb.js";

const { values: args } = parseArgs({
  options: {
    bundles: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "16" },
    seed: { type: "string", default: "30" },
  },
});
const BUNDLES = Number(args.bundles);
const CONCURRENCY = Number(args.concurrency);
const KEY = "bundle-bench-key";
const PAYERS = 20;

/** mulberry32: a seeded PRNG, so a run can be repeated. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(Number(args.seed));

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

interface SentBundle {
  id: string;
  signatures: string[];
  /** The index of the member made to fail, or -1. */
  failing: number;
  /** Solgate's last status. */
  status?: BundleStatus;
  reason?: string;
}

const FINAL = new Set([
  BundleStatus.CONFIRMED,
  BundleStatus.FINALIZED,
  BundleStatus.FAILED,
  BundleStatus.INVALID,
  BundleStatus.EXPIRED,
]);

async function main(): Promise<void> {
  const localnet = await startLocalnet({ slotMs: 50, confirmSlots: 1, finalizeSlots: 6 });
  const rpc = createSolanaRpc(localnet.rpcUrl);
  const port = await freePort();
  const root = path.resolve(import.meta.dirname, "../..");
  const child = spawn(process.execPath, [path.join(root, "src/main.ts")], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      NODE_ENV: "test",
      PORT: String(port),
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      SOLGATE_API_KEYS: KEY,
      SOLGATE_DEMO: "0",
      SOLGATE_CHAIN: "bench",
      SOLGATE_RPC_URL: localnet.rpcUrl,
      SOLGATE_WS_URL: localnet.wsUrl,
      SOLGATE_JITO_URL: localnet.blockEngineUrl,
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
  const stop = () => {
    if (child.exitCode === null) child.kill("SIGTERM");
  };
  process.on("exit", stop);
  try {
    const baseUrl = `http://127.0.0.1:${port}`;
    const headers = { authorization: `Bearer ${KEY}` };
    for (let i = 0; ; i++) {
      const ok = await fetch(`${baseUrl}/v1/bench/network/fees`, { headers }).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (i > 600 || child.exitCode !== null) throw new Error(`gateway did not start:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const client = createClient(TransactionService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));

    const tipsAnswer = (await (
      await fetch(`${localnet.blockEngineUrl}/bundles`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getTipAccounts", params: [] }),
      })
    ).json()) as { result: string[] };
    const tips = tipsAnswer.result.map((a) => address(a));

    const payers: KeyPairSigner[] = await Promise.all(
      Array.from({ length: PAYERS }, async () => {
        const signer = await generateKeyPairSigner();
        const sig = await rpc.requestAirdrop(signer.address, 1_000_000_000_000n as never).send();
        for (;;) {
          const { value } = await rpc.getSignatureStatuses([sig]).send();
          if (value[0]?.confirmationStatus === "confirmed" || value[0]?.confirmationStatus === "finalized") break;
          await new Promise((r) => setTimeout(r, 25));
        }
        return signer;
      }),
    );
    // The receiver, rent-exempt first: small transfers into a fresh account would fail for rent.
    const sink: Address = (await generateKeyPairSigner()).address;
    const sinkFunded = await rpc.requestAirdrop(sink, 1_000_000_000n as never).send();
    for (;;) {
      const { value } = await rpc.getSignatureStatuses([sinkFunded]).send();
      if (value[0]?.confirmationStatus === "confirmed" || value[0]?.confirmationStatus === "finalized") break;
      await new Promise((r) => setTimeout(r, 25));
    }

    let lifetime = (await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value;
    let lifetimeAt = Date.now();
    let amountCounter = 1_000n;

    // Every bundle's shape drawn up front, so that a seed gives the same bundles whatever the senders' interleaving.
    const plans = Array.from({ length: BUNDLES }, () => {
      const size = 1 + Math.floor(random() * 5);
      const failing = random() < 0.5 ? Math.floor(random() * size) : -1;
      return {
        size,
        failing,
        payer: payers[Math.floor(random() * payers.length)] as KeyPairSigner,
        tip: tips[Math.floor(random() * tips.length)] as Address,
        tipLamports: 1_000n + BigInt(Math.floor(random() * 10_000)),
      };
    });

    async function makeBundle(
      plan: (typeof plans)[number],
    ): Promise<{ wires: Uint8Array[]; signatures: string[]; failing: number }> {
      if (Date.now() - lifetimeAt > 2000) {
        lifetime = (await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value;
        lifetimeAt = Date.now();
      }
      const { size, failing, payer } = plan;
      const wires: Uint8Array[] = [];
      const signatures: string[] = [];
      for (let i = 0; i < size; i++) {
        // A unique amount per transaction keeps every signature distinct.
        amountCounter += 1n;
        const amount = i === failing ? 10_000_000_000_000n : amountCounter;
        const instructions = [getTransferSolInstruction({ source: payer, destination: sink, amount })];
        if (i === size - 1) {
          instructions.push(
            getTransferSolInstruction({
              source: payer,
              destination: plan.tip,
              amount: plan.tipLamports,
            }),
          );
        }
        const signed = await signTransactionMessageWithSigners(
          pipe(
            createTransactionMessage({ version: 0 }),
            (m) => setTransactionMessageFeePayerSigner(payer, m),
            (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
            (m) => appendTransactionMessageInstructions(instructions, m),
          ),
        );
        wires.push(new Uint8Array(Buffer.from(getBase64EncodedWireTransaction(signed), "base64")));
        signatures.push(getSignatureFromTransaction(signed));
      }
      return { wires, signatures, failing };
    }

    // Send: CONCURRENCY clients, each building and sending its next bundle.
    const sent: SentBundle[] = [];
    const refused = new Map<string, number>();
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < BUNDLES) {
          const b = await makeBundle(plans[next++] as (typeof plans)[number]);
          try {
            const { bundle } = await client.sendBundle({ chain: "bench", transactions: b.wires }, { headers });
            sent.push({ id: bundle!.bundleId, signatures: b.signatures, failing: b.failing });
          } catch (e) {
            const what = e instanceof Error ? e.message.slice(0, 80) : String(e);
            refused.set(what, (refused.get(what) ?? 0) + 1);
          }
        }
      }),
    );
    const sentMs = performance.now() - started;

    // Follow each through Solgate until its status is final (confirmed counts: nothing more can split it).
    const followStarted = performance.now();
    const deadline = Date.now() + 180_000;
    let open = sent;
    while (open.length > 0 && Date.now() < deadline) {
      let i = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (i < open.length) {
            const b = open[i++] as SentBundle;
            const { bundle } = await client.getBundleStatus({ chain: "bench", bundleId: b.id }, { headers });
            b.status = bundle!.status;
            b.reason = bundle!.reason;
          }
        }),
      );
      open = open.filter((b) => b.status === undefined || !FINAL.has(b.status));
      if (open.length > 0) await new Promise((r) => setTimeout(r, 200));
    }
    const followMs = performance.now() - followStarted;

    // The chain's own word, bundle by bundle.
    const all = sent.flatMap((b) => b.signatures);
    const onChain = new Map<string, { slot: bigint; err: unknown } | null>();
    for (let i = 0; i < all.length; i += 256) {
      const batch = all.slice(i, i + 256);
      const { value } = await rpc.getSignatureStatuses(batch as Signature[], { searchTransactionHistory: true }).send();
      batch.forEach((s, j) => {
        const v = value[j];
        onChain.set(s, v == null ? null : { slot: v.slot, err: v.err });
      });
    }
    let whole = 0;
    let none = 0;
    let partial = 0;
    let splitSlots = 0;
    let failingLanded = 0;
    let memberErr = 0;
    let agree = 0;
    let cleanSent = 0;
    let cleanLanded = 0;
    const statuses = new Map<string, number>();
    const reasons = new Map<string, number>();
    for (const b of sent) {
      const seen = b.signatures.map((s) => onChain.get(s) ?? null);
      const landed = seen.filter((v) => v !== null);
      if (landed.length === 0) none++;
      else if (landed.length === b.signatures.length) whole++;
      else partial++;
      if (landed.length > 0 && new Set(landed.map((v) => String(v!.slot))).size > 1) splitSlots++;
      if (landed.some((v) => v!.err !== null)) memberErr++;
      if (b.failing >= 0 && landed.length > 0) failingLanded++;
      if (b.failing < 0) {
        cleanSent++;
        if (landed.length === b.signatures.length) cleanLanded++;
      }
      const name = b.status === undefined ? "none" : BundleStatus[b.status];
      statuses.set(name, (statuses.get(name) ?? 0) + 1);
      const solgateLanded = b.status === BundleStatus.CONFIRMED || b.status === BundleStatus.FINALIZED;
      const solgateNever =
        b.status === BundleStatus.FAILED || b.status === BundleStatus.INVALID || b.status === BundleStatus.EXPIRED;
      if ((solgateLanded && landed.length === b.signatures.length) || (solgateNever && landed.length === 0)) agree++;
      if (solgateNever) {
        const reason = (b.reason ?? "").replace(/\d+/g, "N").slice(0, 90);
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      }
    }
    const members = all.length;
    const withFailure = sent.filter((b) => b.failing >= 0).length;
    const pct = (a: number, b: number) => (b === 0 ? "n/a" : `${((100 * a) / b).toFixed(1)}%`);
    console.log(
      `bundles: ${BUNDLES} built, ${sent.length} accepted by Solgate (${members} transactions), refused ${BUNDLES - sent.length}`,
    );
    for (const [what, n] of refused) console.log(`  refused x${n}: ${what}`);
    console.log(`with a failing member: ${withFailure}; without: ${cleanSent}`);
    console.log(
      `sent in ${(sentMs / 1000).toFixed(1)} s (${Math.round(sent.length / (sentMs / 1000))} bundles/s); followed to a final status in ${(followMs / 1000).toFixed(1)} s`,
    );
    console.log(
      `on the chain: landed whole ${whole}, none ${none}, PARTIAL ${partial}; split over slots ${splitSlots}; a member with an error ${memberErr}; failing member but landed ${failingLanded}`,
    );
    console.log(
      `landed share: ${pct(whole, sent.length)} of all bundles, ${pct(cleanLanded, cleanSent)} of those without a failing member`,
    );
    console.log(
      `Solgate's statuses: ${[...statuses].map(([k, v]) => `${k} ${v}`).join(", ")}; agree with the chain: ${agree}/${sent.length}`,
    );
    for (const [reason, n] of reasons) console.log(`  never lands x${n}: ${reason}`);
    const ok = partial === 0 && splitSlots === 0 && failingLanded === 0 && sent.length > 0;
    console.log(ok ? "PASS: 0 partial bundles" : "FAIL");
    process.exitCode = ok ? 0 : 1;
  } finally {
    stop();
    await localnet.stop();
  }
}

await main();
