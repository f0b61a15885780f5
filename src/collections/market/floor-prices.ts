/**
 * Floor prices for configured collections, from their marketplaces, with everything that keeps a
 * marketplace from slowing or breaking a collection call: answers cached for a TTL (failures for a
 * shorter one), one call in flight per listing, a token bucket per marketplace (no token, no call:
 * a recent cached price or null instead), and a short timeout. Never rejects.
 */
import { createLruCache } from "../lru-cache.ts";
import { createTokenBucket } from "./token-bucket.ts";
import type { TokenBucket } from "./token-bucket.ts";
import type { FloorPrice, FloorPriceLookup, FloorSourceRef, MarketSource } from "./market-source.ts";

/** Options of {@link createFloorPrices}. */
export interface FloorPricesOptions {
  /** The marketplaces, by name. */
  sources: readonly MarketSource[];
  /** Collection address -> marketplace listing. Collections not here have no floor price. */
  collections: ReadonlyMap<string, FloorSourceRef> | Readonly<Record<string, FloorSourceRef>>;
  /** How long an answer is served (default 60 s). */
  ttlMs?: number;
  /** How long a failure is remembered before the marketplace is asked again (default 15 s). */
  failureTtlMs?: number;
  /** Longest wait for a marketplace (default 1,000 ms); slower answers count as failures. */
  timeoutMs?: number;
  /** Without a token, a cached price up to this old is served (default 5 min). */
  maxStaleMs?: number;
  /**
   * The budget of calls toward a marketplace, shared by a fleet (Redis): resolves whether one more call
   * may go now. Without it, each process keeps its own token bucket (`ratePerSecond`, `burst`).
   */
  budget?: (source: string) => Promise<boolean>;
  /** Calls per second toward each marketplace (default 2, Magic Eden's public limit) and burst (default 4). */
  ratePerSecond?: number;
  burst?: number;
  /** Called on each failed marketplace call (for logs). */
  onError?: (error: unknown, ref: FloorSourceRef) => void;
  now?: () => number;
}

/** What the cache holds per listing: a price, "no floor", or a failure. */
type Cached = { kind: "price"; price: FloorPrice } | { kind: "none" } | { kind: "failed" };

/** Floor prices with their cache; `stats` is for tests and metrics. */
export interface FloorPrices extends FloorPriceLookup {
  readonly stats: { calls: number; rateLimited: number; failures: number };
}

export function createFloorPrices(options: FloorPricesOptions): FloorPrices {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? 60_000;
  const failureTtlMs = options.failureTtlMs ?? 15_000;
  const timeoutMs = options.timeoutMs ?? 1000;
  const maxStaleMs = options.maxStaleMs ?? 5 * 60_000;
  const mapping =
    options.collections instanceof Map ? options.collections : new Map(Object.entries(options.collections));
  const sources = new Map(options.sources.map((s) => [s.name, s]));
  const buckets = new Map<string, TokenBucket>(
    options.sources.map((s) => [
      s.name,
      createTokenBucket({ perSecond: options.ratePerSecond ?? 2, burst: options.burst ?? 4, now }),
    ]),
  );
  const cache = createLruCache<Cached>({ maxEntries: 10_000, now });
  // The last price per listing, kept apart from the cache so a failure does not erase it.
  const lastPrice = createLruCache<FloorPrice>({ maxEntries: 10_000, now });
  const stats = { calls: 0, rateLimited: 0, failures: 0 };

  function recent(key: string): FloorPrice | null {
    const last = lastPrice.peek(key);
    return last !== undefined && now() - last.storedAt <= maxStaleMs ? last.value : null;
  }

  async function ask(source: MarketSource, ref: FloorSourceRef): Promise<{ value: Cached; ttlMs: number }> {
    stats.calls++;
    try {
      const lamports = await source.fetchFloor(ref.id, AbortSignal.timeout(timeoutMs));
      if (lamports === null) return { value: { kind: "none" }, ttlMs };
      // Display only: SOL is derived once here and never fed back into any computation.
      const price: FloorPrice = {
        lamports,
        sol: Number(lamports) / 1e9,
        updatedAt: new Date(now()),
        source: source.name,
      };
      lastPrice.set(`${ref.source}:${ref.id}`, price, maxStaleMs);
      return { value: { kind: "price", price }, ttlMs };
    } catch (error) {
      stats.failures++;
      options.onError?.(error, ref);
      return { value: { kind: "failed" }, ttlMs: failureTtlMs };
    }
  }

  return {
    stats,
    async floorPrice(collection) {
      const ref = mapping.get(collection);
      if (ref === undefined) return null;
      const source = sources.get(ref.source);
      if (source === undefined) return null;
      const key = `${ref.source}:${ref.id}`;
      const hit = cache.get(key);
      if (hit !== undefined) return hit.kind === "price" ? hit.price : null;
      const loaded = await cache.getOrLoad(key, async () => {
        const allowed =
          options.budget === undefined ? buckets.get(source.name)!.tryTake() : await options.budget(source.name);
        if (!allowed) {
          stats.rateLimited++;
          // Not cached: the next call after a refill asks the marketplace.
          const stale = recent(key);
          return { value: stale === null ? { kind: "failed" } : { kind: "price", price: stale }, ttlMs: 0 };
        }
        return ask(source, ref);
      });
      return loaded.kind === "price" ? loaded.price : null;
    },
  };
}
