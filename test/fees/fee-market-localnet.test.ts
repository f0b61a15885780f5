/**
 * The fee market against the real localnet (LiteSVM in a child process) through the real upstream
 * module: first on a recorded mainnet block, then on live priced traffic.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import type { Address, KeyPairSigner, Rpc, SolanaRpcApi } from "@solana/kit";
import { getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { getTransferSolInstruction } from "@solana-program/system";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import { planTraffic } from "@solgate/localnet/testing";
import { parseTrafficConfig } from "@solgate/localnet/testing";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";
import { createFeeMarket } from "../../src/fees/fee-market.ts";
import type { FeeEstimate, FeeMarket } from "../../src/fees/fee-market.ts";
import { createLookupTable, draftTransfer } from "./on-chain.ts";
import { REAL_BLOCK_FILE, REAL_BLOCK_SLOT, referenceLevels, referenceTransactions } from "./real-block.ts";

const max = (a: bigint, b: bigint) => (a > b ? a : b);

describe("fee market on a recorded mainnet block served by the localnet", () => {
  let localnet: LocalnetHandle;
  let upstream: Upstream;
  let market: FeeMarket;

  beforeAll(async () => {
    localnet = await startLocalnet({ blocks: [REAL_BLOCK_FILE], traffic: false, world: false });
    upstream = createUpstream({ chain: "localnet", rpcUrls: [localnet.rpcUrl] });
    market = createFeeMarket({ upstream, backfillSlots: 150 });
    await market.refresh();
  });
  afterAll(async () => {
    await market?.stop();
    await upstream?.close();
    await localnet?.stop();
  });

  const nonVote = referenceTransactions.filter((t) => !t.isVote);

  it("computes the global levels of the block's non-vote transactions", () => {
    const estimate = market.global();
    expect(estimate.source).toBe("blocks");
    expect(estimate.slot).toBeGreaterThan(REAL_BLOCK_SLOT);
    expect(estimate.sampleSize).toBe(nonVote.length);
    expect(estimate.priority).toMatchObject(referenceLevels(nonVote.map((t) => t.price)));
  });

  it("takes each write-locked account's market into account, account by account", () => {
    const global = referenceLevels(nonVote.map((t) => t.price));
    const accounts = [...new Set(nonVote.flatMap((t) => t.writable))];
    expect(accounts.length).toBeGreaterThan(20);
    let raised = 0;
    for (const account of accounts) {
      const own = referenceLevels(nonVote.filter((t) => t.writable.includes(account)).map((t) => t.price));
      const expected = {
        low: max(global.low, own.low),
        medium: max(global.medium, own.medium),
        high: max(global.high, own.high),
        veryHigh: max(global.veryHigh, own.veryHigh),
      };
      expect(market.forAccounts([account]).priority, account).toMatchObject(expected);
      if (expected.veryHigh > global.veryHigh) raised++;
    }
    expect(raised).toBeGreaterThan(0); // the block's one priced transaction lifts its payer's market
  });

  it("estimates the block's own transactions from their bytes", async () => {
    for (const reference of nonVote) {
      const estimate = await market.forTransaction(reference.wire);
      expect(estimate.writableAccounts).toEqual(reference.writable);
      const levels = [
        estimate.priority!.low,
        estimate.priority!.medium,
        estimate.priority!.high,
        estimate.priority!.veryHigh,
      ];
      if (reference.price === 100_000n) expect(levels).toEqual([100_000n, 100_000n, 100_000n, 100_000n]);
    }
  });
});

describe("fee market on live traffic", () => {
  // Background traffic from the localnet's own generator; the test adds its own priced transactions too.
  const traffic = parseTrafficConfig({ LOCALNET_TRAFFIC: "1" });
  const hot = planTraffic(traffic.options).hot[0] as Address;
  let localnet: LocalnetHandle;
  let upstream: Upstream;
  let market: FeeMarket;
  let client: Rpc<SolanaRpcApi>;
  let payers: KeyPairSigner[];

  beforeAll(async () => {
    localnet = await startLocalnet({ slotMs: 100, traffic: true, world: false });
    upstream = createUpstream({ chain: "localnet", rpcUrls: [localnet.rpcUrl] });
    market = createFeeMarket({ upstream, windowSlots: 30, pollIntervalMs: 50, maxCatchUpSlots: 30 });
    market.start();
    client = createSolanaRpc(localnet.rpcUrl) as Rpc<SolanaRpcApi>;
    payers = await Promise.all(Array.from({ length: 4 }, () => generateKeyPairSigner()));
    for (const payer of payers) await client.requestAirdrop(payer.address, lamports(10_000_000_000n)).send();
    await until(
      async () => (await client.getBalance(payers[3].address, { commitment: "confirmed" }).send()).value > 0n,
      "airdrops",
    );
  });
  afterAll(async () => {
    await market?.stop();
    await upstream?.close();
    await localnet?.stop();
  });

  async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Sends `count` transactions at `price` that each write-lock only their payer. */
  async function sendPriced(count: number, price: bigint): Promise<void> {
    const { value: blockhash } = await client.getLatestBlockhash().send();
    await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const payer = payers[i % payers.length];
        const message = pipe(
          createTransactionMessage({ version: 0 }),
          (m) => setTransactionMessageFeePayerSigner(payer, m),
          (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
          (m) =>
            appendTransactionMessageInstructions(
              [
                getSetComputeUnitPriceInstruction({ microLamports: price + BigInt(i) }), // distinct bytes, distinct signatures
                getTransferSolInstruction({ source: payer, destination: payer.address, amount: 1n }),
              ],
              m,
            ),
        );
        const signed = await signTransactionMessageWithSigners(message);
        await client
          .sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64", skipPreflight: true })
          .send();
      }),
    );
  }

  const ordered = (e: FeeEstimate) => {
    const p = e.priority!;
    return p.low <= p.medium && p.medium <= p.high && p.high <= p.veryHigh;
  };

  it("gives ordered levels, higher for a hot account, and moves when prices change", async () => {
    await until(() => market.global().source === "blocks" && market.global().sampleSize >= 150, "a window of traffic");
    const calm = market.global();
    expect(ordered(calm)).toBe(true);
    expect(calm.priority!.medium).toBeGreaterThan(0n);
    expect(calm.priority!.veryHigh).toBeGreaterThan(calm.priority!.low);

    // A draft that write-locks a hot account is priced from that account's dearer market.
    const estimate = await market.forTransaction(draftTransfer(payers[0].address, [hot]));
    expect(estimate.writableAccounts).toContain(hot);
    expect(ordered(estimate)).toBe(true);
    expect(estimate.priority!.medium).toBeGreaterThan(calm.priority!.medium);
    expect(market.priceFor("auto", [hot])).toBeGreaterThan(market.priceFor("auto", [])!);

    // The same, with the hot account loaded from a real lookup table made by the ALT program.
    const table = await createLookupTable(client, payers[1], [payers[2].address, hot]);
    const viaTable = await market.forTransaction(
      draftTransfer(payers[0].address, [hot], { [table]: [payers[2].address, hot] }),
    );
    expect(viaTable.writableAccounts).toEqual([payers[0].address, hot]);
    expect(viaTable.priority!.medium).toBeGreaterThan(calm.priority!.medium);

    // Prices jump: a burst of transactions bidding 1,000x the calm median, until they are a quarter of the window.
    const surge = calm.priority!.medium * 1000n;
    await until(async () => {
      await sendPriced(30, surge);
      return market.global().priority!.high >= surge;
    }, "the high level to follow the surge");
    const surged = market.global();
    expect(ordered(surged)).toBe(true);
    expect(surged.priority!.high).toBeGreaterThan(calm.priority!.high);
    expect(surged.priority!.veryHigh).toBeGreaterThanOrEqual(surge);
    expect(surged.updatedAt!.getTime()).toBeGreaterThan(calm.updatedAt!.getTime());

    // The surge ends: once its slots leave the 30-slot window, the levels come back down.
    await until(() => market.global().priority!.high < surge, "the surge to leave the window");
    expect(market.global().priority!.high).toBeLessThan(surged.priority!.high);
  });
});
