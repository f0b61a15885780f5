/**
 * A set of indexed accounts that can hand out its members in pubkey byte order, the order agave
 * returns scans in. The order is built lazily (sorting 100,000 keys costs ~60 ms) and then kept up
 * to date cheaply: an update of a known address swaps the entry in place, a few inserts or removals
 * splice; a burst of inserts (bulk seeding) just drops the order until the next read.
 */

/** What a bucket needs of its members. */
export interface Keyed {
  /** The address bytes as a latin1 string: comparing these compares the bytes. */
  readonly sortKey: string;
}

/** Inserts beyond this many since the last sort drop the cached order instead of splicing. */
const MAX_SPLICES = 256;

function compareKeys(a: Keyed, b: Keyed): number {
  return a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0;
}

/** Finds a key in a sorted array: its index, or `-(insertion point) - 1`. */
function search<T extends Keyed>(sorted: readonly T[], key: string): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const probe = sorted[mid].sortKey;
    if (probe < key) low = mid + 1;
    else if (probe > key) high = mid - 1;
    else return mid;
  }
  return -low - 1;
}

/** See the module comment. */
export class SortedBucket<T extends Keyed> {
  readonly #members = new Map<string, T>();
  #sorted: T[] | undefined;
  #splices = 0;

  get size(): number {
    return this.#members.size;
  }

  /** Adds a member or replaces the one with the same key. */
  upsert(entry: T): void {
    const known = this.#members.has(entry.sortKey);
    this.#members.set(entry.sortKey, entry);
    const sorted = this.#sorted;
    if (sorted === undefined) return;
    const at = search(sorted, entry.sortKey);
    if (known && at >= 0) {
      sorted[at] = entry;
    } else if (++this.#splices > MAX_SPLICES) {
      this.#sorted = undefined;
    } else {
      sorted.splice(-at - 1, 0, entry);
    }
  }

  /** Removes the member with this key, if present. */
  delete(sortKey: string): void {
    if (!this.#members.delete(sortKey)) return;
    const sorted = this.#sorted;
    if (sorted === undefined) return;
    const at = search(sorted, sortKey);
    if (at >= 0) sorted.splice(at, 1);
  }

  /** The member with this key. */
  get(sortKey: string): T | undefined {
    return this.#members.get(sortKey);
  }

  /** All members in key order; the array is shared, callers must not modify it. */
  inOrder(): readonly T[] {
    if (this.#sorted === undefined) {
      this.#sorted = [...this.#members.values()].sort(compareKeys);
      this.#splices = 0;
    }
    return this.#sorted;
  }
}
