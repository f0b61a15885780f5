/**
 * The marketplaces' call budgets, shared by a fleet: Magic Eden's public limit (2 calls a second) holds
 * per deployment, not per replica, so with Redis every replica draws from one count. Bursts of up to
 * 2 more calls, spread over ten seconds, are allowed. With Redis away, each replica counts for itself.
 */
import { createRateLimiter } from "../../server/rate-limit.ts";
import type { Redis } from "../../store/redis.ts";

/** A budget for `createFloorPrices`: resolves whether one more call to `source` may go now. */
export function createSharedMarketBudget(redis: Redis, perSecond = 2, burst = 2): (source: string) => Promise<boolean> {
  const limiter = createRateLimiter({
    limits: new Map(),
    defaultLimit: { points: perSecond, durationMs: 1000, burst },
    redis,
    keyPrefix: "solgate:market",
  });
  return (source) =>
    limiter.consume(source).then(
      () => true,
      () => false,
    );
}
