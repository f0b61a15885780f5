/**
 * Background traffic end to end: a localnet launched with LOCALNET_TRAFFIC=1 (no world), read over
 * JSON-RPC. getBlock shows transactions with non-zero, varied compute-unit prices and some
 * failures; getRecentPrioritizationFees shows the hot accounts' market dearer than a cold one's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import bs58 from "bs58";
import { planTraffic } from "../../src/traffic/traffic-generator.ts";
import { DEFAULT_TRAFFIC_OPTIONS } from "../../src/traffic/traffic-options.ts";
import { COMPUTE_BUDGET_PROGRAM } from "../../src/traffic/transfer-transaction.ts";
import { startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

let net: TestLocalnet;
const plan = planTraffic(DEFAULT_TRAFFIC_OPTIONS);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

beforeAll(async () => {
  net = await startTestLocalnet({ slotMs: 60, world: false, traffic: true });
  // enough slots of traffic for a market to show
  await waitFor(
    "40 slots",
    async () => ((await net.call("getSlot", [{ commitment: "confirmed" }])).result as number) >= 40,
    30_000,
  );
});

afterAll(async () => {
  await net?.stop();
});

/** Compute-unit price a transaction of getBlock's json encoding sets (0 when none). */
function unitPrice(tx: any): number {
  const keys: string[] = tx.transaction.message.accountKeys;
  for (const ix of tx.transaction.message.instructions) {
    if (keys[ix.programIdIndex] !== COMPUTE_BUDGET_PROGRAM) continue;
    const data = Buffer.from(bs58.decode(ix.data));
    if (data[0] === 3) return Number(data.readBigUInt64LE(1));
  }
  return 0;
}

describe("background traffic", () => {
  it("carries traffic from the first block on (its fee data is there one slot after start)", async () => {
    const genesis = Number((await net.handle.status()).genesisSlot);
    const block = (
      await net.call("getBlock", [
        genesis + 1,
        { encoding: "json", maxSupportedTransactionVersion: 0, rewards: false, commitment: "confirmed" },
      ])
    ).result;
    expect(block.transactions.length).toBe(DEFAULT_TRAFFIC_OPTIONS.ratePerSlot);
  });

  it("fills blocks with priced, varied transactions, some failing", async () => {
    const tip = (await net.call("getSlot", [{ commitment: "confirmed" }])).result as number;
    const prices: number[] = [];
    let failed = 0;
    for (let slot = tip - 20; slot <= tip; slot++) {
      const block = (
        await net.call("getBlock", [
          slot,
          { encoding: "json", maxSupportedTransactionVersion: 0, rewards: false, commitment: "confirmed" },
        ])
      ).result;
      expect(block.transactions.length).toBe(DEFAULT_TRAFFIC_OPTIONS.ratePerSlot);
      for (const tx of block.transactions) {
        prices.push(unitPrice(tx));
        if (tx.meta.err !== null) failed++;
        expect(tx.meta.fee).toBeGreaterThanOrEqual(5000);
      }
    }
    expect(prices.filter((p) => p > 0).length / prices.length).toBeGreaterThan(0.8);
    expect(new Set(prices).size).toBeGreaterThan(prices.length / 2);
    expect(Math.max(...prices)).toBeGreaterThan(5 * median(prices.filter((p) => p > 0))); // a tail
    expect(failed).toBeGreaterThan(0);
  });

  it("prices the hot accounts' market above a cold account's", async () => {
    const fees = async (accounts: string[]) =>
      (
        (await net.call("getRecentPrioritizationFees", [accounts])).result as {
          slot: number;
          prioritizationFee: number;
        }[]
      ).filter((f) => f.slot > 2);
    const hot = await fees([plan.hot[0]]);
    const cold = await fees([plan.cold[0]]);
    expect(hot.length).toBeGreaterThan(30);
    const hotValues = hot.map((f) => f.prioritizationFee);
    expect(hotValues.filter((v) => v > 0).length).toBeGreaterThan(hot.length / 2);
    expect(new Set(hotValues).size).toBeGreaterThan(10);
    expect(median(hotValues)).toBeGreaterThanOrEqual(DEFAULT_TRAFFIC_OPTIONS.hotFloorPrice);
    expect(median(hotValues)).toBeGreaterThan(4 * median(cold.map((f) => f.prioritizationFee)));
    const all = await fees(plan.hot);
    expect(median(all.map((f) => f.prioritizationFee))).toBeGreaterThanOrEqual(median(hotValues));
  });

  it("scales the traffic's prices at run time (localnet_setTrafficPriceScale), and refuses a bad scale", async () => {
    const blockPrices = async (from: number, to: number) => {
      const prices: number[] = [];
      for (let slot = from; slot <= to; slot++) {
        const block = (
          await net.call("getBlock", [
            slot,
            { encoding: "json", maxSupportedTransactionVersion: 0, rewards: false, commitment: "confirmed" },
          ])
        ).result;
        for (const tx of block.transactions) prices.push(unitPrice(tx));
      }
      return prices.filter((p) => p > 0);
    };
    const confirmed = async () => (await net.call("getSlot", [{ commitment: "confirmed" }])).result as number;
    const before = await confirmed();
    expect((await net.call("localnet_setTrafficPriceScale", [10])).result).toEqual({ priceScale: 10 });
    try {
      await waitFor("20 slots at the new scale", async () => (await confirmed()) >= before + 22, 30_000);
      const old = await blockPrices(before - 20, before);
      const scaled = await blockPrices(before + 2, before + 22);
      expect(median(scaled)).toBeGreaterThan(5 * median(old));
    } finally {
      await net.call("localnet_setTrafficPriceScale", [1]);
    }
    for (const bad of [0, -1, "10", 1e9, null]) {
      const answer = await net.call("localnet_setTrafficPriceScale", [bad]);
      expect(answer.error?.code).toBe(-32602);
      expect(answer.error?.message).toMatch(/price scale/);
    }
  });
});
