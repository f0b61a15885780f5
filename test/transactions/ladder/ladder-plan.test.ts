/** The ladder's plan and climb rule, pure: prices and offsets from the odds, and when the next rung is due. */
import { describe, expect, it } from "vitest";
import type { OddsAt } from "../../../src/fees/fee-odds.ts";
import { REFUSED_BLOCKS, nextRung, shouldClimb } from "../../../src/transactions/ladder/ladder-climb.ts";
import {
  HEADROOM,
  MEANINGFUL_ODDS,
  TOP_STEP,
  hasHeadroom,
  planLadder,
  planOffsets,
  priorityScaleOf,
  rungOffsets,
} from "../../../src/transactions/ladder/ladder-plan.ts";
import { priorityOf } from "../../../src/fees/transaction-cost.ts";
import type { CostShape } from "../../../src/fees/transaction-cost.ts";

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
    refusedSince: () => ({ refused: 0, blocks: 0 }),
    clearedRecently: () => undefined,
  };
}

describe("ladder plan", () => {
  it("keeps half the deadline for the top rung and spreads the others over the first half", () => {
    expect(rungOffsets(20, 4)).toEqual([0, 3, 6, 10]);
    expect(rungOffsets(20, 2)).toEqual([0, 10]);
    const eight = rungOffsets(20, 8);
    expect(eight[0]).toBe(0);
    expect(20 - eight[7]).toBe(10);
    expect(rungOffsets(4, 3)).toEqual([0, 1, 2]);
  });

  it("prices the bottom rung at meaningful odds over the deadline and the top at the target in its slots left", () => {
    const plan = planLadder({ rungs: 4, deadlineSlots: 20, target: 0.9, maxK: 149, odds: linearOdds, headroom: 1 });
    expect(plan.map((r) => r.offset)).toEqual([0, 3, 6, 10]);
    // Bottom: odds 0.2 within 20 slots -> 10,000; the market: 0.9 within the 10 slots left -> 90,000, and the top
    // one step over it.
    expect(plan[0].price).toBe(10_000n);
    expect(plan[0].odds).toBeGreaterThanOrEqual(MEANINGFUL_ODDS);
    expect(plan[3].price).toBe(BigInt(Math.ceil(90_000 / TOP_STEP)));
    expect(plan[3].odds).toBeGreaterThanOrEqual(0.9);
    // Between: the odds a third and two thirds of the way to the target (25,491 and 47,620 here) are cheaper than
    // the market's price less a step per rung below the top, which the rungs take.
    expect(plan[2].price).toBe(BigInt(Math.floor(90_000 * TOP_STEP)));
    expect(plan[1].price).toBe(BigInt(Math.floor(90_000 * TOP_STEP ** 2)));
    for (let i = 1; i < plan.length; i++) expect(plan[i].price).toBeGreaterThan(plan[i - 1].price);
  });

  it("crowds the rungs where a sharp curve rises", () => {
    // Nothing lands below 1,000,000; from there the odds rise to 1 by 1,100,000.
    const sharp = (k: number): OddsAt => {
      const odds = (price: bigint) => Math.min(1, Math.max(0, (Number(price) - 1e6) / 1e5));
      const at = (goal: number) => BigInt(Math.ceil(1e6 + goal * 1e5));
      return {
        ...linearOdds(k),
        odds,
        cheapest: (g) => ({ price: at(g), odds: g }),
        cheapestAbove: (g) => ({ price: at(g), odds: g }),
      };
    };
    const plan = planLadder({ rungs: 4, deadlineSlots: 20, target: 0.9, maxK: 149, odds: sharp, headroom: 1 });
    expect(plan[0].price).toBe(1_020_000n);
    expect(plan[3].price).toBe(BigInt(Math.ceil(1_090_000 / TOP_STEP)));
    // The odds a third and two thirds of the way to the target are dearer here than the top's steps: they are taken.
    expect(plan[1].price).toBe(1_043_334n);
    expect(plan[2].price).toBe(1_066_667n);
    for (let i = 1; i < 3; i++) expect(Number(plan[i].price) / Number(plan[i - 1].price)).toBeLessThan(1.03);
  });

  it("never puts the top rung below what cleared in the newest blocks (a market the model has not caught up with)", () => {
    const plan = planLadder({
      rungs: 4,
      deadlineSlots: 20,
      target: 0.9,
      maxK: 149,
      odds: linearOdds,
      recent: 900_000n,
      headroom: 1,
    });
    expect(plan[3].price).toBe(BigInt(Math.ceil(900_000 / TOP_STEP)));
    expect(plan[2].price).toBe(BigInt(Math.floor(900_000 * TOP_STEP)));
    const calm = planLadder({
      rungs: 4,
      deadlineSlots: 20,
      target: 0.9,
      maxK: 149,
      odds: linearOdds,
      recent: 5n,
      headroom: 1,
    });
    expect(calm[3].price).toBe(BigInt(Math.ceil(90_000 / TOP_STEP)));
  });

  it("lifts the bottom rung to the cheapest price the newest blocks cleared, when they all refused the model's", () => {
    const base = { rungs: 4, deadlineSlots: 20, target: 0.9, maxK: 149, odds: linearOdds, headroom: 1 };
    // A market swinging between blocks that clear at 130,000 and at 4,000,000, which the model (10,000 at odds 0.2)
    // has not seen: the bottom is the cheap mode, the rest follow the market.
    const bimodal = planLadder({ ...base, recent: 4_000_000n, recentLow: 130_000n });
    expect(bimodal.map((r) => r.price)).toEqual([
      130_000n,
      BigInt(Math.floor(4_000_000 * TOP_STEP ** 2)),
      BigInt(Math.floor(4_000_000 * TOP_STEP)),
      BigInt(Math.ceil(4_000_000 / TOP_STEP)),
    ]);
    // Lifted to the market's edge (880,000 against 900,000): the rungs between it and the top spread evenly, not
    // bottom + 1 under market steps now below it.
    const edge = planLadder({ ...base, recent: 900_000n, recentLow: 880_000n });
    const prices = edge.map((r) => Number(r.price));
    expect(prices[0]).toBe(880_000);
    expect(prices[3]).toBe(Math.ceil(900_000 / TOP_STEP));
    for (const i of [1, 2]) {
      expect(prices[i] / prices[i - 1]).toBeCloseTo((prices[3] / prices[0]) ** (1 / 3), 3);
    }
    // Where the model's bet cleared one of the newest blocks, nothing changes.
    const calm = planLadder({ ...base, recent: 900_000n });
    expect(planLadder({ ...base, recent: 900_000n, recentLow: 4_000n })).toEqual(calm);
    expect(calm[0].price).toBe(10_000n);
  });

  it("still rises strictly where everything lands for free, and without odds uses the market's levels", () => {
    const free: OddsAt = {
      withinSlots: 1,
      odds: () => 1,
      cheapest: () => ({ price: 0n, odds: 1 }),
      cheapestAbove: () => ({ price: 0n, odds: 1 }),
      curve: () => [],
      refusedSince: () => ({ refused: 0, blocks: 0 }),
      clearedRecently: () => 0n,
    };
    const plan = planLadder({ rungs: 4, deadlineSlots: 20, target: 0.9, maxK: 149, odds: () => free, headroom: 1 });
    expect(plan.map((r) => r.price)).toEqual([1n, 2n, 3n, 4n]);
    const blind = planLadder({
      rungs: 3,
      deadlineSlots: 20,
      target: 0.9,
      maxK: 149,
      odds: () => undefined,
      fallback: { low: 100n, high: 10_000n },
      headroom: 1,
    });
    expect(blind.map((r) => r.price)).toEqual([100n, 9_300n, 10_753n]);
    expect(blind.every((r) => r.odds === 0)).toBe(true);
  });
});

describe("ladder plan on the scheduler's priority", () => {
  // A rung of the bench's hot-account transfer as PrepareLadder readies it: a signature, 3 write locks (the nonce's
  // too), a 1,825-CU limit and 96 KiB of loaded-accounts data; its cost is 3,477 CU, so half the signature fee (2,500
  // lamports) is worth more priority than a price of 1,000,000 µL/CU (1,825 lamports).
  const rung: CostShape = {
    signatures: 1,
    writableAccounts: 3,
    instructionDataBytes: 35,
    unitLimit: 1_825,
    loadedAccountsBytes: 96 * 1024,
  };
  const scale = priorityScaleOf(rung);
  const at = (price: bigint) => priorityOf(price, rung);

  it("converts both ways: the cheapest price at a priority, the dearest under it", () => {
    for (const price of [0n, 1n, 600_000n, 3_000_000n, 60_000_000n]) {
      const priority = at(price);
      expect(scale.priorityOf(price)).toBe(priority);
      expect(at(scale.priceAtLeast(priority))).toBeGreaterThanOrEqual(priority * (1 - 1e-9));
      expect(scale.priceAtLeast(priority)).toBeLessThanOrEqual(price);
      expect(at(scale.priceAtMost(priority))).toBeLessThanOrEqual(priority);
    }
    // A priority under what the rung has at 0: 0 either way.
    expect(scale.priceAtLeast(at(0n) / 2)).toBe(0n);
    expect(scale.priceAtMost(at(0n) / 2)).toBe(0n);
  });

  it("takes the steps and the headroom on the priority, where the signature fee outweighs the price", () => {
    // The market's price is 600,000 µL/CU (odds 0.9 within 10 slots); in price terms the headroom would be 12 x the
    // rung under it, 7.7M µL/CU: 14,000 lamports, 5.5 x its priority, where a tenfold jump of the others' fees moves
    // the price this rung needs far more than tenfold.
    const market = (k: number): OddsAt => ({
      ...linearOdds(k),
      cheapest: () => ({ price: 600_000n, odds: 0.9 }),
    });
    const plan = planLadder({ rungs: 4, deadlineSlots: 20, target: 0.9, maxK: 149, odds: market, scale });
    const prices = plan.map((r) => r.price);
    const top = prices[2];
    // The market's top: one step over the market's priority; the rung under it one step under.
    expect(at(top)).toBeCloseTo(at(600_000n) / TOP_STEP, 3);
    expect(at(prices[1])).toBeCloseTo(at(600_000n) * TOP_STEP, 3);
    // In price terms the steps are far wider than 0.93: the signature fee's share does not move with the price.
    expect(Number(prices[1]) / 600_000).toBeLessThan(0.8);
    // The headroom: HEADROOM x the priority of the rung under it.
    expect(at(prices[3])).toBeCloseTo(at(top) * HEADROOM, 3);
    expect(Number(prices[3]) / Number(top)).toBeGreaterThan(HEADROOM * 2);
    expect(hasHeadroom(prices)).toBe(true);
  });
});

describe("ladder plan with headroom on top", () => {
  it("puts the market's rungs as a ladder one rung shorter, and the top at HEADROOM times the rung under it", () => {
    const plan = planLadder({ rungs: 4, deadlineSlots: 20, target: 0.9, maxK: 149, odds: linearOdds });
    const market = planLadder({ rungs: 3, deadlineSlots: 20, target: 0.9, maxK: 149, odds: linearOdds, headroom: 1 });
    expect(plan.slice(0, 3)).toEqual(market);
    // The market's rungs: the bottom, the market's price less a step, and a step over it (90,000 here).
    expect(plan.map((r) => r.price).slice(0, 3)).toEqual([
      10_000n,
      BigInt(Math.floor(90_000 * TOP_STEP)),
      BigInt(Math.ceil(90_000 / TOP_STEP)),
    ]);
    expect(plan[3].price).toBe(BigInt(Math.ceil(Number(plan[2].price) * HEADROOM)));
    expect(plan.map((r) => r.offset)).toEqual([0, 5, 10, 13]);
    expect(planOffsets(20, 4, true)).toEqual([0, 5, 10, 13]);
    expect(hasHeadroom(plan.map((r) => r.price))).toBe(true);
    // Where everything lands for free the top still stands far above the rest, so the climb treats it as headroom.
    const free = planLadder({
      rungs: 4,
      deadlineSlots: 20,
      target: 0.9,
      maxK: 149,
      odds: () => ({
        ...linearOdds(1),
        cheapest: () => ({ price: 0n, odds: 1 }),
        cheapestAbove: () => ({ price: 0n, odds: 1 }),
      }),
    });
    expect(free.map((r) => r.price)).toEqual([1n, 2n, 3n, 36n]);
  });

  it("keeps two-rung ladders as they were, and reads headroom from the signed prices alone", () => {
    const two = planLadder({ rungs: 2, deadlineSlots: 20, target: 0.9, maxK: 149, odds: linearOdds });
    expect(two.map((r) => r.price)).toEqual([10_000n, BigInt(Math.ceil(90_000 / TOP_STEP))]);
    expect(planOffsets(20, 2, true)).toEqual([0, 10]);
    expect(hasHeadroom([1n, 2n, 8n])).toBe(true);
    expect(hasHeadroom([1n, 2n, 7n])).toBe(false);
    expect(hasHeadroom([100n, 200n, 400n, 800n])).toBe(false);
    expect(hasHeadroom([1n, 100n])).toBe(false);
  });
});

describe("climb rule", () => {
  const base = { rungs: 4, firstSlot: 100n, deadlineSlot: 120n, offsets: [0, 3, 6, 10], target: 0.9, current: 0 };

  it("keeps the current rung during its stay, and while its odds in the time left reach the target", () => {
    expect(shouldClimb({ ...base, slot: 102n, currentOdds: 0.3, topOdds: 1 })).toBe(false);
    expect(shouldClimb({ ...base, slot: 104n, currentOdds: 0.95, topOdds: 1 })).toBe(false);
  });

  it("climbs once the stay is over and the odds in the time left fall short", () => {
    expect(shouldClimb({ ...base, slot: 103n, currentOdds: 0.5, topOdds: 1 })).toBe(true);
    // Without a model, the plan alone.
    expect(shouldClimb({ ...base, slot: 102n })).toBe(false);
    expect(shouldClimb({ ...base, slot: 103n })).toBe(true);
  });

  it("climbs at once when the blocks refuse the current rung, whatever the model still says", () => {
    expect(shouldClimb({ ...base, slot: 102n, currentOdds: 0.95, topOdds: 1, refused: 2 })).toBe(false);
    expect(shouldClimb({ ...base, slot: 102n, currentOdds: 0.95, topOdds: 1, refused: 3 })).toBe(true);
    expect(shouldClimb({ ...base, current: 3, slot: 111n, refused: 5 })).toBe(false);
    // Blocks that went by without it count too, one more of them.
    const waited = (waitedBlocks: number) =>
      shouldClimb({ ...base, slot: 102n, currentOdds: 0.95, topOdds: 1, refused: 0, waitedBlocks });
    expect(waited(3)).toBe(false);
    expect(waited(4)).toBe(true);
  });

  it("keeps a bottom rung the newest blocks cleared twice as many refusing blocks, past its stay", () => {
    const view = { ...base, slot: 104n, currentOdds: 0.5, topOdds: 1, patient: true };
    // Past its stay with odds short of the target, and refused by 3 blocks of 4: it waits on.
    expect(shouldClimb({ ...view, refused: 3, waitedBlocks: 4 })).toBe(false);
    expect(shouldClimb({ ...view, patient: false, refused: 3, waitedBlocks: 4 })).toBe(true);
    // Refused by twice as many blocks, or as many without landing, it makes way.
    expect(shouldClimb({ ...view, refused: 2 * REFUSED_BLOCKS, waitedBlocks: 6 })).toBe(true);
    expect(shouldClimb({ ...view, refused: 0, waitedBlocks: 8 })).toBe(true);
    // Only the bottom rung waits so: a middle rung that the blocks cleared climbs as before.
    expect(shouldClimb({ ...view, current: 1, slot: 107n, refused: 3, waitedBlocks: 3 })).toBe(true);
    // The top's planned slot, and a market that leaves even the top short, still climb at once.
    expect(shouldClimb({ ...view, slot: 110n, refused: 0, waitedBlocks: 1 })).toBe(true);
    expect(shouldClimb({ ...view, slot: 101n, topOdds: 0.5 })).toBe(true);
  });

  it("sends the top rung at its planned slot whatever the model rates the current rung", () => {
    expect(shouldClimb({ ...base, current: 2, slot: 109n, currentOdds: 0.99, topOdds: 1 })).toBe(false);
    expect(shouldClimb({ ...base, current: 2, slot: 110n, currentOdds: 0.99, topOdds: 1 })).toBe(true);
    expect(shouldClimb({ ...base, current: 1, slot: 110n, currentOdds: 0.99, topOdds: 1 })).toBe(true);
  });

  it("climbs early when even the top rung would fall short by waiting (a market that jumped)", () => {
    expect(shouldClimb({ ...base, slot: 101n, currentOdds: 0.3, topOdds: 0.5 })).toBe(true);
  });

  it("climbs early off a rung the market left behind (odds below the meaningful floor)", () => {
    expect(shouldClimb({ ...base, slot: 101n, currentOdds: 0.05, topOdds: 1 })).toBe(true);
    expect(shouldClimb({ ...base, slot: 101n, currentOdds: 0.25, topOdds: 1 })).toBe(false);
  });

  it("with headroom on top: the rung under it takes the top's planned slot, and the top comes only on refusal", () => {
    const headroom = { ...base, offsets: [0, 5, 10, 13], headroom: true };
    // The rung under the top is sent at its planned slot whatever the model says, as the top was.
    expect(shouldClimb({ ...headroom, current: 1, slot: 110n, currentOdds: 0.99, topOdds: 1 })).toBe(true);
    // From it, neither the planned slot, nor the model's odds, nor a closing deadline climb: only the blocks.
    expect(shouldClimb({ ...headroom, current: 2, slot: 113n, currentOdds: 0.01, topOdds: 0 })).toBe(false);
    expect(shouldClimb({ ...headroom, current: 2, slot: 118n, currentOdds: 0, topOdds: 0, refused: 2 })).toBe(false);
    expect(shouldClimb({ ...headroom, current: 2, slot: 112n, currentOdds: 0.99, topOdds: 1, refused: 3 })).toBe(true);
    expect(shouldClimb({ ...headroom, current: 2, slot: 112n, waitedBlocks: 4 })).toBe(true);
    expect(shouldClimb({ ...headroom, current: 2, slot: 120n, refused: 5 })).toBe(false);
    // The same rung without headroom above it goes up at the top's planned slot.
    expect(shouldClimb({ ...base, current: 2, slot: 110n, currentOdds: 0.99, topOdds: 1 })).toBe(true);
  });

  it("never climbs past the top, nor after the deadline", () => {
    expect(shouldClimb({ ...base, current: 3, slot: 118n, currentOdds: 0, topOdds: 0 })).toBe(false);
    expect(shouldClimb({ ...base, slot: 120n, currentOdds: 0, topOdds: 0 })).toBe(false);
  });
});

describe("the rung the climb submits next", () => {
  it("skips the rungs every block since the current rung's submission refused, up to the top", () => {
    // 5 rungs, the current at 1: rungs 2 and 3 refused by all 4 blocks, so 4 (the top) is next.
    expect(nextRung(1, 5, [4, 4], 4)).toBe(4);
    // Rung 3 was taken by one of the blocks: the market may come back to it; rung 2 is skipped.
    expect(nextRung(1, 5, [4, 3], 4)).toBe(3);
    // Not every block refused rung 2: the next one, as before.
    expect(nextRung(1, 5, [3, 3], 4)).toBe(2);
  });

  it("skips nothing before the blocks have refused enough", () => {
    expect(nextRung(0, 4, [2, 2], 2)).toBe(1);
    expect(nextRung(0, 4, [REFUSED_BLOCKS, REFUSED_BLOCKS], REFUSED_BLOCKS)).toBe(3);
    // Never past the top, whatever the counts say.
    expect(nextRung(2, 4, [], 10)).toBe(3);
  });

  it("never skips to a headroom top: it stops at the market's top", () => {
    // 5 rungs with headroom: from rung 1, rungs 2 and 3 refused by every block: the market's top (3), not 4.
    expect(nextRung(1, 5, [4, 4, 4], 4, true)).toBe(3);
    // From the market's top the headroom is simply the next rung (its own rule decides when).
    expect(nextRung(3, 5, [], 4, true)).toBe(4);
  });
});
