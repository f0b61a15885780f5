import { describe, expect, it } from "vitest";
import type { PricedTransaction } from "../../src/fees/block-transactions.ts";
import { REFERENCE_CANDIDATE, clearingOf, createBlockLoads } from "../../src/fees/landing-odds.ts";
import { REFERENCE_SHAPE, priorityOf, transactionCost } from "../../src/fees/transaction-cost.ts";

const UNITS = 200_000;
/** A transaction requesting 200,000 CU at `price`, writing `writable`. */
const tx = (price: bigint, writable: string[] = ["payer"]): PricedTransaction => ({
  price,
  writable,
  unitLimit: UNITS,
  signatures: 1,
  cost: transactionCost({
    signatures: 1,
    writableAccounts: writable.length,
    instructionDataBytes: 0,
    unitLimit: UNITS,
  }),
});
/** A block filled to within one transaction of the 60M limit (275 of ~217k CU) at prices from `low` upward. */
const fullBlock = (low: bigint, step = 10n) => Array.from({ length: 275 }, (_, i) => tx(low + BigInt(i) * step));

function feed(loads: ReturnType<typeof createBlockLoads>, blocks: PricedTransaction[][], from = 100n) {
  blocks.forEach((b, i) => loads.addBlock(from + BigInt(i), b));
}

describe("block loads and the inclusion curve", () => {
  it("reads from the newest blocks how long a price has been refused, and what cleared them all", () => {
    const loads = createBlockLoads({ windowSlots: 150, minBlocks: 8 });
    // 20 blocks full from 1,000 up, then 3 full from 10,000 up (the market jumped), then a skipped slot.
    feed(loads, [
      ...Array.from({ length: 20 }, () => fullBlock(1000n)),
      ...Array.from({ length: 3 }, () => fullBlock(10_000n)),
    ]);
    loads.advanceTo(123n);
    const curve = loads.curve(REFERENCE_CANDIDATE)!;
    const before = curve.cheapestClearing(1)!;
    const after = curve.clearedRecently(2)!;
    // 3 of the newest 4 (three of them new) is the new market; 3 of the newest 6 is the old one.
    expect(curve.clearedRecently(4, 3)).toBe(after);
    expect(curve.clearedRecently(6, 3)).toBeLessThan(2000n);
    expect(before).toBeLessThan(2000n);
    expect(after).toBeGreaterThan(10_000n);
    // A price that cleared the old market is refused by the 3 new blocks (the skipped slot does not count)...
    expect(curve.refusedSince(99n, before)).toEqual({ refused: 3, blocks: 23 });
    // ...only by those after its submission...
    expect(curve.refusedSince(121n, before)).toEqual({ refused: 1, blocks: 1 });
    // ...and a price that clears the new market is refused by none.
    expect(curve.refusedSince(99n, after)).toEqual({ refused: 0, blocks: 23 });
    // What cleared each of the newest 4 blocks includes the jump; each of the oldest alone does not.
    expect(curve.clearedRecently(4)).toBe(after);
    // A cheap block among the dear ones (a market swinging after its jump) does not reset the count.
    loads.addBlock(124n, fullBlock(1000n));
    loads.addBlock(125n, fullBlock(10_000n));
    expect(loads.curve(REFERENCE_CANDIDATE)!.refusedSince(99n, before)).toEqual({ refused: 4, blocks: 25 });
  });

  it("gives no odds until enough blocks were seen, then does", () => {
    const loads = createBlockLoads({ windowSlots: 150, withinSlots: 4, minBlocks: 32 });
    expect(loads.curve(REFERENCE_CANDIDATE)).toBeUndefined();
    feed(
      loads,
      Array.from({ length: 31 }, () => fullBlock(1000n)),
    );
    expect(loads.curve(REFERENCE_CANDIDATE)).toBeUndefined();
    loads.addBlock(131n, fullBlock(1000n));
    expect(loads.curve(REFERENCE_CANDIDATE)).toBeDefined();
  });

  it("clears empty blocks at priority 0, so any fee lands", () => {
    const loads = createBlockLoads({ windowSlots: 150, minBlocks: 8 });
    feed(
      loads,
      Array.from({ length: 20 }, () => [tx(0n), tx(5n)]),
    );
    const curve = loads.curve(REFERENCE_CANDIDATE)!;
    expect(curve.rawOdds(0n)).toBe(1);
    expect(curve.cheapestClearing(curve.runMinima.length)).toBe(0n);
  });

  it("puts the candidate after what outbid it: full blocks clear at their marginal priority", () => {
    const block = fullBlock(1000n);
    const loads = createBlockLoads({ windowSlots: 150, minBlocks: 8 });
    feed(
      loads,
      Array.from({ length: 20 }, () => block),
    );
    const curve = loads.curve(REFERENCE_CANDIDATE)!;
    const cost = transactionCost(REFERENCE_SHAPE);
    // To fit, the candidate displaces enough of the cheapest: it must beat the transaction at which the
    // better-paying ones reach the limit minus its own cost.
    const included = block.map((t) => ({ priority: priorityOf(t.price, REFERENCE_SHAPE, t.cost), cost: t.cost! }));
    included.sort((a, b) => b.priority - a.priority);
    let sum = 0;
    let marginal = 0;
    for (const e of included) {
      sum += e.cost;
      if (sum > 60_000_000 - cost) {
        marginal = e.priority;
        break;
      }
    }
    expect(curve.runMinima.every((m) => m === marginal)).toBe(true);
    const cheapest = curve.cheapestClearing(curve.runMinima.length)!;
    expect(priorityOf(cheapest, REFERENCE_SHAPE)).toBeGreaterThan(marginal);
    expect(priorityOf(cheapest - 1n, REFERENCE_SHAPE)).toBeLessThanOrEqual(marginal);
    expect(curve.rawOdds(cheapest)).toBe(1);
    expect(curve.rawOdds(cheapest - 1n)).toBe(0);
  });

  it("is monotone in the fee over mixed congestion, from 0 to 1", () => {
    const loads = createBlockLoads({ windowSlots: 150, minBlocks: 8 });
    // Congestion comes and goes in spells: calm blocks, then blocks bid up to different levels.
    const blocks = Array.from({ length: 150 }, (_, i) =>
      i % 30 < 10 ? [tx(0n)] : fullBlock(BigInt(((i * 7919) % 13) * 5000), 50n),
    );
    feed(loads, blocks);
    const curve = loads.curve(REFERENCE_CANDIDATE)!;
    let previous = -1;
    for (let price = 0n; price < 2_000_000n; price += 1000n) {
      const odds = curve.rawOdds(price);
      expect(odds).toBeGreaterThanOrEqual(previous);
      previous = odds;
    }
    expect(curve.rawOdds(0n)).toBeGreaterThan(0);
    expect(curve.rawOdds(0n)).toBeLessThan(1);
    expect(previous).toBe(1);
  });

  it("holds a write-locked account to its own limit: a hot account's writers must outbid its other writers", () => {
    // 55 writers of "hot" per block (11.96M), and 100 other transactions: the block has room, the hot
    // account (a 12M limit, agave's before SIMD-0306) does not once the candidate (217k) is added.
    const hot = (price: bigint) => tx(price, ["payer", "hot"]);
    const block = [
      ...Array.from({ length: 55 }, (_, i) => hot(10_000n + BigInt(i) * 100n)),
      ...Array.from({ length: 100 }, () => tx(0n)),
    ];
    const loads = createBlockLoads({ windowSlots: 150, minBlocks: 8, accountCuLimit: 12_000_000 });
    feed(
      loads,
      Array.from({ length: 20 }, () => block),
    );
    const elsewhere = loads.curve({ shape: REFERENCE_SHAPE, writable: ["cold"] })!;
    const onHot = loads.curve({ shape: REFERENCE_SHAPE, writable: ["hot"] })!;
    expect(elsewhere.rawOdds(0n)).toBe(1);
    expect(onHot.rawOdds(0n)).toBe(0);
    expect(onHot.cheapestClearing(onHot.runMinima.length)!).toBeGreaterThan(10_000n);
    expect(loads.contended(["hot"])).toBe(true);
    expect(loads.contended(["cold"])).toBe(false);
  });

  it("counts a slot without a block as one that lands nothing", () => {
    const loads = createBlockLoads({ windowSlots: 150, withinSlots: 2, minBlocks: 8 });
    // Blocks only every third slot: a run of 2 slots holds a block two times in three.
    for (let slot = 100n; slot < 250n; slot++) {
      if (slot % 3n === 0n) loads.addBlock(slot, [tx(0n)]);
      else loads.advanceTo(slot);
    }
    const odds = loads.curve(REFERENCE_CANDIDATE)!.rawOdds(1_000_000n);
    expect(odds).toBeGreaterThan(0.6);
    expect(odds).toBeLessThan(0.7);
  });

  it("leaves out the slots a send cannot reach: with the first reachable slot later, fewer blocks to land in", () => {
    const loads = createBlockLoads({ windowSlots: 150, withinSlots: 4, minBlocks: 8 });
    // Every other block is empty (clears at 0), the others full: within 4 slots there is always an empty one,
    // within slots 4..4 only half the time.
    feed(
      loads,
      Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? [tx(0n)] : fullBlock(1000n))),
    );
    expect(loads.curve(REFERENCE_CANDIDATE, 1)!.rawOdds(0n)).toBe(1);
    const late = loads.curve(REFERENCE_CANDIDATE, 4)!.rawOdds(0n);
    expect(late).toBeGreaterThan(0.4);
    expect(late).toBeLessThan(0.6);
  });

  it("refuses k outside 1 .. window - 1", () => {
    expect(() => createBlockLoads({ windowSlots: 150, withinSlots: 0 })).toThrow(/withinSlots/);
    expect(() => createBlockLoads({ windowSlots: 150, withinSlots: 150 })).toThrow(/withinSlots/);
  });

  it("clearingOf: room to spare clears at 0, a candidate over the limit never fits", () => {
    const load = { priorities: Float64Array.of(3, 2, 1), cumulative: Float64Array.of(10, 20, 30), total: 30 };
    expect(clearingOf(load, 40, 10)).toBe(0);
    expect(clearingOf(load, 40, 15)).toBe(1);
    expect(clearingOf(load, 40, 25)).toBe(2);
    expect(clearingOf(load, 40, 41)).toBe(Number.POSITIVE_INFINITY);
  });

  it("scores a price: raw odds below the model's edge, 1 + doublings of the priority past it", () => {
    // Blocks with room: every run clears at 0, so the edge is a zero price's own priority and its score is 1.
    const open = createBlockLoads({ windowSlots: 150, minBlocks: 8 });
    feed(
      open,
      Array.from({ length: 20 }, () => [tx(0n)]),
    );
    const roomy = open.curve(REFERENCE_CANDIDATE)!;
    expect(roomy.edge).toBe(priorityOf(0n, REFERENCE_SHAPE));
    expect(roomy.position(0n)).toEqual({ raw: 1, score: 1 });
    const paid = roomy.position(10_000n);
    expect(paid.raw).toBe(1);
    expect(paid.score).toBeCloseTo(1 + Math.log2(priorityOf(10_000n, REFERENCE_SHAPE) / roomy.edge!), 9);
    // Spells of congestion: below the edge the score is the raw odds; past it, it keeps rising with the fee.
    const mixed = createBlockLoads({ windowSlots: 150, minBlocks: 8 });
    feed(
      mixed,
      Array.from({ length: 150 }, (_, i) => (i % 30 < 10 ? [tx(0n)] : fullBlock(BigInt((i % 7) * 5000), 50n))),
    );
    const curve = mixed.curve(REFERENCE_CANDIDATE)!;
    const edgePrice = curve.priceAbove(curve.edge!)!;
    const below = curve.position(edgePrice - 1n);
    expect(below.raw).toBeLessThan(1);
    expect(below.score).toBe(below.raw);
    const at = curve.position(edgePrice);
    expect(at.raw).toBe(1);
    expect(at.score).toBeGreaterThanOrEqual(1);
    expect(at.score).toBeLessThan(1.001);
    const twice = curve.position(curve.priceAbove(2 * curve.edge!)!);
    expect(twice.raw).toBe(1);
    expect(twice.score).toBeCloseTo(2, 3);
    // Nothing ever cleared (every block over the candidate's account limit): no edge, the score is the raw odds.
    const blocked = createBlockLoads({ windowSlots: 150, minBlocks: 8, accountCuLimit: 100_000 });
    feed(
      blocked,
      Array.from({ length: 20 }, () => [tx(0n, ["payer", "hot"])]),
    );
    const never = blocked.curve({ shape: REFERENCE_SHAPE, writable: ["hot"] })!;
    expect(never.edge).toBeUndefined();
    expect(never.position(1_000_000n)).toEqual({ raw: 0, score: 0 });
  });

  it("puts a price whose priority ties with the edge at the edge (score 1), though ties lower its raw odds", () => {
    // Blocks that fill up with unpriced transactions of the candidate's own cost (every other spell of 10 slots)
    // cut at a zero price's own priority: a zero-price candidate ties with the transaction at the cut.
    const same = transactionCost(REFERENCE_SHAPE);
    const zero = (): PricedTransaction => ({
      price: 0n,
      writable: ["payer"],
      unitLimit: UNITS,
      signatures: 1,
      cost: same,
    });
    const loads = createBlockLoads({ windowSlots: 150, minBlocks: 8 });
    feed(
      loads,
      Array.from({ length: 150 }, (_, i) => (i % 20 < 10 ? [zero()] : Array.from({ length: 276 }, zero))),
    );
    const curve = loads.curve(REFERENCE_CANDIDATE)!;
    expect(curve.edge).toBe(priorityOf(0n, REFERENCE_SHAPE));
    const free = curve.position(0n);
    // The runs cut at the tie count the zero price as outbid, so its raw odds are below their most...
    expect(free.raw).toBeGreaterThan(0.3);
    expect(free.raw).toBeLessThan(0.9);
    // ...but it is at the edge: the score is 1 (the sends made there say how it lands), not its raw odds.
    expect(free.score).toBe(1);
    // A price of 1 outbids the tie: past the edge.
    const one = curve.position(1n);
    expect(one.raw).toBe(1);
    expect(one.score).toBeGreaterThan(1);
    expect(one.score).toBeLessThan(1.001);
  });

  it("weighs recent runs more: a market that rose is not read from its cheaper past alone", () => {
    // 100 slots of full blocks bid from 1,000, then 50 bid from 50,000: a price of 20,000 cleared the old runs only.
    const blocks = Array.from({ length: 150 }, (_, i) => fullBlock(i < 100 ? 1000n : 50_000n));
    const even = createBlockLoads({ windowSlots: 150, minBlocks: 8, halfLifeSlots: Number.POSITIVE_INFINITY });
    const recent = createBlockLoads({ windowSlots: 150, minBlocks: 8 });
    feed(even, blocks);
    feed(recent, blocks);
    const flat = even.curve(REFERENCE_CANDIDATE)!.rawOdds(20_000n);
    const weighted = recent.curve(REFERENCE_CANDIDATE)!.rawOdds(20_000n);
    expect(flat).toBeGreaterThan(0.6);
    expect(weighted).toBeLessThan(0.5);
    // Both still reach 1 past the newest blocks' clearing, and 0 below the oldest.
    expect(recent.curve(REFERENCE_CANDIDATE)!.rawOdds(60_000n)).toBe(1);
    expect(recent.curve(REFERENCE_CANDIDATE)!.rawOdds(0n)).toBe(0);
    expect(() => createBlockLoads({ windowSlots: 150, halfLifeSlots: 0 })).toThrow(/halfLifeSlots/);
  });
});
