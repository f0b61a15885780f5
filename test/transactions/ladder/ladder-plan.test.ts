/** The ladder's plan and climb rule, pure: prices and offsets from the odds, and when the next rung is due. */
import { describe, expect, it } from "vitest";
import type { OddsAt } from "../../../src/fees/fee-odds.ts";
import { shouldClimb } from "../../../src/transactions/ladder/ladder-climb.ts";
import { MEANINGFUL_ODDS, planLadder, rungOffsets } from "../../../src/transactions/ladder/ladder-plan.ts";

/** A market where a price p lands within k slots with odds min(1, p * k / 1e6): cheaper needs longer. */
function linearOdds(k: number): OddsAt {
  const odds = (price: bigint) => Math.min(1, (Number(price) * k) / 1e6);
  const priceFor = (goal: number) => BigInt(Math.ceil((goal * 1e6) / k));
  return {
    withinSlots: k,
    odds,
    cheapest: (goal) => ({ price: priceFor(goal), odds: odds(priceFor(goal)) }),
    cheapestAbove: (floor) => ({ price: priceFor(floor), odds: odds(priceFor(floor)) }),
    curve: () => [],
  };
}

describe("ladder plan", () => {
  it("spreads the offsets over the deadline, keeping the top rung a fair share of it", () => {
    expect(rungOffsets(20, 4)).toEqual([0, 5, 10, 15]);
    expect(rungOffsets(20, 2)).toEqual([0, 10]);
    const eight = rungOffsets(20, 8);
    expect(eight[0]).toBe(0);
    expect(20 - eight[7]).toBeGreaterThanOrEqual(2);
  });

  it("prices the bottom rung at meaningful odds over the deadline and the top at the target in its slots left", () => {
    const plan = planLadder({ rungs: 4, deadlineSlots: 20, target: 0.9, maxK: 149, odds: linearOdds });
    expect(plan.map((r) => r.offset)).toEqual([0, 5, 10, 15]);
    // Bottom: odds 0.2 within 20 slots -> 10,000; top: 0.9 within the 5 slots left -> 180,000.
    expect(plan[0].price).toBe(10_000n);
    expect(plan[0].odds).toBeGreaterThanOrEqual(MEANINGFUL_ODDS);
    expect(plan[3].price).toBe(180_000n);
    expect(plan[3].odds).toBeGreaterThanOrEqual(0.9);
    for (let i = 1; i < plan.length; i++) expect(plan[i].price).toBeGreaterThan(plan[i - 1].price);
  });

  it("still rises strictly where everything lands for free, and without odds uses the market's levels", () => {
    const free: OddsAt = {
      withinSlots: 1,
      odds: () => 1,
      cheapest: () => ({ price: 0n, odds: 1 }),
      cheapestAbove: () => ({ price: 0n, odds: 1 }),
      curve: () => [],
    };
    const plan = planLadder({ rungs: 4, deadlineSlots: 20, target: 0.9, maxK: 149, odds: () => free });
    expect(plan.map((r) => r.price)).toEqual([1n, 2n, 3n, 4n]);
    const blind = planLadder({
      rungs: 3,
      deadlineSlots: 20,
      target: 0.9,
      maxK: 149,
      odds: () => undefined,
      fallback: { low: 100n, high: 10_000n },
    });
    expect(blind.map((r) => r.price)).toEqual([100n, 1_000n, 10_000n]);
    expect(blind.every((r) => r.odds === 0)).toBe(true);
  });
});

describe("climb rule", () => {
  const base = { rungs: 4, firstSlot: 100n, deadlineSlot: 120n, offsets: [0, 5, 10, 15], target: 0.9, current: 0 };

  it("keeps the current rung during its stay, and while its odds in the time left reach the target", () => {
    expect(shouldClimb({ ...base, slot: 102n, currentOdds: 0.3, topOdds: 1 })).toBe(false);
    expect(shouldClimb({ ...base, slot: 106n, currentOdds: 0.95, topOdds: 1 })).toBe(false);
  });

  it("climbs once the stay is over and the odds in the time left fall short", () => {
    expect(shouldClimb({ ...base, slot: 105n, currentOdds: 0.5, topOdds: 1 })).toBe(true);
    // Without a model, the plan alone.
    expect(shouldClimb({ ...base, slot: 104n })).toBe(false);
    expect(shouldClimb({ ...base, slot: 105n })).toBe(true);
  });

  it("climbs early when even the top rung would fall short by waiting (a market that jumped)", () => {
    expect(shouldClimb({ ...base, slot: 101n, currentOdds: 0.3, topOdds: 0.5 })).toBe(true);
  });

  it("climbs early off a rung the market left behind (odds below the meaningful floor)", () => {
    expect(shouldClimb({ ...base, slot: 101n, currentOdds: 0.05, topOdds: 1 })).toBe(true);
    expect(shouldClimb({ ...base, slot: 101n, currentOdds: 0.25, topOdds: 1 })).toBe(false);
  });

  it("never climbs past the top, nor after the deadline", () => {
    expect(shouldClimb({ ...base, current: 3, slot: 118n, currentOdds: 0, topOdds: 0 })).toBe(false);
    expect(shouldClimb({ ...base, slot: 120n, currentOdds: 0, topOdds: 0 })).toBe(false);
  });
});
