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
 * cleared below the candidate's priority (recent runs weighing more, half-life 50 slots by default): an empirical inclusion curve that keeps the runs' autocorrelation
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
  /** The per-account CU limit (default 24,000,000, SIMD-0306's; transaction-cost.ts). */
  accountCuLimit?: number;
  /** The fewest blocks in the window for odds to be given (default 32). */
  minBlocks?: number;
  /**
   * Half-life, in slots, of a run's weight in the raw odds (default 50): recent runs count more, so that a
   * market that is rising (a backlog building on a hot account) is not read from its cheaper past alone.
   * Infinity weighs every run alike.
   */
  halfLifeSlots?: number;
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

/** A price's place in the model (see {@link InclusionCurve.position}). */
export interface OddsPosition {
  readonly raw: number;
  readonly score: number;
}

/**
 * The score of a priority: its raw odds below the edge; 1 + log2(priority / edge) at or past it (or once every run
 * that cleared at all cleared below it: its raw odds at their most, `rawMax`), so that the score is 1 at the edge
 * itself. A priority equal to the edge is at the edge although its raw odds are not at their most: the runs whose
 * cut is the edge's own transaction count it as outbid, but it ties with that transaction (the scheduler takes
 * equal priorities by arrival). A zero price ties so wherever blocks fill up with unpriced transactions of its
 * cost; its raw odds then swing with how many runs ended on such a tie, and only its sends can say how it lands.
 */
export function scoreOf(raw: number, rawMax: number, priority: number, edge: number | undefined): number {
  if (edge === undefined || (raw < rawMax && priority < edge)) return raw;
  return 1 + Math.log2(Math.max(priority, edge) / edge);
}

/** The raw inclusion curve for one candidate: which priorities cleared how many runs. */
export interface InclusionCurve {
  /** The candidate's cost. */
  readonly cost: number;
  /** Per run of k slots, the lowest clearing priority among its blocks, ascending. */
  readonly runMinima: Float64Array;
  /**
   * Raw odds of a price: the share of runs whose lowest clearing priority is below the price's priority, each
   * run weighted by its recency (half-life `halfLifeSlots`).
   */
  rawOdds(price: bigint): number;
  /**
   * The model's *edge*: the priority past which the raw odds stop rising (the highest finite run minimum, at
   * least the priority of a zero price), or undefined when no run ever cleared.
   */
  readonly edge: number | undefined;
  /**
   * Where a price stands: its raw odds, and its score (the raw odds below the edge; 1 + log2(priority / edge)
   * at or past it, so that it keeps rising with the fee where the raw odds are flat).
   */
  position(price: bigint): OddsPosition;
  /** The cheapest price whose priority is above `priority` (undefined when no price up to 2^53 is). */
  priceAbove(priority: number): bigint | undefined;
  /** The cheapest price that clears at least `runs` runs, or undefined when none does. */
  cheapestClearing(runs: number): bigint | undefined;
  /**
   * Whether every block from `afterSlot` on (at least one) cleared above `price`: a send at that price
   * would have waited in all of them.
   */
  waitedSince(afterSlot: bigint, price: bigint): boolean;
  /**
   * The blocks after `afterSlot` that cleared above `price`: how often the market has refused that price since,
   * read from the blocks themselves (a model whose window still holds a cheaper past lags behind this). Not only
   * in a row: after a fee jump the blocks swing, and one that cleared cheap must not reset the count. `blocks`: all
   * the blocks after `afterSlot`.
   */
  refusedSince(afterSlot: bigint, price: bigint): { refused: number; blocks: number };
  /**
   * The cheapest price that cleared at least `atLeast` of the newest `blocks` blocks (slots without a block, or whose
   * block had no room for the candidate at any price, skipped); undefined when there are fewer such blocks.
   */
  clearedRecently(blocks: number, atLeast?: number): bigint | undefined;
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
   * in the blocks of slots s + `firstReachable` .. s + k (default 1: every one of the k). `withinSlots` asks for
   * another k than the loads' own (1 to the window's length less one; EstimateFees' odds at any k, the ladder).
   */
  curve(candidate: Candidate, firstReachable?: number, withinSlots?: number): InclusionCurve | undefined;
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
  const halfLife = options.halfLifeSlots ?? 50;
  if (!(halfLife > 0)) throw new RangeError(`halfLifeSlots must be above 0, got ${halfLife}`);
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

    curve(candidate, firstReachable = 1, withinSlots = k) {
      if (!Number.isInteger(withinSlots) || withinSlots < 1 || withinSlots >= windowSlots)
        throw new RangeError(`withinSlots must be an integer from 1 to ${windowSlots - 1}, got ${withinSlots}`);
      if (records.length < minBlocks || newest === undefined || first === undefined) return undefined;
      const k = withinSlots;
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
      // Each run's lowest clearing priority, and its weight (halving every `halfLife` slots back from the newest).
      const order = new Array<{ m: number; w: number }>(runs);
      for (let i = 0; i < runs; i++) {
        let m = Number.POSITIVE_INFINITY;
        for (let j = i + d; j <= i + k; j++) if (clearing[j] < m) m = clearing[j];
        order[i] = { m, w: Number.isFinite(halfLife) ? 2 ** (-(runs - 1 - i) / halfLife) : 1 };
      }
      order.sort((a, b) => a.m - b.m || a.w - b.w);
      const minima = Float64Array.from(order, (o) => o.m);
      // weightBelow[i]: the weight of the i lowest minima; the raw odds of a priority clearing i runs are
      // weightBelow[i] / weightBelow[runs].
      const weightBelow = new Float64Array(runs + 1);
      for (let i = 0; i < runs; i++) weightBelow[i + 1] = weightBelow[i] + order[i].w;
      const totalWeight = weightBelow[runs];
      const shape = candidate.shape;
      let finite = runs;
      while (finite > 0 && !Number.isFinite(minima[finite - 1])) finite--;
      const edge = finite === 0 ? undefined : Math.max(minima[finite - 1], priorityOf(0n, shape, cost));
      return {
        cost,
        runMinima: minima,
        rawOdds(price) {
          return weightBelow[countBelow(minima, priorityOf(price, shape, cost))] / totalWeight;
        },
        edge,
        position(price) {
          const priority = priorityOf(price, shape, cost);
          const raw = weightBelow[countBelow(minima, priority)] / totalWeight;
          return { raw, score: scoreOf(raw, weightBelow[finite] / totalWeight, priority, edge) };
        },
        priceAbove: (priority) => cheapestPriceAbove(priority, shape, cost),
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
        refusedSince(afterSlot, price) {
          const priority = priorityOf(price, shape, cost);
          let refused = 0;
          let blocks = 0;
          for (let s = newest!; s > afterSlot && s >= from; s--) {
            const c = clearing[Number(s - from)];
            if (!Number.isFinite(c)) continue;
            blocks++;
            if (c >= priority) refused++;
          }
          return { refused, blocks };
        },
        clearedRecently(blocks, atLeast = blocks) {
          const newestFirst: number[] = [];
          for (let s = newest!; s >= from && newestFirst.length < blocks; s--) {
            const c = clearing[Number(s - from)];
            if (Number.isFinite(c)) newestFirst.push(c);
          }
          if (newestFirst.length < blocks || atLeast < 1 || atLeast > blocks) return undefined;
          // Clearing `atLeast` of them is beating all but the `atLeast` cheapest clearing prices.
          newestFirst.sort((x, y) => y - x);
          return cheapestPriceAbove(newestFirst[blocks - atLeast], shape, cost);
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
