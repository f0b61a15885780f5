/**
 * Leases: work that one replica of the fleet must do for all of them (following the chain's
 * statuses, rebroadcasting) is done by whoever holds its lease. A lease is a Redis key holding its
 * holder's id with a time to live; the holder renews it well before it lapses, and when a holder dies
 * another replica takes the key once it lapses. Without Redis there is one process, which always holds.
 */
import type { Redis } from "./redis.ts";

/** One lease, as seen from this replica. */
export interface Lease {
  /**
   * Whether this replica holds the lease now, claiming or renewing it when due. Answers from memory
   * between renewals; a failed renewal (Redis away) counts as not holding, so two replicas never both
   * act on a lapsed lease.
   */
  hold(): Promise<boolean>;
  /** Gives the lease up at once (on shutdown), so that another replica need not wait for it to lapse. */
  release(): Promise<void>;
}

/** The lease a single process always holds. */
export const SOLE_LEASE: Lease = { hold: async () => true, release: async () => {} };

/** Options of {@link createRedisLease}. */
export interface RedisLeaseOptions {
  redis: Redis;
  key: string;
  /** This replica's id (unique per process). */
  holder: string;
  /** How long the lease lasts unrenewed: a dead holder's work waits this long at most (default 3 s). */
  ttlMs?: number;
  now?: () => number;
}

// Claims a free key or renews one this holder has; answers 1 when the caller holds it afterwards.
const CLAIM = `
local current = redis.call('GET', KEYS[1])
if current == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** A lease held in Redis. Renewals come every third of the TTL. */
export function createRedisLease(options: RedisLeaseOptions): Lease {
  const { redis, key, holder } = options;
  const ttlMs = options.ttlMs ?? 3000;
  const now = options.now ?? Date.now;
  let heldUntil = 0;
  let checkedAt = -Infinity;
  let pending: Promise<boolean> | undefined;

  async function claim(): Promise<boolean> {
    const startedAt = now();
    try {
      const got = await redis.run("lease", (c) => c.eval(CLAIM, { keys: [key], arguments: [holder, String(ttlMs)] }));
      // Counted from before the call: the key may have been set up to a round trip earlier than we learn it.
      heldUntil = got === 1 ? startedAt + ttlMs : 0;
    } catch {
      heldUntil = 0;
    }
    checkedAt = startedAt;
    return heldUntil > now();
  }

  return {
    hold() {
      const t = now();
      if (t - checkedAt < ttlMs / 3) return Promise.resolve(heldUntil > t);
      pending ??= claim().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    async release() {
      if (heldUntil === 0) return;
      heldUntil = 0;
      await redis.run("lease release", (c) => c.eval(RELEASE, { keys: [key], arguments: [holder] })).catch(() => {});
    },
  };
}
