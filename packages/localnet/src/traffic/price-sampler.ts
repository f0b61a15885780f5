/**
 * Compute-unit prices as a fee market shows them: most transactions pay little, a heavy tail pays
 * orders of magnitude more, a few pay nothing; transactions that write-lock a contended (hot)
 * account pay a multiple, with a floor. Log-normal around a median, from a seeded PRNG.
 */
import type { Random } from "../world/seeded-random.ts";
import type { TrafficOptions } from "./traffic-options.ts";

/** Highest price drawn (micro-lamports per CU): the tail is heavy but not absurd. */
export const MAX_PRICE = 50_000_000n;

export interface PriceSampler {
  /** A price for a transaction; `hot` when it write-locks a hot account. */
  sample(hot: boolean): bigint;
}

type PriceOptions = Pick<
  TrafficOptions,
  "medianPrice" | "spread" | "unpricedShare" | "hotMultiplier" | "hotFloorPrice"
>;

export function createPriceSampler(random: Random, options: PriceOptions): PriceSampler {
  return {
    sample(hot) {
      if (!hot && random.next() < options.unpricedShare) return 0n;
      let price = options.medianPrice * Math.exp(options.spread * random.normal());
      if (hot) price = Math.max(price * options.hotMultiplier, options.hotFloorPrice);
      const rounded = BigInt(Math.max(1, Math.round(price)));
      return rounded > MAX_PRICE ? MAX_PRICE : rounded;
    },
  };
}
