/**
 * A token bucket: `burst` calls at once, refilled at `perSecond`. Solgate's calls toward a
 * marketplace take a token each; without one the call is not made (the caller answers from its
 * cache or with no price), so a busy gateway never exceeds the marketplace's published limit.
 */

/** Options of {@link createTokenBucket}. */
export interface TokenBucketOptions {
  /** Tokens added per second. */
  perSecond: number;
  /** Most tokens held (and the first burst). */
  burst: number;
  now?: () => number;
}

export interface TokenBucket {
  /** Takes a token if one is there. */
  tryTake(): boolean;
  /** Tokens available now (fractional). */
  readonly available: number;
}

export function createTokenBucket(options: TokenBucketOptions): TokenBucket {
  if (!(options.perSecond > 0) || !(options.burst >= 1))
    throw new RangeError("a token bucket needs perSecond > 0 and burst >= 1");
  const now = options.now ?? Date.now;
  let tokens = options.burst;
  let at = now();
  const refill = () => {
    const t = now();
    tokens = Math.min(options.burst, tokens + ((t - at) / 1000) * options.perSecond);
    at = t;
  };
  return {
    tryTake() {
      refill();
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
    get available() {
      refill();
      return tokens;
    },
  };
}
