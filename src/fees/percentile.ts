/**
 * Fee levels as percentiles of compute-unit prices.
 *
 * Definition (nearest rank): the p-th percentile of n ascending values v[1..n] is v[ceil(p/100 * n)],
 * i.e. the smallest observed value such that at least p% of the values are <= it. It is always one
 * of the observed prices (never an interpolation), and it is undefined for an empty sample.
 * So with the prices [0, 0, 10, 20, 1000]: p25 = v[2] = 0, p50 = v[3] = 10, p75 = v[4] = 20, p95 = v[5] = 1000.
 */

/** The four market levels, in micro-lamports per compute unit. */
export interface FeeLevels {
  /** 25th percentile. */
  readonly low: bigint;
  /** 50th percentile. */
  readonly medium: bigint;
  /** 75th percentile. */
  readonly high: bigint;
  /** 95th percentile. */
  readonly veryHigh: bigint;
}

/** The percentile behind each level. */
export const LEVEL_PERCENTILES = { low: 25, medium: 50, high: 75, veryHigh: 95 } as const;

/** The 1-based nearest rank of percentile `p` (0 < p <= 100) among `n` values. */
export function nearestRank(p: number, n: number): number {
  // Multiply before dividing so that e.g. 95 * 20 / 100 is exactly 19, not 19.000000000000004 rounded up.
  return Math.max(1, Math.ceil((p * n) / 100));
}

/** The p-th percentile (nearest rank) of values already sorted ascending; undefined when empty. */
export function percentileOfSorted(sorted: ArrayLike<bigint>, p: number): bigint | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[nearestRank(p, sorted.length) - 1];
}

/** The four levels of values already sorted ascending; undefined when empty. */
export function levelsOfSorted(sorted: ArrayLike<bigint>): FeeLevels | undefined {
  if (sorted.length === 0) return undefined;
  return {
    low: percentileOfSorted(sorted, LEVEL_PERCENTILES.low)!,
    medium: percentileOfSorted(sorted, LEVEL_PERCENTILES.medium)!,
    high: percentileOfSorted(sorted, LEVEL_PERCENTILES.high)!,
    veryHigh: percentileOfSorted(sorted, LEVEL_PERCENTILES.veryHigh)!,
  };
}

/** The four levels of unsorted values (copied, then sorted numerically); undefined when empty. */
export function levelsOf(values: Iterable<bigint>): FeeLevels | undefined {
  const sorted = BigUint64Array.from(values);
  sorted.sort();
  return levelsOfSorted(sorted);
}

/** Level by level, the larger of two sets of levels (either may be absent). */
export function maxLevels(a: FeeLevels | undefined, b: FeeLevels | undefined): FeeLevels | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return {
    low: a.low > b.low ? a.low : b.low,
    medium: a.medium > b.medium ? a.medium : b.medium,
    high: a.high > b.high ? a.high : b.high,
    veryHigh: a.veryHigh > b.veryHigh ? a.veryHigh : b.veryHigh,
  };
}
