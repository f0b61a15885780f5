import { describe, expect, it } from "vitest";
import { levelsOf, maxLevels, nearestRank, percentileOfSorted } from "../../src/fees/percentile.ts";

/** The definition spelled out differently: the smallest sample value with at least p% of the sample at or below it. */
function bruteForce(values: bigint[], p: number): bigint {
  const candidates = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const v of candidates) {
    const atOrBelow = values.filter((x) => x <= v).length;
    if (atOrBelow * 100 >= p * values.length) return v;
  }
  throw new Error("unreachable");
}

describe("nearest-rank percentiles", () => {
  it("matches the documented example", () => {
    expect(levelsOf([1000n, 0n, 20n, 10n, 0n])).toEqual({ low: 0n, medium: 10n, high: 20n, veryHigh: 1000n });
  });

  it("is exact at rank boundaries (no floating-point overshoot)", () => {
    expect(nearestRank(95, 20)).toBe(19);
    expect(nearestRank(25, 4)).toBe(1);
    expect(nearestRank(50, 1)).toBe(1);
    expect(nearestRank(75, 100)).toBe(75);
  });

  it("agrees with the brute-force definition on random samples", () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 200; round++) {
      const n = 1 + Math.floor(random() * 60);
      const values = Array.from({ length: n }, () => BigInt(Math.floor(random() * 8) * 1000));
      const levels = levelsOf(values)!;
      expect(levels.low).toBe(bruteForce(values, 25));
      expect(levels.medium).toBe(bruteForce(values, 50));
      expect(levels.high).toBe(bruteForce(values, 75));
      expect(levels.veryHigh).toBe(bruteForce(values, 95));
    }
  });

  it("keeps u64 prices exact and orders them numerically, not as text", () => {
    const big = 2n ** 64n - 1n;
    expect(levelsOf([big, 9n, 10n, 100n])!.veryHigh).toBe(big);
    expect(levelsOf([9n, 10n, 100n])!.medium).toBe(10n);
  });

  it("is undefined for an empty sample", () => {
    expect(levelsOf([])).toBeUndefined();
    expect(percentileOfSorted([], 50)).toBeUndefined();
  });

  it("takes the maximum level by level", () => {
    const a = { low: 1n, medium: 5n, high: 6n, veryHigh: 7n };
    const b = { low: 2n, medium: 3n, high: 9n, veryHigh: 7n };
    expect(maxLevels(a, b)).toEqual({ low: 2n, medium: 5n, high: 9n, veryHigh: 7n });
    expect(maxLevels(undefined, b)).toBe(b);
    expect(maxLevels(a, undefined)).toBe(a);
  });
});
