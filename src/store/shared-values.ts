/**
 * Values a fleet computes once and shares for a while (costly counts): a plain key/value cache in
 * Redis with a time to live. It never fails its caller: with Redis away, a read finds nothing and a
 * write is dropped, so each replica computes for itself until Redis returns.
 */
import type { Redis } from "./redis.ts";

/** Shared values, as strings. */
export interface SharedValues {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
}

/** Values under `prefix` in Redis. */
export function createRedisValues(
  redis: Redis,
  prefix: string,
  onError: (error: unknown) => void = () => {},
): SharedValues {
  return {
    async get(key) {
      try {
        return (await redis.run("read a shared value", (c) => c.get(`${prefix}${key}`))) ?? undefined;
      } catch (error) {
        onError(error);
        return undefined;
      }
    },
    async set(key, value, ttlMs) {
      try {
        await redis.run("share a value", (c) =>
          c.set(`${prefix}${key}`, value, { PX: Math.max(1, Math.round(ttlMs)) }),
        );
      } catch (error) {
        onError(error);
      }
    },
  };
}
