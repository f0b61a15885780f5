import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Address } from "@solana/kit";
import { createFeeMarket } from "../../src/fees/fee-market.ts";
import type { FeeMarketOptions } from "../../src/fees/fee-market.ts";
import { levelsOf } from "../../src/fees/percentile.ts";
import { ADDRESS_LOOKUP_TABLE_PROGRAM } from "../../src/solana/program-ids.ts";
import { isSolgateError } from "../../src/errors.ts";
import { createScriptedNode, lookupTableData, pricedTransaction, randomAddress } from "./scripted-node.ts";

const mainnetRecentFees = JSON.parse(
  readFileSync(
    new URL("../fixtures/solana/rpc/getRecentPrioritizationFees_mainnet_slot338225766-338225915.json", import.meta.url),
    "utf8",
  ),
).result as { slot: number; prioritizationFee: number }[];

function setup(options: Partial<FeeMarketOptions> = {}) {
  const node = createScriptedNode();
  let clock = 1_700_000_000_000;
  const market = createFeeMarket({ upstream: { rpc: node.rpc }, now: () => clock, ...options });
  return { node, market, advance: (ms: number) => (clock += ms), now: () => clock };
}

/** Fills slots [from, to] with one block each of transactions at these prices (fresh payers). */
function fill(
  node: ReturnType<typeof createScriptedNode>,
  from: bigint,
  to: bigint,
  prices: bigint[],
  writable: Address[] = [],
) {
  for (let slot = from; slot <= to; slot++)
    node.block(
      slot,
      prices.map((price) => pricedTransaction({ price, writable })),
    );
  node.tip = to;
}

describe("fee market", () => {
  it("says it has no data rather than inventing numbers", async () => {
    const { node, market } = setup();
    expect(market.global()).toMatchObject({ source: "none", priority: undefined, slot: 0n, sampleSize: 0 });
    expect(market.global().baseFee).toEqual({ lamportsPerSignature: 5000n, signatures: 1, lamports: 5000n });
    expect(market.priceFor("auto", [])).toBeUndefined();
    // Blocks that carry no non-vote transaction are no market either.
    node.block(1n, []);
    node.tip = 1n;
    await market.refresh();
    expect(market.global()).toMatchObject({ source: "none", priority: undefined, slot: 1n });
  });

  it("passes the odds' margin on to the rule (oddsConfidence: the calibration bench sets it), and refuses a negative one", () => {
    expect(() => setup({ oddsConfidence: -1 })).toThrow(/confidence must be at least 0, got -1/);
    expect(() => setup({ oddsConfidence: 0.5 })).not.toThrow();
  });

  it("reads the blocks at once when a block is announced, and once more for one announced during that read", async () => {
    const listeners = new Set<() => void>();
    const announce = () => {
      for (const listener of listeners) listener();
    };
    const announcements = {
      onBlock(listener: () => void) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    // No poll within the test: every read after the first is an announcement's.
    const { node, market } = setup({ announcements, pollIntervalMs: 600_000 });
    fill(node, 1n, 3n, [5_000n]);
    market.start();
    await expect.poll(() => market.global().slot).toBe(3n);
    const slotReads = node.calls.getSlot ?? 0;
    fill(node, 4n, 4n, [5_000n]);
    announce();
    // Announced while that read runs: one more read follows, which sees slot 5.
    fill(node, 5n, 5n, [5_000n]);
    announce();
    await expect.poll(() => market.global().slot).toBe(5n);
    expect(node.calls.getSlot).toBe(slotReads + 2);
    await market.stop();
    expect(listeners.size).toBe(0);
  });

  it("computes nearest-rank levels over the window, with recommended = medium within floor and ceiling", async () => {
    const { node, market } = setup({ recommendedFloor: 7_000n, recommendedCeiling: 1_000_000n });
    const prices = [0n, 0n, 1_000n, 5_000n, 10_000n, 20_000n, 50_000n, 2_000_000n];
    fill(node, 1n, 5n, prices);
    await market.refresh();
    const estimate = market.global();
    const expected = levelsOf(Array.from({ length: 5 }, () => prices).flat())!;
    expect(estimate.source).toBe("blocks");
    expect(estimate.priority).toEqual({ ...expected, recommended: 7_000n, unit: "microLamportsPerComputeUnit" });
    // Backfill started at slot 0 (skipped here): the window covers 0..5.
    expect(estimate).toMatchObject({ slot: 5n, windowSlots: 6, sampleSize: 40, writableAccounts: [] });
    expect(estimate.updatedAt).toBeInstanceOf(Date);
    // Prices with no compute-budget instruction count as 0.
    node.block(
      6n,
      Array.from({ length: 40 }, () => pricedTransaction({})),
    );
    node.tip = 6n;
    await market.refresh();
    expect(market.global().priority!.medium).toBe(0n);
    expect(market.global().priority!.recommended).toBe(7_000n);
  });

  it("answers GetFees-style reads from memory, without upstream calls", async () => {
    const { node, market } = setup();
    fill(node, 1n, 3n, [5n, 6n]);
    await market.refresh();
    const before = { ...node.calls };
    for (let i = 0; i < 1000; i++) market.global();
    market.forAccounts([randomAddress()]);
    market.priceFor("high", []);
    expect(node.calls).toEqual(before);
    expect(market.global()).toBe(market.global()); // the same object until the window moves
  });

  it("takes, level by level, the maximum of the global levels and those of each write-locked account", async () => {
    const { node, market } = setup();
    const pool = randomAddress();
    const quiet = randomAddress();
    for (let slot = 1n; slot <= 3n; slot++) {
      node.block(slot, [
        ...Array.from({ length: 40 }, () => pricedTransaction({ price: 100n })),
        pricedTransaction({ price: 90_000n, writable: [pool] }),
        pricedTransaction({ price: 80_000n, writable: [pool] }),
        pricedTransaction({ price: 1n, writable: [quiet] }),
      ]);
    }
    node.tip = 3n;
    await market.refresh();
    const global = market.global().priority!;
    const forPool = market.forAccounts([quiet, pool, pool]);
    const poolLevels = levelsOf([90_000n, 80_000n, 90_000n, 80_000n, 90_000n, 80_000n])!;
    expect(forPool.writableAccounts).toEqual([quiet, pool]);
    expect(forPool.priority).toMatchObject(poolLevels);
    expect(poolLevels.low).toBeGreaterThan(global.veryHigh);
    // An account quieter than the market never lowers a level.
    expect(market.forAccounts([quiet]).priority).toEqual(global);
    expect(market.priceFor("low", [pool])).toBe(poolLevels.low);
    expect(market.priceFor("auto", [pool])).toBe(poolLevels.medium);
    expect(market.priceFor("medium", [])).toBe(global.medium);
    expect(market.priceFor("high", [])).toBe(global.high);
  });

  it("slides the window and tolerates skipped and late slots", async () => {
    const { node, market } = setup({ windowSlots: 10 });
    fill(node, 1n, 5n, [1_000n]);
    await market.refresh();
    expect(market.global().priority!.medium).toBe(1_000n);
    // Slots 6..12 skipped, 13 not available yet, then cheap blocks.
    for (let slot = 14n; slot <= 16n; slot++) node.block(slot, [pricedTransaction({ price: 3n })]);
    node.slots.set(13n, { kind: "not-available" });
    node.tip = 16n;
    await market.refresh();
    // Stops before 13 and waits for it; the window still holds slots 1-5.
    expect(market.status().follower.nextSlot).toBe(13n);
    node.block(13n, [pricedTransaction({ price: 3n })]);
    await market.refresh();
    expect(market.global()).toMatchObject({ slot: 16n, sampleSize: 4 }); // 1..6 left the window (7..16)
    expect(market.global().priority!.veryHigh).toBe(3n);
    // A slot that stays "not available" is given up after a few ticks.
    node.slots.set(17n, { kind: "not-available" });
    node.block(18n, [pricedTransaction({ price: 4n })]);
    node.tip = 18n;
    for (let i = 0; i < 3; i++) await market.refresh();
    expect(market.global().slot).toBe(18n);
  });

  it("catches up boundedly after a gap", async () => {
    const { node, market } = setup({ maxCatchUpSlots: 8 });
    fill(node, 1n, 2n, [10n]);
    await market.refresh();
    node.tip = 10_000n;
    fill(node, 9_990n, 10_000n, [20n]);
    const before = node.calls.getBlock;
    await market.refresh();
    expect(node.calls.getBlock - before).toBeLessThanOrEqual(8 + 4); // at most the catch-up span, plus reads in flight
    expect(market.status().follower.droppedSlots).toBe(10_000n - 8n - 2n);
    expect(market.global()).toMatchObject({ source: "blocks", slot: 10_000n });
    expect(market.global().priority!.low).toBe(20n);
  });

  it("falls back to getRecentPrioritizationFees when the provider refuses getBlock, and says so", async () => {
    const { node, market } = setup();
    node.refuseGetBlock = true;
    node.tip = 338225915n;
    node.recentFees = mainnetRecentFees;
    await market.refresh();
    const estimate = market.global();
    const expected = levelsOf(mainnetRecentFees.map((e) => BigInt(e.prioritizationFee)))!;
    expect(estimate.source).toBe("recentPrioritizationFees");
    expect(estimate.priority).toMatchObject(expected);
    expect(estimate).toMatchObject({
      slot: 338225915n,
      sampleSize: mainnetRecentFees.length,
      windowSlots: mainnetRecentFees.length,
    });
    expect(expected.veryHigh).toBeGreaterThan(0n);
    // Reads still come from memory.
    const calls = { ...node.calls };
    market.global();
    market.forAccounts([randomAddress()]);
    expect(node.calls).toEqual(calls);
  });

  it("falls back after repeated failures, retries blocks later, and returns to them", async () => {
    const { node, market, advance } = setup({ failureThreshold: 2, blockRetryMs: 5_000 });
    fill(node, 1n, 3n, [42n]);
    await market.refresh();
    expect(market.global().source).toBe("blocks");
    node.down = true;
    await market.refresh();
    expect(market.global().source).toBe("blocks"); // one failure is not an outage
    await market.refresh();
    expect(market.global()).toMatchObject({ source: "blocks", slot: 3n }); // fallback failed too: keep the last real data
    node.down = false;
    node.recentFees = [{ slot: 4, prioritizationFee: 7 }];
    advance(10_000);
    node.refuseGetBlock = true;
    node.tip = 4n;
    await market.refresh();
    expect(market.global()).toMatchObject({ source: "recentPrioritizationFees", slot: 4n });
    // Blocks are not retried on every tick while refused...
    const getBlocks = node.calls.getBlock;
    advance(1_000);
    await market.refresh();
    expect(node.calls.getBlock).toBe(getBlocks);
    // ...but are after blockRetryMs, and the market goes back to them.
    node.refuseGetBlock = false;
    fill(node, 4n, 6n, [43n]);
    advance(5_000);
    await market.refresh();
    expect(market.global()).toMatchObject({ source: "blocks", slot: 6n });
  });

  it("falls back when blocks stop arriving (a run of unreadable slots)", async () => {
    const { node, market } = setup({ maxCatchUpSlots: 5, maxLagSlots: 5 });
    fill(node, 1n, 2n, [5n]);
    await market.refresh();
    node.recentFees = [{ slot: 30, prioritizationFee: 99 }];
    node.tip = 30n; // 3..30 all skipped
    await market.refresh();
    expect(market.global()).toMatchObject({ source: "recentPrioritizationFees", slot: 30n });
  });

  it("estimates a draft transaction, resolving write locks loaded from lookup tables (cached)", async () => {
    const { node, market } = setup();
    const pool = randomAddress();
    const table = randomAddress();
    const tableAddresses = [randomAddress(), pool];
    node.accounts.set(table, { owner: ADDRESS_LOOKUP_TABLE_PROGRAM, data: lookupTableData(tableAddresses) });
    fill(node, 1n, 1n, [10n, 10n, 10n]);
    node.block(2n, [pricedTransaction({ price: 5_000n, writable: [pool] })]);
    node.tip = 2n;
    await market.refresh();
    const draft = pricedTransaction({
      writable: [pool],
      tables: { [table]: tableAddresses } as Record<Address, Address[]>,
    });
    const estimate = await market.forTransaction(draft);
    expect(estimate.writableAccounts).toContain(pool);
    expect(estimate.priority!.low).toBe(5_000n);
    expect(estimate.baseFee).toEqual({ lamportsPerSignature: 5000n, signatures: 1, lamports: 5000n });
    expect(market.global().priority!.veryHigh).toBe(5_000n);
    expect(market.global().priority!.low).toBe(10n);
    await market.forTransaction(draft);
    expect(node.calls.getMultipleAccounts).toBe(1);
  });

  it("rejects bad drafts with INVALID_TRANSACTION and says what is wrong", async () => {
    const { node, market } = setup();
    const reasonOf = async (bytes: Uint8Array) => {
      try {
        await market.forTransaction(bytes);
      } catch (error) {
        expect(isSolgateError(error)).toBe(true);
        return `${(error as { reason: string }).reason}: ${(error as Error).message}`;
      }
      throw new Error("accepted");
    };
    expect(await reasonOf(new Uint8Array())).toMatch(/^INVALID_TRANSACTION: transaction is empty/);
    expect(await reasonOf(new Uint8Array([1, 2, 3]))).toMatch(/^INVALID_TRANSACTION: .*truncated/);
    const missing = randomAddress();
    const pool = randomAddress();
    expect(
      await reasonOf(
        pricedTransaction({ writable: [pool], tables: { [missing]: [pool] } as Record<Address, Address[]> }),
      ),
    ).toBe(`INVALID_TRANSACTION: address lookup table ${missing} does not exist`);
    const notTable = randomAddress();
    node.accounts.set(notTable, { owner: "11111111111111111111111111111111", data: new Uint8Array(88) });
    expect(
      await reasonOf(
        pricedTransaction({ writable: [pool], tables: { [notTable]: [pool] } as Record<Address, Address[]> }),
      ),
    ).toMatch(/is not an address lookup table/);
  });

  it("in fallback, asks the node about a transaction's accounts", async () => {
    const { node, market } = setup();
    node.refuseGetBlock = true;
    node.tip = 10n;
    node.recentFees = [{ slot: 10, prioritizationFee: 100 }];
    const hot = randomAddress();
    const payer = randomAddress();
    node.recentFeesFor.set([payer, hot].join(","), [{ slot: 10, prioritizationFee: 9_000 }]);
    await market.refresh();
    const estimate = await market.forTransaction(pricedTransaction({ payer, writable: [hot] }));
    expect(node.recentFeesParams.at(-1)).toEqual([payer, hot]);
    expect(estimate).toMatchObject({ source: "recentPrioritizationFees" });
    expect(estimate.priority).toMatchObject({ low: 9_000n, veryHigh: 9_000n, recommended: 9_000n });
    expect(market.global().priority!.veryHigh).toBe(100n);
  });

  it("starts and stops its polling loop cleanly", async () => {
    const { node, market } = setup({ pollIntervalMs: 5 });
    fill(node, 1n, 2n, [1n]);
    market.start();
    market.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(node.calls.getSlot).toBeGreaterThan(2);
    await market.stop();
    const calls = node.calls.getSlot;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(node.calls.getSlot).toBe(calls);
    expect(market.global().source).toBe("blocks");
  });
});
