/**
 * A real localnet (through the launcher, child process, port 0) with Solgate's real upstream in
 * front of it, plus builders for real signed transactions: SOL transfers, with or without a compute
 * budget, legacy or v0, and ones that fail on chain (a transfer of more than the payer holds).
 */
import bs58 from "bs58";
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import type { Address, Blockhash, Instruction, KeyPairSigner, Signature } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle, LocalnetOptions } from "@solgate/localnet";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream, UpstreamMetrics } from "../../src/upstream/index.ts";

/** A localnet and an upstream to it. */
export interface ChainFixture {
  localnet: LocalnetHandle;
  upstream: Upstream;
  /** Upstream calls by method since start (or the last `resetCalls`). */
  calls: Map<string, number>;
  totalCalls(): number;
  resetCalls(): void;
  /** A new key pair holding `sol` SOL (airdropped and confirmed). */
  funded(sol?: number): Promise<KeyPairSigner>;
  latestBlockhash(): Promise<{ blockhash: Blockhash; lastValidBlockHeight: bigint }>;
  balance(address: Address): Promise<bigint>;
  /** Waits until the signature is at least confirmed. */
  waitConfirmed(signature: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a localnet with a fast clock (25 ms slots, confirmed after 1, finalized after 6). */
export async function startChainFixture(options: LocalnetOptions = {}): Promise<ChainFixture> {
  const localnet = await startLocalnet({ slotMs: 25, confirmSlots: 1, finalizeSlots: 6, ...options });
  const calls = new Map<string, number>();
  const metrics: UpstreamMetrics = {
    onCall: (method) => calls.set(method, (calls.get(method) ?? 0) + 1),
    onResult() {},
  };
  const upstream = createUpstream({ chain: "localnet", rpcUrls: [localnet.rpcUrl], metrics, maxRetries: 2 });
  const { rpc } = upstream;

  async function waitConfirmed(signature: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const { value } = await rpc.getSignatureStatuses([signature as Signature]).send();
      const status = value[0]?.confirmationStatus;
      if (status === "confirmed" || status === "finalized") return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`${signature} not confirmed within ${timeoutMs} ms`);
  }

  return {
    localnet,
    upstream,
    calls,
    totalCalls: () => [...calls.values()].reduce((a, b) => a + b, 0),
    resetCalls: () => calls.clear(),
    async funded(sol = 10) {
      const signer = await generateKeyPairSigner();
      const signature = await rpc.requestAirdrop(signer.address, BigInt(sol * 1e9) as never).send();
      await waitConfirmed(signature);
      return signer;
    },
    async latestBlockhash() {
      const { value } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
      return value;
    },
    async balance(address) {
      return (await rpc.getBalance(address, { commitment: "confirmed" }).send()).value;
    },
    waitConfirmed,
    async stop() {
      await upstream.close();
      await localnet.stop();
    },
  };
}

/** Options of {@link transferTransaction}. */
export interface TransferOptions {
  payer: KeyPairSigner;
  to?: Address;
  lamports?: bigint;
  blockhash: { blockhash: Blockhash; lastValidBlockHeight: bigint };
  /** Compute-budget instructions to include. */
  budget?: { units?: number; microLamports?: bigint };
  version?: 0 | "legacy";
  /** Extra instructions after the transfer. */
  extra?: Instruction[];
}

/** A signed SOL transfer in wire format with its signature. */
export async function transferTransaction(options: TransferOptions): Promise<{ wire: Uint8Array; signature: string }> {
  const to = options.to ?? (await generateKeyPairSigner()).address;
  const budget: Instruction[] = [];
  if (options.budget?.units !== undefined)
    budget.push(getSetComputeUnitLimitInstruction({ units: options.budget.units }));
  if (options.budget?.microLamports !== undefined) {
    budget.push(getSetComputeUnitPriceInstruction({ microLamports: options.budget.microLamports }));
  }
  const message = pipe(
    createTransactionMessage({ version: options.version ?? 0 }),
    (m) => setTransactionMessageFeePayerSigner(options.payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(options.blockhash, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          ...budget,
          getTransferSolInstruction({ source: options.payer, destination: to, amount: options.lamports ?? 1_000_000n }),
          ...(options.extra ?? []),
        ],
        m,
      ),
  );
  const signed = await signTransactionMessageWithSigners(message);
  const wire = new Uint8Array(Buffer.from(getBase64EncodedWireTransaction(signed), "base64"));
  // The first signature sits right after the one-byte signature count.
  return { wire, signature: bs58.encode(wire.subarray(1, 65)) };
}
