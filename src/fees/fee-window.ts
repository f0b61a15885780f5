/**
 * The sliding window of observed compute-unit prices: globally, and per write-locked account.
 *
 * The window covers the slots (newest - windowSlots, newest]; a skipped slot moves it like a block.
 * Global prices are kept as one ascending array, updated by linear merges as blocks enter and leave,
 * so the levels cost O(n) per block rather than a sort. Per-account prices are appended in slot order,
 * so a block leaving the window drops the first `count` entries of each account it touched. Memory is
 * bounded: past `maxAccounts`, the coldest accounts (fewest prices in the window, then least recently
 * written) are dropped, down to 90% of the cap so that the cost of choosing them is paid rarely.
 */
import { levelsOfSorted } from "./percentile.ts";
import type { FeeLevels } from "./percentile.ts";
import type { PricedTransaction } from "./block-transactions.ts";

/** Options of {@link createFeeWindow}. */
export interface FeeWindowOptions {
  /** How many slots the window spans (150 by default, like `getRecentPrioritizationFees`). */
  windowSlots?: number;
  /** The most accounts tracked at once (100,000 by default). */
  maxAccounts?: number;
}

/** Levels and the number of prices they were computed from. */
export interface WindowLevels {
  readonly levels: FeeLevels;
  readonly sampleSize: number;
}

/** A snapshot of what the window holds. */
export interface FeeWindowStats {
  /** Blocks (not skipped slots) in the window. */
  readonly blocks: number;
  /** Prices in the window (non-vote transactions). */
  readonly samples: number;
  /** Accounts tracked. */
  readonly accounts: number;
  /** Accounts dropped by the cap since creation. */
  readonly evicted: number;
}

/** The window. Not thread-safe by design: one block follower feeds it. */
export interface FeeWindow {
  /** How many slots the window spans. */
  readonly windowSlots: number;
  /** The newest slot seen (block or skipped), or undefined before the first. */
  newestSlot(): bigint | undefined;
  /** The oldest slot still read into the window (undefined when empty of slots). */
  oldestSlot(): bigint | undefined;
  /** Increments whenever the window's contents change. */
  version(): number;
  /**
   * Adds the non-vote transactions of the block at `slot` and slides the window. Returns false (and
   * changes nothing) when `slot` is not newer than the newest slot seen: blocks enter in slot order.
   */
  addBlock(slot: bigint, transactions: readonly PricedTransaction[]): boolean;
  /** Records that slots up to `slot` hold no block (skipped), sliding the window. */
  advanceTo(slot: bigint): void;
  /** Levels over every price in the window; undefined when it holds none. */
  global(): WindowLevels | undefined;
  /** Levels over the prices of transactions that write-locked `address`; undefined when none. */
  account(address: string): WindowLevels | undefined;
  stats(): FeeWindowStats;
}

/** Price counts at or above this are all "hot" to eviction. */
const COUNT_BUCKETS = 64;

interface SlotRecord {
  readonly seq: number;
  readonly slot: bigint;
  /** Ascending. */
  readonly prices: BigUint64Array;
  /** Accounts written in this block, and how many prices each received. */
  readonly accounts: readonly string[];
  readonly counts: Uint32Array;
}

interface AccountSeries {
  prices: bigint[];
  /** Index of the first price still in the window. */
  head: number;
  /** The first block (by seq) whose prices this series holds: older blocks leaving must not touch it. */
  readonly bornSeq: number;
  lastSeq: number;
  memoVersion: number;
  memo: WindowLevels | undefined;
}

/** Creates an empty window. */
export function createFeeWindow(options: FeeWindowOptions = {}): FeeWindow {
  const windowSlots = options.windowSlots ?? 150;
  const maxAccounts = options.maxAccounts ?? 100_000;
  if (!Number.isInteger(windowSlots) || windowSlots < 1)
    throw new RangeError(`windowSlots must be a positive integer, got ${windowSlots}`);
  if (!Number.isInteger(maxAccounts) || maxAccounts < 1)
    throw new RangeError(`maxAccounts must be a positive integer, got ${maxAccounts}`);

  const records: SlotRecord[] = [];
  const accounts = new Map<string, AccountSeries>();
  let all: BigUint64Array = new BigUint64Array(0);
  let newest: bigint | undefined;
  let seq = 0;
  let version = 0;
  let evicted = 0;
  let globalMemoVersion = -1;
  let globalMemo: WindowLevels | undefined;

  function slide(to: bigint): void {
    newest = to;
    const oldestKept = to - BigInt(windowSlots) + 1n;
    let expired = 0;
    while (expired < records.length && records[expired].slot < oldestKept) {
      expire(records[expired]);
      expired++;
    }
    if (expired > 0) records.splice(0, expired);
  }

  function expire(record: SlotRecord): void {
    all = subtractSorted(all, record.prices);
    for (let i = 0; i < record.accounts.length; i++) {
      const series = accounts.get(record.accounts[i]);
      if (series === undefined || series.bornSeq > record.seq) continue;
      series.head += record.counts[i];
      if (series.head >= series.prices.length) {
        accounts.delete(record.accounts[i]);
      } else if (series.head > 64 && series.head * 2 > series.prices.length) {
        series.prices = series.prices.slice(series.head);
        series.head = 0;
      }
    }
  }

  /**
   * Drops the coldest accounts down to 90% of the cap: fewest prices in the window first, least recently
   * written among equals. Chosen by two counting passes (prices, then last block), not a sort: on mainnet
   * thousands of new accounts arrive per block, and sorting 100,000 entries every few blocks stalls ingestion.
   */
  function evictColdest(): void {
    const drop = accounts.size - Math.floor(maxAccounts * 0.9);
    const liveCount = (s: AccountSeries) => Math.min(COUNT_BUCKETS - 1, s.prices.length - s.head);
    const byCount = new Uint32Array(COUNT_BUCKETS);
    for (const series of accounts.values()) byCount[liveCount(series)]++;
    // Every account with fewer than `count` prices goes, and `rest` of those with exactly `count`.
    let count = 0;
    let rest = drop;
    while (rest > byCount[count]) rest -= byCount[count++];
    const oldestSeq = records.length > 0 ? records[0].seq : seq;
    const bySeq = new Uint32Array(seq - oldestSeq + 1);
    for (const series of accounts.values()) if (liveCount(series) === count) bySeq[series.lastSeq - oldestSeq]++;
    let age = 0;
    while (rest > bySeq[age]) rest -= bySeq[age++];
    for (const [address, series] of accounts) {
      const c = liveCount(series);
      const a = series.lastSeq - oldestSeq;
      if (c < count || (c === count && (a < age || (a === age && rest-- > 0)))) accounts.delete(address);
    }
    evicted += drop;
  }

  return {
    windowSlots,
    newestSlot: () => newest,
    oldestSlot: () => (newest === undefined ? undefined : newest - BigInt(windowSlots) + 1n),
    version: () => version,

    addBlock(slot, transactions) {
      if (newest !== undefined && slot <= newest) return false;
      const recordSeq = ++seq;
      const prices = new BigUint64Array(transactions.length);
      const touched = new Map<string, number>();
      transactions.forEach((tx, i) => {
        prices[i] = tx.price;
        for (const address of tx.writable) {
          let series = accounts.get(address);
          if (series === undefined) {
            series = { prices: [], head: 0, bornSeq: recordSeq, lastSeq: recordSeq, memoVersion: -1, memo: undefined };
            accounts.set(address, series);
          }
          series.prices.push(tx.price);
          series.lastSeq = recordSeq;
          touched.set(address, (touched.get(address) ?? 0) + 1);
        }
      });
      prices.sort();
      records.push({
        seq: recordSeq,
        slot,
        prices,
        accounts: [...touched.keys()],
        counts: Uint32Array.from(touched.values()),
      });
      all = mergeSorted(all, prices);
      slide(slot);
      if (accounts.size > maxAccounts) evictColdest();
      version++;
      return true;
    },

    advanceTo(slot) {
      if (newest !== undefined && slot <= newest) return;
      slide(slot);
      version++;
    },

    global() {
      if (globalMemoVersion !== version) {
        const levels = levelsOfSorted(all);
        globalMemo = levels && { levels, sampleSize: all.length };
        globalMemoVersion = version;
      }
      return globalMemo;
    },

    account(address) {
      const series = accounts.get(address);
      if (series === undefined) return undefined;
      if (series.memoVersion !== version) {
        const sorted = BigUint64Array.from(series.head === 0 ? series.prices : series.prices.slice(series.head));
        sorted.sort();
        const levels = levelsOfSorted(sorted);
        series.memo = levels && { levels, sampleSize: sorted.length };
        series.memoVersion = version;
      }
      return series.memo;
    },

    stats: () => ({ blocks: records.length, samples: all.length, accounts: accounts.size, evicted }),
  };
}

/** The ascending merge of two ascending arrays. */
export function mergeSorted(a: BigUint64Array, b: BigUint64Array): BigUint64Array {
  if (b.length === 0) return a;
  if (a.length === 0) return b.slice();
  const out = new BigUint64Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i] <= b[j] ? a[i++] : b[j++];
  while (i < a.length) out[k++] = a[i++];
  while (j < b.length) out[k++] = b[j++];
  return out;
}

/** `a` without one occurrence of each value of `b` (both ascending; `b` must be a sub-multiset of `a`). */
export function subtractSorted(a: BigUint64Array, b: BigUint64Array): BigUint64Array {
  if (b.length === 0) return a;
  const out = new BigUint64Array(Math.max(0, a.length - b.length));
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length) {
    // Values of `b` missing from `a` would otherwise stall the walk: skip them.
    while (j < b.length && b[j] < a[i]) j++;
    if (j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else {
      if (k < out.length) out[k] = a[i];
      k++;
      i++;
    }
  }
  return out;
}
