import { describe, expect, it } from "vitest";
import type { PricedTransaction } from "../../src/fees/block-transactions.ts";
import { createFeeOdds } from "../../src/fees/fee-odds.ts";
import { createFeeWindow } from "../../src/fees/fee-window.ts";
import { REFERENCE_CANDIDATE } from "../../src/fees/landing-odds.ts";
import { REFERENCE_SHAPE, transactionCost } from "../../src/fees/transaction-cost.ts";

const levels = { low: 1_000n, medium: 5_000n, high: 20_000n, veryHigh: 100_000n };
const bounds = { floor: 0n, ceiling: undefined };
const cost = transactionCost({ signatures: 1, writableAccounts: 1, instructionDataBytes: 0, unitLimit: 200_000 });
const tx = (price: bigint, signature?: Uint8Array): PricedTransaction => ({
  price,
  writable: ["payer"],
  unitLimit: 200_000,
  signatures: 1,
  cost,
  signature,
});
/** 276 transactions of ~217k CU: a full 60M block, bid from `low` upward. */
const full = (low: bigint, extra: PricedTransaction[] = []) => [
  ...Array.from({ length: 276 - extra.length }, (_, i) => tx(low + BigInt(i))),
  ...extra,
];
const signature = (n: number) =>
  Uint8Array.from({ length: 64 }, (_, i) => (i === 0 ? n & 255 : i === 1 ? (n >> 8) & 255 : i));

describe("fee odds: quotes, the rule, tracked sends", () => {
  it("quotes no odds before enough blocks, then the cheapest price reaching the target as recommended", () => {
    const odds = createFeeOdds({ windowSlots: 60, minBlocks: 20 });
    const window = odds.feeding(createFeeWindow({ windowSlots: 60 }));
    for (let slot = 1n; slot <= 10n; slot++) window.addBlock(slot, full(50_000n));
    expect(odds.quote(levels, REFERENCE_CANDIDATE, bounds)).toBeUndefined();
    for (let slot = 11n; slot <= 40n; slot++) window.addBlock(slot, full(50_000n));
    const quote = odds.quote(levels, REFERENCE_CANDIDATE, bounds)!;
    expect(quote.odds.withinSlots).toBe(4);
    // Every block clears around 50,000: the levels below it never land, veryHigh always does.
    expect(quote.odds.low).toBe(0);
    expect(quote.odds.high).toBe(0);
    expect(quote.odds.veryHigh).toBe(1);
    expect(quote.recommended).toBeGreaterThan(50_000n);
    expect(quote.recommended).toBeLessThan(100_000n);
    expect(quote.odds.recommended).toBeGreaterThanOrEqual(0.9);
    // The floor and ceiling still bound it, and the odds are those of the bounded price.
    const capped = odds.quote(levels, REFERENCE_CANDIDATE, { floor: 0n, ceiling: 1_000n })!;
    expect(capped.recommended).toBe(1_000n);
    expect(capped.odds.recommended).toBe(0);
  });

  it("says why a tracked send waits, until it is seen; and learns from its outcome", () => {
    const odds = createFeeOdds({ windowSlots: 60, minBlocks: 20 });
    const window = odds.feeding(createFeeWindow({ windowSlots: 60 }));
    for (let slot = 1n; slot <= 30n; slot++) window.addBlock(slot, full(50_000n));
    const cheap = signature(1);
    odds.track(cheap, 10n, REFERENCE_CANDIDATE);
    expect(odds.waiting(cheap, 10n, REFERENCE_CANDIDATE)).toBeUndefined(); // no block since it was sent yet
    window.addBlock(31n, full(50_000n));
    const waiting = odds.waiting(cheap, 10n, REFERENCE_CANDIDATE)!;
    expect(waiting.price).toBe(10n);
    expect(waiting.odds).toBe(0);
    expect(waiting.landingPrice).toBeGreaterThan(50_000n);
    // A send paying enough does not wait, even in full blocks.
    const rich = signature(2);
    odds.track(rich, 1_000_000n, REFERENCE_CANDIDATE);
    window.addBlock(32n, full(50_000n));
    expect(odds.waiting(rich, 1_000_000n, REFERENCE_CANDIDATE)).toBeUndefined();
    // Seen in a block: no longer waiting; k slots on, both outcomes are counted.
    window.addBlock(33n, full(50_000n, [tx(10n, cheap), tx(1_000_000n, rich)]));
    expect(odds.waiting(cheap, 10n, REFERENCE_CANDIDATE)).toBeUndefined();
    expect(odds.stats().outcomes).toBe(2);
  });

  it("raises the recommendation where sends just past the model's edge fail, and clears the target with confidence", () => {
    const run = (confidence: number) => {
      const odds = createFeeOdds({ windowSlots: 60, minBlocks: 20, confidence });
      const window = odds.feeding(createFeeWindow({ windowSlots: 60 }));
      let slot = 1n;
      for (; slot <= 30n; slot++) window.addBlock(slot, full(50_000n));
      const before = odds.quote(levels, REFERENCE_CANDIDATE, bounds)!;
      // Each slot: 5 sends at 1.1x the model's recommendation never land; 5 at 8x land in the next block.
      const cheap = (before.recommended * 11n) / 10n;
      const rich = before.recommended * 8n;
      let n = 3;
      for (let round = 0; round < 40; round++, slot++) {
        const landing: PricedTransaction[] = [];
        for (let i = 0; i < 5; i++) {
          odds.track(signature(n++), cheap, REFERENCE_CANDIDATE);
          const s = signature(n++);
          odds.track(s, rich, REFERENCE_CANDIDATE);
          landing.push(tx(rich, s));
        }
        window.addBlock(slot, full(50_000n, landing));
      }
      for (const end = slot + 5n; slot < end; slot++) window.addBlock(slot, full(50_000n));
      expect(odds.stats().outcomes).toBe(400);
      const after = odds.quote({ ...levels, medium: cheap, veryHigh: rich }, REFERENCE_CANDIDATE, bounds)!;
      return { before, cheap, rich, after };
    };
    const plain = run(0);
    // Without outcomes the model alone: the edge of full blocks bid from 50,000.
    expect(plain.before.recommended).toBeGreaterThan(50_000n);
    expect(plain.before.recommended).toBeLessThan(51_000n);
    // The raw odds of both prices are 1; the correction tells them apart and moves the rule past the cheap one.
    expect(plain.after.odds.medium).toBeLessThan(0.25);
    expect(plain.after.odds.veryHigh).toBeGreaterThan(0.95);
    expect(plain.after.recommended).toBeGreaterThan(plain.cheap);
    expect(plain.after.recommended).toBeLessThan(plain.rich);
    expect(plain.after.odds.recommended).toBeGreaterThanOrEqual(0.9);
    // With confidence 1 (the default) the rule wants the odds' lower bound at the target: a higher price.
    const sure = run(1);
    expect(sure.after.recommended).toBeGreaterThan(plain.after.recommended);
    expect(sure.after.odds.recommended).toBeGreaterThan(plain.after.odds.recommended);
  });

  it("recommends a zero price where blocks fill with unpriced transactions of its cost and zero-price sends land", () => {
    // The busy profile's tie: spells of blocks full of unpriced transactions costing what the candidate costs, so
    // their cut is a zero price's own priority. A zero-price send ties there (taken by arrival), and its sends
    // land; a price of 1 outbids the tie. The raw odds count the tie as lost and swing with the spells.
    const same = transactionCost(REFERENCE_SHAPE);
    const zero = (sig?: Uint8Array): PricedTransaction => ({
      price: 0n,
      writable: ["payer"],
      unitLimit: 200_000,
      signatures: 1,
      cost: same,
      signature: sig,
    });
    // Spells grow: a few slots in 20 at first, most slots later, so the zero price's raw odds drift down (from ~0.9
    // to ~0.3) while its sends keep landing.
    const spell = (slot: bigint) => (slot < 80n ? slot % 20n < 3n : slot % 10n < 7n);
    const block = (slot: bigint, landing: PricedTransaction[]) =>
      spell(slot) ? [...Array.from({ length: 276 - landing.length }, () => zero()), ...landing] : [zero(), ...landing];
    const odds = createFeeOdds({ windowSlots: 150, minBlocks: 20 });
    const window = odds.feeding(createFeeWindow({ windowSlots: 150 }));
    let slot = 1n;
    for (; slot <= 30n; slot++) window.addBlock(slot, block(slot, []));
    // 100 slots: each, 5 zero-price sends (49 of 50 land in the next block) and 2 at a price of 1 (all land).
    let n = 0;
    for (let round = 0; round < 100; round++, slot++) {
      const landing: PricedTransaction[] = [];
      for (let i = 0; i < 5; i++) {
        const s = signature(n++);
        odds.track(s, 0n, REFERENCE_CANDIDATE);
        if (n % 50 !== 0) landing.push(zero(s));
      }
      for (let i = 0; i < 2; i++) {
        const s = signature(n++);
        odds.track(s, 1n, REFERENCE_CANDIDATE);
        landing.push({ ...zero(s), price: 1n });
      }
      window.addBlock(slot, block(slot, landing));
    }
    for (const end = slot + 5n; slot < end; slot++) window.addBlock(slot, block(slot, []));
    expect(odds.stats().outcomes).toBe(700);
    const quote = odds.quote({ low: 0n, medium: 1n, high: 1_000n, veryHigh: 10_000n }, REFERENCE_CANDIDATE, bounds)!;
    // Zero-price sends landed 98%: a zero price is quoted near that and is the recommendation (not 1).
    expect(quote.odds.low).toBeGreaterThan(0.93);
    expect(quote.recommended).toBe(0n);
  });
});

describe("fee odds at any price and any k (EstimateFees, the fee ladder)", () => {
  /** Blocks that alternate: full from 50,000 up every other slot, empty in between. */
  function alternating() {
    const odds = createFeeOdds({ windowSlots: 60, minBlocks: 20 });
    const window = odds.feeding(createFeeWindow({ windowSlots: 60 }));
    for (let slot = 1n; slot <= 50n; slot++) window.addBlock(slot, slot % 4n === 0n ? [] : full(50_000n));
    return odds;
  }

  it("gives no odds before enough blocks", () => {
    const odds = createFeeOdds({ windowSlots: 60, minBlocks: 20 });
    expect(odds.at(REFERENCE_CANDIDATE, 4)).toBeUndefined();
  });

  it("rises with k at a cheap price, and a cheap price reaches the target only when k is long enough", () => {
    const odds = alternating();
    // One empty block in every four: within 1 slot a cheap send lands ~1/4 of the time, within 4 always.
    const one = odds.at(REFERENCE_CANDIDATE, 1)!;
    const four = odds.at(REFERENCE_CANDIDATE, 4)!;
    expect(one.withinSlots).toBe(1);
    expect(one.odds(10n)).toBeGreaterThan(0.1);
    expect(one.odds(10n)).toBeLessThan(0.5);
    expect(four.odds(10n)).toBe(1);
    // The cheapest price for 0.9: within 4 slots nearly free; within 1 slot past the full blocks' bids.
    expect(four.cheapest(0.9)!.price).toBeLessThan(1_000n);
    expect(one.cheapest(0.9)!.price).toBeGreaterThan(50_000n);
    expect(one.cheapest(0.9)!.odds).toBeGreaterThanOrEqual(0.9);
    // The bottom of a useful range: the cheapest price with at least the odds asked.
    expect(one.cheapestAbove(0.2)!.odds).toBeGreaterThanOrEqual(0.2);
  });

  it("draws the curve: the points asked for, prices rising, odds never falling", () => {
    const odds = alternating();
    for (const points of [8, 16, 32]) {
      const curve = odds.at(REFERENCE_CANDIDATE, 2)!.curve(points);
      expect(curve).toHaveLength(points);
      for (let i = 1; i < curve.length; i++) {
        expect(curve[i].price).toBeGreaterThan(curve[i - 1].price);
        expect(curve[i].odds).toBeGreaterThanOrEqual(curve[i - 1].odds);
      }
    }
  });

  it("refuses a k the window cannot answer", () => {
    const odds = alternating();
    expect(() => odds.at(REFERENCE_CANDIDATE, 0)).toThrow(RangeError);
    expect(() => odds.at(REFERENCE_CANDIDATE, 60)).toThrow(RangeError);
  });
});
