/**
 * A short-lived cache of sorted key lists, one per query hash, so that page 1,000 costs about what
 * page 1 costs instead of re-scanning the program. Bounded by the total number of keys it holds
 * (oldest lists go first); concurrent misses for one query share one fetch. Each read extends a
 * list's life by the TTL, so a client paging steadily keeps one snapshot, up to `maxAgeMs`.
 */

/** Options of {@link createKeyListCache}. */
export interface KeyListCacheOptions {
  /** How long a list is served after its last read (default 20 s: pages of a listing follow within seconds). */
  ttlMs?: number;
  /** How old a list may get however often it is read (default 120 s): bounds how stale a listing is. */
  maxAgeMs?: number;
  /** Keys held across all lists (default 1,000,000, some 70 MB of strings). */
  maxKeys?: number;
  /** Clock, for tests. */
  now?: () => number;
}

/** What the cache holds per query: a list, or anything with a length (its number of keys). */
export interface KeyList {
  readonly length: number;
}

export interface KeyListCache<L extends KeyList = readonly string[]> {
  /** The cached list for `key`, or the result of `load` (stored if it fits). */
  get(key: string, load: () => Promise<L>): Promise<L>;
  /** Keys held now. */
  readonly size: number;
}

interface Entry<L extends KeyList> {
  keys: L;
  expiresAt: number;
  diesAt: number;
}

export function createKeyListCache<L extends KeyList = readonly string[]>(
  options: KeyListCacheOptions = {},
): KeyListCache<L> {
  const ttlMs = options.ttlMs ?? 20_000;
  const maxAgeMs = options.maxAgeMs ?? 120_000;
  const maxKeys = options.maxKeys ?? 1_000_000;
  const now = options.now ?? Date.now;
  // Map order is insertion order: the first entry is the oldest, evicted first.
  const entries = new Map<string, Entry<L>>();
  const loading = new Map<string, Promise<L>>();
  let held = 0;

  function drop(key: string): void {
    const entry = entries.get(key);
    if (entry) {
      held -= entry.keys.length;
      entries.delete(key);
    }
  }

  function store(key: string, keys: L): void {
    if (ttlMs <= 0 || keys.length > maxKeys) return;
    drop(key);
    const t = now();
    for (const [k, e] of entries) {
      if (held + keys.length <= maxKeys && e.expiresAt > t) break;
      drop(k);
    }
    entries.set(key, { keys, expiresAt: Math.min(t + ttlMs, t + maxAgeMs), diesAt: t + maxAgeMs });
    held += keys.length;
  }

  return {
    async get(key, load) {
      const entry = entries.get(key);
      const t = now();
      if (entry && entry.expiresAt > t) {
        entry.expiresAt = Math.min(t + ttlMs, entry.diesAt);
        return entry.keys;
      }
      if (entry) drop(key);
      const pending = loading.get(key);
      if (pending) return pending;
      const promise = load().then(
        (keys) => {
          loading.delete(key);
          store(key, keys);
          return keys;
        },
        (error: unknown) => {
          loading.delete(key);
          throw error;
        },
      );
      loading.set(key, promise);
      return promise;
    },
    get size() {
      return held;
    },
  };
}
