import { describe, expect, it } from "vitest";
import { createOddsCalibration } from "../../src/fees/odds-calibration.ts";

/** A deterministic stream of uniform numbers (an LCG), so the test needs no seed handling. */
function uniform(seed = 7) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

/** Tracks `n` sends with raw odds drawn uniformly, landing with probability `truth(raw)`, and settles them. */
function teach(calibration: ReturnType<typeof createOddsCalibration>, n: number, truth: (r: number) => number) {
  const rand = uniform();
  for (let i = 0; i < n; i++) {
    const rawOdds = Math.round(rand() * 100) / 100;
    const send = { rawOdds, sentSlot: BigInt(i) } as { rawOdds: number; sentSlot: bigint; landedSlot?: bigint };
    calibration.track(`s${i}`, send);
    if (rand() < truth(rawOdds)) send.landedSlot = BigInt(i + 1);
    calibration.settle(BigInt(i + 4), 4);
  }
}

describe("odds calibration", () => {
  it("is the identity without outcomes", () => {
    const calibration = createOddsCalibration();
    for (const r of [0, 0.13, 0.5, 0.97, 1]) expect(calibration.apply(r)).toBe(r);
  });

  it("learns a model that overstates the odds: quotes move to what landed", () => {
    const calibration = createOddsCalibration({ maxOutcomes: 20_000, halfLifeSlots: Number.POSITIVE_INFINITY });
    teach(calibration, 20_000, (r) => 0.6 * r);
    expect(calibration.outcomes()).toBe(20_000);
    for (const r of [0.2, 0.5, 0.8, 1]) expect(Math.abs(calibration.apply(r) - 0.6 * r)).toBeLessThan(0.04);
  });

  it("stays monotone when the outcomes are not (isotonic), and near the model where sends are few (Beta prior)", () => {
    const calibration = createOddsCalibration({ priorWeight: 30 });
    // A non-monotone truth: sends quoted 0.4-0.5 land more often than those quoted 0.5-0.7.
    teach(calibration, 4000, (r) => (r >= 0.4 && r < 0.5 ? 0.9 : r));
    let previous = -1;
    for (let r = 0; r <= 1.0001; r += 0.01) {
      const g = calibration.apply(Math.min(1, r));
      expect(g).toBeGreaterThanOrEqual(previous - 1e-12);
      previous = g;
    }
    const few = createOddsCalibration({ priorWeight: 30, halfLifeSlots: Number.POSITIVE_INFINITY });
    // Three sends at raw 0.5 that all failed: the quote moves toward 0, but only by 3/33 of the way.
    for (let i = 0; i < 3; i++) {
      few.track(`f${i}`, { rawOdds: 0.5, sentSlot: 0n });
    }
    few.settle(10n, 4);
    expect(few.apply(0.5)).toBeCloseTo((0 + 30 * 0.5) / 33, 6);
  });

  it("settles a send as landed only when seen within k slots of its send", () => {
    const calibration = createOddsCalibration({ priorWeight: 1 });
    const late = { rawOdds: 1, sentSlot: 10n } as { rawOdds: number; sentSlot: bigint; landedSlot?: bigint };
    calibration.track("late", late);
    calibration.settle(13n, 4);
    expect(calibration.outcomes()).toBe(0);
    late.landedSlot = 15n; // seen 5 slots after its send
    calibration.settle(14n, 4);
    expect(calibration.outcomes()).toBe(1);
    expect(calibration.apply(1)).toBeLessThan(1); // a miss
    const early = { rawOdds: 0.3, sentSlot: 20n } as { rawOdds: number; sentSlot: bigint; landedSlot?: bigint };
    calibration.track("early", early);
    early.landedSlot = 24n; // seen exactly k slots after its send
    calibration.settle(24n, 4);
    expect(calibration.outcomes()).toBe(2);
    expect(calibration.apply(0.3)).toBeGreaterThan(0.3); // a hit
  });

  it("keeps a settled send watched, without a second outcome, until it is seen or keepSlots past its send", () => {
    const calibration = createOddsCalibration({ keepSlots: 150 });
    calibration.track("unseen", { rawOdds: 0.5, sentSlot: 10n });
    calibration.track("seen", { rawOdds: 0.5, sentSlot: 10n });
    calibration.settle(14n, 4); // both missed their k slots
    expect(calibration.outcomes()).toBe(2);
    expect(calibration.pendingCount()).toBe(2);
    calibration.pending("seen")!.landedSlot = 20n;
    calibration.settle(20n, 4);
    expect(calibration.outcomes()).toBe(2);
    expect(calibration.pending("seen")).toBeUndefined();
    expect(calibration.pending("unseen")).toBeDefined();
    calibration.settle(160n, 4);
    expect(calibration.pending("unseen")).toBeDefined();
    calibration.settle(161n, 4);
    expect(calibration.pendingCount()).toBe(0);
    expect(calibration.outcomes()).toBe(2);
  });

  it("learns how soon sends can land: the 10th percentile of their landing delays, within 1 .. k", () => {
    const calibration = createOddsCalibration();
    expect(calibration.firstReachable(4)).toBe(1); // no data: every one of the k slots
    for (let i = 0; i < 100; i++) {
      const send = { rawOdds: 0.9, sentSlot: BigInt(i * 10) } as {
        rawOdds: number;
        sentSlot: bigint;
        landedSlot?: bigint;
      };
      calibration.track(`d${i}`, send);
      send.landedSlot = send.sentSlot + (i < 5 ? 1n : i < 50 ? 2n : 3n); // 5% after 1 slot, 45% after 2
    }
    calibration.settle(10_000n, 4);
    expect(calibration.firstReachable(4)).toBe(2);
    expect(calibration.firstReachable(1)).toBe(1);
  });

  it("is fee-dependent past the model's edge: sends just past it and far past it are told apart", () => {
    // Raw odds are 1 for both (the model is flat past its edge); only the score (1 + doublings of the priority
    // past the edge) differs. Just past the edge half land, far past it all do.
    const calibration = createOddsCalibration({ maxOutcomes: 4000, halfLifeSlots: Number.POSITIVE_INFINITY });
    const rand = uniform(11);
    for (let i = 0; i < 4000; i++) {
      const near = i % 2 === 0;
      const send = { rawOdds: 1, score: near ? 1.1 : 4.5, sentSlot: BigInt(i) } as {
        rawOdds: number;
        score: number;
        sentSlot: bigint;
        landedSlot?: bigint;
      };
      calibration.track(`e${i}`, send);
      if (rand() < (near ? 0.5 : 1)) send.landedSlot = BigInt(i + 1);
      calibration.settle(BigInt(i + 4), 4);
    }
    expect(Math.abs(calibration.apply(1, 1.1) - 0.5)).toBeLessThan(0.04);
    expect(calibration.apply(1, 4.5)).toBeGreaterThan(0.98);
    // Between the two, and below the edge, it stays monotone in the score.
    let previous = -1;
    for (let score = 0; score <= 6; score += 0.05) {
      const g = calibration.apply(Math.min(1, score), score);
      expect(g).toBeGreaterThanOrEqual(previous - 1e-12);
      previous = g;
    }
    // The raw odds alone (the score defaulting to them) cannot tell the two apart.
    expect(calibration.apply(1)).toBeLessThan(calibration.apply(1, 4.5) - 0.3);
  });

  it("gives each calibrated value its weight: the prior's alone without outcomes, n + prior in a bin", () => {
    const calibration = createOddsCalibration({ priorWeight: 30, halfLifeSlots: Number.POSITIVE_INFINITY });
    expect(calibration.estimate(0.42)).toEqual({ odds: 0.42, weight: 30 });
    for (let i = 0; i < 70; i++) {
      const send = { rawOdds: 1, score: 1.2, sentSlot: 0n } as {
        rawOdds: number;
        score: number;
        landedSlot?: bigint;
        sentSlot: bigint;
      };
      calibration.track(`w${i}`, send);
      if (i < 68) send.landedSlot = 1n;
    }
    calibration.settle(10n, 4);
    const { odds, weight } = calibration.estimate(1, 1.2);
    expect(weight).toBeCloseTo(100, 6);
    expect(odds).toBeCloseTo((68 + 30 * 1) / 100, 6);
  });

  it("does not interpolate across the edge: a price at the edge gets its own side's odds", () => {
    const calibration = createOddsCalibration({ priorWeight: 30 });
    const send = (key: string, rawOdds: number, score: number, lands: boolean) => {
      const s = { rawOdds, score, sentSlot: 0n } as {
        rawOdds: number;
        score: number;
        sentSlot: bigint;
        landedSlot?: bigint;
      };
      calibration.track(key, s);
      if (lands) s.landedSlot = 1n;
    };
    // Just below the edge (raw 0.95) half land; past it (score 1.3) all do.
    for (let i = 0; i < 200; i++) send(`b${i}`, 0.95, 0.95, i % 2 === 0);
    for (let i = 0; i < 200; i++) send(`a${i}`, 1, 1.3, true);
    calibration.settle(10n, 4);
    const past = calibration.apply(1, 1.3);
    expect(past).toBeGreaterThan(0.99);
    // At the edge itself (score 1: a zero price when every block had room) the odds are those past it, not a
    // mix with the bin below; just below the edge they are the bin below's.
    expect(calibration.apply(1, 1)).toBe(past);
    // A price that ties with the edge's transaction (score 1, raw odds 0.6: the runs cut at the tie count it as
    // outbid), with no sends made at the edge yet: its raw odds, not the value past the edge, and the prior's weight.
    expect(calibration.estimate(0.6, 1)).toEqual({ odds: 0.6, weight: 30 });
    expect(calibration.apply(0.97, 0.97)).toBeCloseTo(calibration.apply(0.95, 0.95), 9);
    expect(calibration.apply(0.97, 0.97)).toBeLessThan(0.6);
  });

  it("lets outcomes age: a market that changed is followed, and old outcomes weigh less", () => {
    const send = (c: ReturnType<typeof createOddsCalibration>, i: number, slot: bigint, lands: boolean) => {
      const s = { rawOdds: 1, score: 1.6, sentSlot: slot } as {
        rawOdds: number;
        score: number;
        sentSlot: bigint;
        landedSlot?: bigint;
      };
      c.track(`o${i}`, s);
      if (lands) s.landedSlot = slot + 1n;
    };
    const aging = createOddsCalibration({ halfLifeSlots: 150 });
    const still = createOddsCalibration({ halfLifeSlots: Number.POSITIVE_INFINITY });
    for (const c of [aging, still]) {
      // 500 sends at slot 0 all landed; 500 at slot 600 (four half-lives later) none did.
      for (let i = 0; i < 500; i++) send(c, i, 0n, true);
      for (let i = 500; i < 1000; i++) send(c, i, 600n, false);
      c.settle(604n, 4);
    }
    expect(still.apply(1, 1.6)).toBeGreaterThan(0.45);
    expect(aging.apply(1, 1.6)).toBeLessThan(0.2);
    // The weight is the aged count (about 490 + 31, with the prior and the empty bins pooled with it), not 1,000.
    expect(aging.estimate(1, 1.6).weight).toBeLessThan(600);
    expect(still.estimate(1, 1.6).weight).toBeGreaterThan(1000);
    expect(() => createOddsCalibration({ halfLifeSlots: 0 })).toThrow(/halfLifeSlots/);
  });

  it("keeps a zero price at an edge that is its own priority apart from a price of 1 (ties with unpriced traffic)", () => {
    const calibration = createOddsCalibration({ halfLifeSlots: Number.POSITIVE_INFINITY });
    const send = (key: string, score: number, lands: boolean) => {
      const s = { rawOdds: 1, score, sentSlot: 0n } as {
        rawOdds: number;
        score: number;
        sentSlot: bigint;
        landedSlot?: bigint;
      };
      calibration.track(key, s);
      if (lands) s.landedSlot = 1n;
    };
    // Zero-price sends (score exactly 1) land 85%; sends at a price of 1 (score just past 1) all land.
    for (let i = 0; i < 400; i++) send(`z${i}`, 1, i % 20 < 17);
    for (let i = 0; i < 400; i++) send(`p${i}`, 1.0004, true);
    calibration.settle(10n, 4);
    expect(Math.abs(calibration.apply(1, 1) - 0.85)).toBeLessThan(0.03);
    expect(calibration.apply(1, 1.0004)).toBeGreaterThan(0.99);
    expect(calibration.apply(1, 1.0001)).toBeGreaterThan(0.99); // no interpolation toward the zero price
  });
});
