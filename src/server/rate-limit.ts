/**
 * Per-API-key rate limits, on rate-limiter-flexible. With Redis the counters are the fleet's: a key
 * spread over any number of replicas gets its limit once, not once per replica. Without Redis (or
 * while Redis is away) each process counts on its own, so limits still hold per process.
 */
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { SolgateError } from "../errors.ts";
import type { Redis } from "../store/redis.ts";

/** A limit: `points` requests per `durationMs`, plus `burst` more spread over ten such windows. */
export interface RateLimit {
  readonly points: number;
  readonly durationMs: number;
  readonly burst: number;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Reads `50/s`, `3000/m` or `100000/h`, optionally with a burst: `50/s burst 100`.
 * @returns undefined when `text` is not of that form.
 */
export function parseRateLimit(text: string): RateLimit | undefined {
  const match = /^\s*(\d{1,9})\s*\/\s*(s|m|h)(?:\s+burst\s+(\d{1,9}))?\s*$/.exec(text);
  if (match === null) return undefined;
  const points = Number(match[1]);
  if (points === 0) return undefined;
  return { points, durationMs: UNITS[match[2]], burst: match[3] === undefined ? 0 : Number(match[3]) };
}

/** Counts requests per key name. */
export interface RateLimiter {
  /**
   * Counts one request of `keyName`.
   * @throws SolgateError RATE_LIMITED, with the wait before the next request is allowed, when over the limit.
   */
  consume(keyName: string): Promise<void>;
}

/** Options of {@link createRateLimiter}. */
export interface RateLimiterOptions {
  /** Limits by key name; a key not listed takes `defaultLimit`; null means unlimited. */
  limits: ReadonlyMap<string, RateLimit | null>;
  defaultLimit?: RateLimit;
  /** The fleet's Redis: counters shared by every replica. */
  redis?: Redis;
  /** Prefix of the counters' Redis keys. */
  keyPrefix?: string;
}

/** Creates the limiter; a key with no limit costs nothing. */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const prefix = options.keyPrefix ?? "solgate:ratelimit";
  const byLimit = new Map<string, RateLimiterAbstract | BurstyRateLimiter>();

  function limiterFor(limit: RateLimit): RateLimiterAbstract | BurstyRateLimiter {
    const id = `${limit.points}/${limit.durationMs}/${limit.burst}`;
    let limiter = byLimit.get(id);
    if (limiter !== undefined) return limiter;
    const make = (points: number, durationMs: number, name: string): RateLimiterAbstract => {
      const base = { points, duration: durationMs / 1000, keyPrefix: `${prefix}:${name}:${id}` };
      if (options.redis === undefined) return new RateLimiterMemory(base);
      return new RateLimiterRedis({
        ...base,
        storeClient: options.redis.client,
        useRedisPackage: true,
        // Redis away: each process counts on its own until it returns.
        insuranceLimiter: new RateLimiterMemory(base),
      });
    };
    const main = make(limit.points, limit.durationMs, "rate");
    limiter = limit.burst > 0 ? new BurstyRateLimiter(main, make(limit.burst, limit.durationMs * 10, "burst")) : main;
    byLimit.set(id, limiter);
    return limiter;
  }

  return {
    async consume(keyName) {
      const limit = options.limits.has(keyName) ? options.limits.get(keyName) : options.defaultLimit;
      if (limit === null || limit === undefined) return;
      try {
        await limiterFor(limit).consume(keyName);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        const retryAfterMs = Math.max(1, Math.ceil(rejection.msBeforeNext));
        throw new SolgateError(
          "RATE_LIMITED",
          `API key "${keyName}" is over its limit of ${limit.points} requests per ${limit.durationMs / 1000} s; retry after the delay given`,
          { key: keyName, limit: limit.points, windowSeconds: limit.durationMs / 1000 },
          { retryAfterMs },
        );
      }
    },
  };
}
