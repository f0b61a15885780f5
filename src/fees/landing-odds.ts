/**
 * Landing odds: the probability that a transaction paying a given compute-unit price lands within k slots,
 * estimated from the blocks Solgate follows (docs/landing-odds.md explains the model and its limits).
 *
 * For every block in the window it keeps what was included, as agave's scheduler saw it: each non-vote
 * transaction's priority (reward / (cost + 1)) and block cost, for the block and for every account the block
 * wrote close to its limit. From that, for a candidate of cost c, each block has a *clearing priority*: the
 * candidate would have been packed into that block iff its priority is above it. Greedy packing takes the
 * highest priority first, so the candidate fits iff the included transactions of higher priority leave room
 * for c under the block limit and under each of its write-locked accounts' limits. A block with room to spare
 * clears at 0; a slot without a block clears nothing (+Infinity).
 *
 * The raw odds of a price are then the share of the window's runs of k consecutive slots in which some block
 * cleared below the candidate's priority: an empirical inclusion curve that keeps the runs' autocorrelation
 * (congestion persists), monotone in the price by construction. Fewer than `minBlocks` blocks: no odds.
 */
import type { PricedTransaction } from "./block-transactions.ts";
import {
  ACCOUNT_CU_LIMIT,
  BLOCK_CU_LIMIT,
  REFERENCE_SHAPE,
  cheapestPriceAbove,
  priorityOf,
  transactionCost,
} from "./transaction-cost.ts";
import type { CostShape } from "./transaction-cost.ts";

/** Accounts whose load in a block is within this many CU of the limit keep their detail (a candidate costs at most ~1.6M). */
const NEAR_LIMIT_MARGIN = 1_600_000;

/** Options of {@link createBlockLoads}. */
export interface BlockLoadsOptions {
  /** How many slots the window spans (the fee window's). */
  windowSlots: number;
  /** k: the slots within which a transaction must land (default 4). */
  withinSlots?: number;
  /** The block CU limit of the chain (default agave 3.0's 60,000,000). */
  blockCuLimit?: number;
  /** The per-account CU limit (default agave 3.0's 12,000,000). */
  accountCuLimit?: number;
  /** The fewest blocks in the window for odds to be given (default 32). */
  minBlocks?: number;
}

/** Included load, sorted by priority descending, with cumulative cost. */
interface Load {
  readonly priorities: Float64Array;
  readonly cumulative: Float64Array;
  readonly total: number;
}

interface BlockRecord {
  readonly slot: bigint;
  readonly block: Load;
  /** Accounts written close to (or over) their limit in this block. */
  readonly accounts: ReadonlyMap<string, Load>;
}

/** What a transaction is, to the odds: its cost shape and write locks. */
export interface Candidate {
  readonly shape: CostShape;
  readonly writable: readonly string[];
}

/** The raw inclusion curve for one candidate: which priorities cleared how many runs. */
export interface InclusionCurve {
  /** The candidate's cost. */
  readonly cost: number;
  /** Per run of k slots, the lowest clearing priority among its blocks, ascending. */
  readonly runMinima: Float64Array;
  /** Raw odds of a price: the share of runs whose lowest clearing priority is below the price's priority. */
  rawOdds(price: bigint): number;
  /** The cheapest price that clears at least `runs` runs, or undefined when none does. */
  cheapestClearing(runs: number): bigint | undefined;
  /**
   * Whether every block from `afterSlot` on (at least one) cleared above `price`: a send at that price
   * would have waited in all of them.
   */
  waitedSince(afterSlot: bigint, price: bigint): boolean;
}

/** The loads of the window's blocks. Fed in slot order, like the fee window. */
export interface BlockLoads {
  readonly withinSlots: number;
  addBlock(slot: bigint, transactions: readonly PricedTransaction[]): void;
  advanceTo(slot: bigint): void;
  /** Increments whenever the loads change. */
  version(): number;
  /** Blocks (not skipped slots) held. */
  blocks(): number;
  /** Whether any of `writable` was written close to its limit in a block of the window (a contended account). */
  contended(writable: readonly string[]): boolean;
  /**
   * The curve for a candidate; undefined while there are too few blocks to estimate. A send at slot s competes
   * in the blocks of slots s + `firstReachable` .. s + k (default 1: every one of the k).
   */
  curve(candidate: Candidate, firstReachable?: number): InclusionCurve | undefined;
}

/** The candidate GetFees quotes for: the reference shape, no account contention. */
export const REFERENCE_CANDIDATE: Candidate = { shape: REFERENCE_SHAPE, writable: [] };

/** Creates empty loads. */
export function createBlockLoads(options: BlockLoadsOptions): BlockLoads {
  const windowSlots = options.windowSlots;
  const k = options.withinSlots ?? 4;
  const blockLimit = options.blockCuLimit ?? BLOCK_CU_LIMIT;
  const accountLimit = options.accountCuLimit ?? ACCOUNT_CU_LIMIT;
  const minBlocks = options.minBlocks ?? 32;
  if (!Number.isInteger(k) || k < 1 || k >= windowSlots)
    throw new RangeError(`withinSlots must be an integer from 1 to ${windowSlots - 1}, got ${k}`);

  const records: BlockRecord[] = [];
  let newest: bigint | undefined;
  let first: bigint | undefined;
  let version = 0;

  function slide(to: bigint): void {
    newest = to;
    first ??= to;
    const oldestKept = to - BigInt(windowSlots) + 1n;
    let drop = 0;
    while (drop < records.length && records[drop].slot < oldestKept) drop++;
    if (drop > 0) records.splice(0, drop);
    version++;
  }

  return {
    withinSlots: k,
    addBlock(slot, transactions) {
      if (newest !== undefined && slot <= newest) return;
      const entries: { priority: number; cost: number }[] = [];
      const perAccount = new Map<string, number[]>();
      const accountTotals = new Map<string, number>();
      for (const tx of transactions) {
        const shape: CostShape = {
          signatures: tx.signatures ?? REFERENCE_SHAPE.signatures,
          writableAccounts: tx.writable.length,
          instructionDataBytes: 0,
          unitLimit: tx.unitLimit ?? REFERENCE_SHAPE.unitLimit,
        };
        const cost = tx.cost ?? transactionCost(shape);
        entries.push({ priority: priorityOf(tx.price, shape, cost), cost });
        for (const address of tx.writable) accountTotals.set(address, (accountTotals.get(address) ?? 0) + cost);
      }
      transactions.forEach((tx, i) => {
        for (const address of tx.writable) {
          if (accountTotals.get(address)! <= accountLimit - NEAR_LIMIT_MARGIN) continue;
          let list = perAccount.get(address);
          if (list === undefined) perAccount.set(address, (list = []));
          list.push(i);
        }
      });
      const accounts = new Map<string, Load>();
      for (const [address, indexes] of perAccount) accounts.set(address, loadOf(indexes.map((i) => entries[i])));
      records.push({ slot, block: loadOf(entries), accounts });
      slide(slot);
    },
    advanceTo(slot) {
      if (newest !== undefined && slot <= newest) return;
      slide(slot);
    },
    version: () => version,
    blocks: () => records.length,
    contended: (writable) => writable.some((address) => records.some((record) => record.accounts.has(address))),

    curve(candidate, firstReachable = 1) {
      if (records.length < minBlocks || newest === undefined || first === undefined) return undefined;
      const from = maxBig(first, newest - BigInt(windowSlots) + 1n);
      const slots = Number(newest - from + 1n);
      if (slots < k + 1) return undefined;
      const cost = transactionCost(candidate.shape);
      const writable = [...new Set(candidate.writable)];
      // Clearing priority per slot of the window; slots without a block clear nothing.
      const clearing = new Float64Array(slots).fill(Number.POSITIVE_INFINITY);
      for (const record of records) {
        if (record.slot < from) continue;
        let c = clearingOf(record.block, blockLimit, cost);
        for (const address of writable) {
          const load = record.accounts.get(address);
          if (load !== undefined) c = Math.max(c, clearingOf(load, accountLimit, cost));
        }
        if (cost > accountLimit && writable.length > 0) c = Number.POSITIVE_INFINITY;
        clearing[Number(record.slot - from)] = c;
      }
      // A send made at slot s competes in the blocks of slots s+d .. s+k (d = firstReachable).
      const d = Math.max(1, Math.min(k, Math.floor(firstReachable)));
      const runs = slots - k;
      const minima = new Float64Array(runs);
      for (let i = 0; i < runs; i++) {
        let m = Number.POSITIVE_INFINITY;
        for (let j = i + d; j <= i + k; j++) if (clearing[j] < m) m = clearing[j];
        minima[i] = m;
      }
      minima.sort();
      const shape = candidate.shape;
      return {
        cost,
        runMinima: minima,
        rawOdds(price) {
          return countBelow(minima, priorityOf(price, shape, cost)) / runs;
        },
        cheapestClearing(count) {
          if (count <= 0) return 0n;
          if (count > runs) return undefined;
          const threshold = minima[count - 1];
          return Number.isFinite(threshold) ? cheapestPriceAbove(threshold, shape, cost) : undefined;
        },
        waitedSince(afterSlot, price) {
          const priority = priorityOf(price, shape, cost);
          let seen = 0;
          for (let s = afterSlot + 1n; s <= newest!; s++) {
            if (s < from) continue;
            const c = clearing[Number(s - from)];
            if (!Number.isFinite(c)) continue; // no block: nothing to wait in
            if (c < priority) return false;
            seen++;
          }
          return seen > 0;
        },
      };
    },
  };
}

function loadOf(entries: readonly { priority: number; cost: number }[]): Load {
  const sorted = [...entries].sort((a, b) => b.priority - a.priority);
  const priorities = new Float64Array(sorted.length);
  const cumulative = new Float64Array(sorted.length);
  let total = 0;
  sorted.forEach((e, i) => {
    priorities[i] = e.priority;
    total += e.cost;
    cumulative[i] = total;
  });
  return { priorities, cumulative, total };
}

/**
 * The priority a candidate of `cost` must beat to be packed with this load under `limit`: 0 when there was
 * room for it anyway; else the priority of the first included transaction (highest first) past which the
 * candidate no longer fits; +Infinity when it cannot fit at all.
 */
export function clearingOf(load: Load, limit: number, cost: number): number {
  if (load.total + cost <= limit) return 0;
  const room = limit - cost;
  if (room < 0) return Number.POSITIVE_INFINITY;
  // The first index whose cumulative cost exceeds the room (binary search; cumulative is ascending).
  let low = 0;
  let high = load.cumulative.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (load.cumulative[mid] > room) high = mid;
    else low = mid + 1;
  }
  return low < load.priorities.length ? load.priorities[low] : 0;
}

function countBelow(sorted: Float64Array, value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid] < value) low = mid + 1;
    else high = mid;
  }
  return low;
}

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
