/**
 * Landing odds on the real localnet with congestion: the localnet's `congested` traffic profile packs blocks
 * as agave does (its limits scaled down to 6M per block so that this machine can bring the demand), and the
 * fee market, through the real upstream module, quotes odds from what the blocks included.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  generateKeyPairSigner,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
} from "@solana/kit";
import type { Address, Blockhash } from "@solana/kit";
import { getSetComputeUnitLimitInstruction } from "@solana-program/compute-budget";
import { getTransferSolInstruction } from "@solana-program/system";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import { parseTrafficConfig, planTraffic } from "@solgate/localnet/testing";
import { createFeeMarket } from "../../src/fees/fee-market.ts";
import type { FeeMarket } from "../../src/fees/fee-market.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";

const BLOCK_LIMIT = 6_000_000;
const ACCOUNT_LIMIT = 2_400_000;

/** An unsigned draft from `payer` to `destination`, with a compute-unit limit or none at all. */
function draft(payer: Address, destination: Address, units?: number): Uint8Array {
  const signer = createNoopSigner(payer);
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(signer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: "11111111111111111111111111111111" as Blockhash, lastValidBlockHeight: 0n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstructions(
        [
          ...(units === undefined ? [] : [getSetComputeUnitLimitInstruction({ units })]),
          getTransferSolInstruction({ source: signer, destination, amount: 1n }),
        ],
        m,
      ),
  );
  return new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)));
}

describe("landing odds on a congested localnet", () => {
  const trafficEnv = { LOCALNET_TRAFFIC: "congested", LOCALNET_BLOCK_CU_LIMIT: String(BLOCK_LIMIT) };
  let hot: Address;
  let localnet: LocalnetHandle;
  let upstream: Upstream;
  let market: FeeMarket;
  let payer: Address;
  let cold: Address;

  beforeAll(async () => {
    const traffic = parseTrafficConfig(trafficEnv);
    hot = planTraffic(traffic.options).hot[0] as Address;
    localnet = await startLocalnet({
      slotMs: 200,
      traffic: { profile: "congested" },
      blockCostLimit: BLOCK_LIMIT,
      accountCostLimit: ACCOUNT_LIMIT,
      world: false,
    });
    upstream = createUpstream({ chain: "localnet", rpcUrls: [localnet.rpcUrl] });
    market = createFeeMarket({
      upstream,
      windowSlots: 60,
      pollIntervalMs: 100,
      maxCatchUpSlots: 60,
      backfillSlots: 1,
      oddsMinBlocks: 20,
      blockCuLimit: BLOCK_LIMIT,
      accountCuLimit: ACCOUNT_LIMIT,
    });
    payer = (await generateKeyPairSigner()).address;
    cold = (await generateKeyPairSigner()).address;
  }, 60_000);
  afterAll(async () => {
    await market?.stop();
    await upstream?.close();
    await localnet?.stop();
  });

  it("gives no odds until enough blocks were seen, then odds that rise with the fee", async () => {
    await market.refresh();
    expect(market.odds.stats().blocks).toBeLessThan(20);
    const early = market.global();
    expect(early.priority?.odds).toBeUndefined();
    market.start();
    const deadline = Date.now() + 90_000;
    while (market.global().priority?.odds === undefined) {
      if (Date.now() > deadline) throw new Error("no odds after 90 s");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(market.odds.stats().blocks).toBeGreaterThanOrEqual(20);
    const { priority } = market.global();
    const odds = priority!.odds!;
    expect(odds.withinSlots).toBe(4);
    expect(odds.low).toBeLessThanOrEqual(odds.medium);
    expect(odds.medium).toBeLessThanOrEqual(odds.high);
    expect(odds.high).toBeLessThanOrEqual(odds.veryHigh);
    for (const value of Object.values(odds)) expect(value).toBeGreaterThanOrEqual(0);
    // Blocks are full: a 200,000-CU transaction paying nothing does not get in, so the rule asks for a price.
    expect(priority!.recommended).toBeGreaterThan(0n);
    expect(odds.recommended).toBeGreaterThanOrEqual(0.9);
  }, 120_000);

  it("prices a draft on the hot account dearer than one elsewhere, for the same odds target", async () => {
    const onHot = await market.forTransaction(draft(payer, hot, 200_000));
    const elsewhere = await market.forTransaction(draft(payer, cold, 200_000));
    expect(onHot.writableAccounts).toContain(hot);
    expect(onHot.priority!.odds).toBeDefined();
    expect(elsewhere.priority!.odds).toBeDefined();
    expect(onHot.priority!.recommended).toBeGreaterThan(elsewhere.priority!.recommended);
  });

  it("costs a draft without compute-budget instructions with agave's defaults (a transfer: 3,000 CU)", async () => {
    // A transfer alone requests 3,000 CU: far cheaper to pack than the same transfer asking 1,400,000.
    const bare = await market.forTransaction(draft(payer, cold));
    const big = await market.forTransaction(draft(payer, cold, 1_400_000));
    expect(bare.priority!.odds).toBeDefined();
    expect(bare.priority!.recommended).toBeLessThan(big.priority!.recommended);
    expect(bare.priority!.odds!.medium).toBeGreaterThanOrEqual(big.priority!.odds!.medium);
  });
});
