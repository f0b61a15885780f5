/**
 * An LRU cache whose entries each carry their own time to live (so a failure can be kept for
 * seconds and a success for minutes), with single-flight loading: concurrent misses for one key
 * share one load.
 *
 * Recency and eviction are the `lru-cache` package's. The expiry stays here, a comparison on read:
 * lru-cache's TTL reads its own clock (`perf`) and treats an entry started at time 0 as never
 * stale, while this cache takes an injectable `now` and must still hand out an expired entry to
 * `peek` (stale-if-busy answers).
 */
import { LRUCache } from "lru-cache";

/** Options of {@link createLruCache}. */
export interface LruCacheOptions {
  /** Entries held at most; the least recently used go first. */
  maxEntries: number;
  /** Clock, for tests. */
  now?: () => number;
}

/** What a loader returns: the value and how long to keep it (0 = do not keep). */
export interface Loaded<V> {
  value: V;
  ttlMs: number;
}

export interface LruCache<V> {
  /** The live value of `key`, refreshed as most recently used; undefined when absent or expired. */
  get(key: string): V | undefined;
  /** The value of `key` even if expired (for stale-if-busy answers), with its age; undefined when absent. */
  peek(key: string): { value: V; storedAt: number } | undefined;
  set(key: string, value: V, ttlMs: number): void;
  /** The live value, or the result of `load` (shared by concurrent callers, stored for its ttl). */
  getOrLoad(key: string, load: () => Promise<Loaded<V>>): Promise<V>;
  readonly size: number;
}

interface Entry<V> {
  value: V;
  storedAt: number;
  expiresAt: number;
}

export function createLruCache<V>(options: LruCacheOptions): LruCache<V> {
  const now = options.now ?? Date.now;
  const entries = new LRUCache<string, Entry<V>>({ max: Math.max(1, options.maxEntries) });
  const loading = new Map<string, Promise<V>>();

  function set(key: string, value: V, ttlMs: number): void {
    entries.delete(key);
    if (ttlMs <= 0 || options.maxEntries <= 0) return;
    const t = now();
    entries.set(key, { value, storedAt: t, expiresAt: t + ttlMs });
  }

  function get(key: string): V | undefined {
    // peek first: an expired entry must not be refreshed as most recently used.
    const entry = entries.peek(key);
    if (entry === undefined || entry.expiresAt <= now()) return undefined;
    entries.get(key);
    return entry.value;
  }

  return {
    get,
    peek(key) {
      const entry = entries.peek(key);
      return entry === undefined ? undefined : { value: entry.value, storedAt: entry.storedAt };
    },
    set,
    getOrLoad(key, load) {
      const hit = get(key);
      if (hit !== undefined) return Promise.resolve(hit);
      let pending = loading.get(key);
      if (pending === undefined) {
        pending = (async () => {
          try {
            const loaded = await load();
            set(key, loaded.value, loaded.ttlMs);
            return loaded.value;
          } finally {
            loading.delete(key);
          }
        })();
        loading.set(key, pending);
      }
      return pending;
    },
    get size() {
      return entries.size;
    },
  };
}
