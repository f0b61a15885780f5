/**
 * A `Map` that holds at most `maxSize` entries: a `set` that adds one past it drops the oldest insertions first.
 * It is a `Map` in every other way (insertion order, iteration while deleting), so the memories that are bounded
 * this way keep their order rules: setting a key already held keeps its place; to make it the newest, delete it
 * first. Used where the oldest entry is the one to forget; caches that expire or weigh their entries use
 * `lru-cache` (collections/lru-cache.ts) or their own rule.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  readonly #maxSize: number;
  readonly #onEvict: ((key: K, value: V) => void) | undefined;

  /** @param onEvict told of each entry dropped for room (not of `delete` calls). */
  constructor(maxSize: number, onEvict?: (key: K, value: V) => void) {
    super();
    if (!(maxSize >= 1)) throw new RangeError(`maxSize must be at least 1, got ${maxSize}`);
    this.#maxSize = maxSize;
    this.#onEvict = onEvict;
  }

  override set(key: K, value: V): this {
    super.set(key, value);
    while (this.size > this.#maxSize) {
      const [oldest, held] = this.entries().next().value as [K, V];
      super.delete(oldest);
      this.#onEvict?.(oldest, held);
    }
    return this;
  }
}
