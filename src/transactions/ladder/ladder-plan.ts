/**
 * A fee ladder's plan: when each rung would be sent and at what price, from the landing-odds model. Pure: the odds come
 * in as a function of k (the slots left), so the plan can be tested without a market.
 *
 * The top rung keeps half the deadline for itself ({@link topRungSlots}); the other rungs' send offsets spread evenly
 * over the first half. The market's price is the cheapest whose odds reach the target within the slots the top rung has
 * left, and never below what cleared most of the newest blocks (the market now, which a model still holding a cheaper
 * past lags behind); the top rung pays one step ({@link TOP_STEP}) over it. The bottom rung is the cheapest price with
 * meaningful odds (at least {@link MEANINGFUL_ODDS}) within the whole deadline, and never 0: the cheap bet; where every
 * one of the newest {@link RECENT_LOW_BLOCKS} blocks refused that bet (a model that lags a market that moved), it is
 * the cheapest price that cleared one of them, and the rungs between it and the top spread evenly where the market's
 * steps fall under it. In the bench, after the tenfold fee jump, the hot account cleared a plain transfer's rung at
 * ~130,000 or ~4,000,000 µL/CU from block to block while the model's bet stayed at 1: ladders whose bottom sat there
 * climbed past it to the dear side, 24-29 x the price that landed. The rungs between are the dearer of two prices: the
 * cheapest whose odds within the slots left at its send reach the share i/(n-1) of the way from the floor to the target
 * (taken where the model's curve rises sharply), and the market's price times {@link TOP_STEP} per rung below the top.
 * The second is there because the model is least sure below its edge: in the bench it rated prices well under the hot
 * account's clearing price at 0.4-0.7 while single sends there never landed, and a ladder whose middle rungs sit there
 * climbs past them to its top. Rungs a small step apart make the rung that lands at most one step dearer than the
 * market; the step of headroom on the top is paid only where the market rose past the others while the ladder climbed
 * (in the bench, a third of the failures of a top rung at the market's price: it went out 5-11 slots after a single
 * send at the same price, which landed, and found the market above it). Strictly rising, whatever the model says.
 *
 * With 3 rungs or more, all of the above prices the market's rungs, a ladder one rung shorter, and the top rung is
 * headroom: {@link HEADROOM} times the rung under it, for a market that moves after the prices are signed.
 *
 * The steps and the headroom are multiples of the scheduler's *priority* (reward / cost, transaction-cost.ts), not of
 * the price, when the plan is given the transaction's {@link PriorityScale}: the leader ranks by priority, and a
 * transaction's reward includes half its signature fee. Where the priority fee dominates the reward (a large price) the
 * two are nearly the same; where the signature fee does (a small transaction, or a market that clears near 0) a
 * multiple of the price means little: 12 x a price of 590 µL/CU on a 1,825-CU transfer is 8 lamports, while a tenfold
 * jump in the others' fees moved the price that transfer needed to ~600,000.
 */
import type { OddsAt } from "../../fees/fee-odds.ts";
import { cheapestPriceAbove, priorityOf, transactionCost } from "../../fees/transaction-cost.ts";
import type { CostShape } from "../../fees/transaction-cost.ts";

/** The odds below which a price is not worth a rung: the bottom rung's floor. */
export const MEANINGFUL_ODDS = 0.2;

/** The ratio between the rungs under the top (each at least this share of the one above). */
export const TOP_STEP = 0.93;

/**
 * The top rung pays at least what cleared {@link RECENT_CLEARED} of the newest {@link RECENT_BLOCKS} blocks. Each of the
 * newest 2 (the first rule) let one dear block after a fee jump, when blocks swing, price whole ladders far above the
 * market (rungs at 59M µL/CU where 34M landed 90%); 3 of 4 still follows a jump within 2-3 blocks.
 */
export const RECENT_BLOCKS = 4;
export const RECENT_CLEARED = 3;

/**
 * The newest blocks whose cheapest clearing price lifts a bottom rung they all refused: 8. With 4 (tried first) the
 * bench's jump ladders paid 664,110 µL/CU median where 129,864 landed: after the jump a third mode (660,000-940,000)
 * often filled the newest 4 blocks, while 8 nearly always held a cheap one. A longer look lags a fee jump more, but
 * only the bottom rung takes it, and a bottom the market left behind costs the climb 3 refusing blocks, or 6 while one
 * of the newest 8 still cleared it (ladder-climb.ts `PATIENCE`).
 */
export const RECENT_LOW_BLOCKS = 8;

/**
 * The top rung's price as a multiple of the rung under it (the market's price plus one step): 12. A ladder's prices
 * are signed before any block shows a market move; in the bench's tenfold fee jump the hindsight price after it was
 * 9-12 x the `recommended` quoted just before it (five runs: 32.3M against 3.6M, 37.0M against 3.1M µL/CU at the
 * ends), and the ladders prepared in that gap missed with every rung at most one step over the old market. A rung
 * this far above the market costs nothing unless the market refuses every rung under it: at most one rung lands,
 * and the climb reaches this one only when the blocks refuse the rung under it ({@link hasHeadroom},
 * ladder-climb.ts), never at a planned slot or on the model's say-so alone. Where they do, the ladder pays 12 x its
 * market's top (12.9 x the market's price when it was prepared): the price of landing through a jump.
 */
export const HEADROOM = 12;

/** A top rung at least this multiple of the rung under it is headroom: far beyond a step of {@link TOP_STEP}. */
export const HEADROOM_GAP = 4;

/** Slots after the rung under it at which the plan puts the headroom rung: the soonest the blocks can refuse that rung. */
export const HEADROOM_AFTER = 3;

/** Prices and the scheduler's priority of one transaction (its cost shape): both rise together. */
export interface PriorityScale {
  priorityOf(price: bigint): number;
  /** The cheapest price whose priority is at least `priority`. */
  priceAtLeast(priority: number): bigint;
  /** The dearest price whose priority is at most `priority` (0 when even 0 is above it). */
  priceAtMost(priority: number): bigint;
}

/** The scale where priority is the price itself: what the plan uses without a transaction's shape. */
const PRICE_SCALE: PriorityScale = {
  priorityOf: (price) => Number(price),
  priceAtLeast: (priority) => BigInt(Math.ceil(priority)),
  priceAtMost: (priority) => BigInt(Math.max(0, Math.floor(priority))),
};

/** The scale of a transaction of `shape`: agave's priority, reward / (cost + 1) (transaction-cost.ts). */
export function priorityScaleOf(shape: CostShape): PriorityScale {
  const cost = transactionCost(shape);
  const never = 1n << 53n;
  return {
    priorityOf: (price) => priorityOf(price, shape, cost),
    // At least: just above a hair under it (cheapestPriceAbove is strict).
    priceAtLeast: (priority) =>
      priorityOf(0n, shape, cost) >= priority ? 0n : (cheapestPriceAbove(priority * (1 - 1e-12), shape, cost) ?? never),
    priceAtMost: (priority) => {
      const above = cheapestPriceAbove(priority, shape, cost) ?? never;
      return above > 0n ? above - 1n : 0n;
    },
  };
}

/** Odds within k slots (undefined while the model cannot say). */
export type OddsWithin = (k: number) => OddsAt | undefined;

/** What a plan needs. */
export interface PlanInput {
  readonly rungs: number;
  readonly deadlineSlots: number;
  readonly target: number;
  /** The largest k the model answers for (the window's length less one, at most 150). */
  readonly maxK: number;
  readonly odds: OddsWithin;
  /** The cheapest price that cleared {@link RECENT_CLEARED} of the newest {@link RECENT_BLOCKS} blocks, when known. */
  readonly recent?: bigint;
  /** The cheapest price that cleared at least one of the newest {@link RECENT_LOW_BLOCKS} blocks, when known. */
  readonly recentLow?: bigint;
  /** Prices to use while the model cannot say: the market's levels (low and very high), when there are any. */
  readonly fallback?: { readonly low: bigint; readonly high: bigint };
  /** The top rung's multiple of the rung under it ({@link HEADROOM} unless given; under {@link HEADROOM_GAP}: none). */
  readonly headroom?: number;
  /** The transaction's priority at a price: steps and headroom are taken on it ({@link PRICE_SCALE} unless given). */
  readonly scale?: PriorityScale;
}

/** One planned rung. */
export interface PlannedRung {
  readonly price: bigint;
  /** Its odds within the slots left at its send (0 when the model cannot say). */
  readonly odds: number;
  /** Slots after the first submission at which it would be sent. */
  readonly offset: number;
}

/**
 * Slots the top rung keeps for itself: half the deadline, at least 2. A quarter (5 of 20) was too few: in the
 * bench the top rung sent at slot 15 landed after the deadline (a single send at its price took up to 5 slots at
 * p90, up to 11 after a fee jump), and a rung the plan keeps to the end is the one the deadline cuts short.
 */
export function topRungSlots(deadlineSlots: number): number {
  return Math.max(2, Math.ceil(deadlineSlots / 2));
}

/** The send offsets of a ladder's rungs, from 0 for the first to the deadline less the top rung's slots. */
export function rungOffsets(deadlineSlots: number, rungs: number): number[] {
  const span = Math.max(0, deadlineSlots - topRungSlots(deadlineSlots));
  return Array.from({ length: rungs }, (_, i) => Math.floor((i * span) / (rungs - 1)));
}

/**
 * The send offsets the plan gives a ladder of `rungs` rungs: with {@link hasHeadroom headroom} (3 rungs or more) the
 * rungs under the top are spread as a ladder one rung shorter ({@link rungOffsets}), and the top is put
 * {@link HEADROOM_AFTER} slots after the rung under it, the soonest the blocks can refuse that rung.
 */
export function planOffsets(deadlineSlots: number, rungs: number, headroom: boolean): number[] {
  if (!headroom || rungs < 3) return rungOffsets(deadlineSlots, rungs);
  const under = rungOffsets(deadlineSlots, rungs - 1);
  const last = under[under.length - 1];
  return [...under, Math.max(last, Math.min(deadlineSlots - 1, last + HEADROOM_AFTER))];
}

/**
 * Whether a ladder's top rung is headroom: at least {@link HEADROOM_GAP} times the rung under it. Read from the
 * signed prices (SendLadder does not see the plan), so a client's own ladder with such a gap is climbed the same way.
 */
export function hasHeadroom(prices: readonly bigint[]): boolean {
  if (prices.length < 3) return false;
  const top = prices[prices.length - 1];
  const under = prices[prices.length - 2];
  return top >= under * BigInt(HEADROOM_GAP);
}

/** Plans the rungs' prices and offsets. */
export function planLadder(input: PlanInput): PlannedRung[] {
  const multiple = input.headroom ?? HEADROOM;
  if (input.rungs < 3 || multiple < HEADROOM_GAP) return planMarket(input, input.rungs);
  // The market's rungs as a ladder one rung shorter, and the headroom on top of them.
  const under = planMarket(input, input.rungs - 1);
  const offset = planOffsets(input.deadlineSlots, input.rungs, true)[input.rungs - 1];
  const scale = input.scale ?? PRICE_SCALE;
  const price = scale.priceAtLeast(scale.priorityOf(under[under.length - 1].price) * multiple);
  const k = Math.max(1, Math.min(input.maxK, input.deadlineSlots - offset));
  return [...under, { price, odds: input.odds(k)?.odds(price) ?? 0, offset }];
}

/** The rungs that follow the market: the bottom, the steps under the market's price, and one step over it. */
function planMarket(input: PlanInput, rungs: number): PlannedRung[] {
  const { deadlineSlots, target } = input;
  const scale = input.scale ?? PRICE_SCALE;
  const offsets = rungOffsets(deadlineSlots, rungs);
  const within = (offset: number) => Math.max(1, Math.min(input.maxK, deadlineSlots - offset));
  const oddsAt = offsets.map((offset) => input.odds(within(offset)));
  const topOdds = oddsAt[rungs - 1];
  let bottom = oddsAt[0]?.cheapestAbove(MEANINGFUL_ODDS)?.price ?? input.fallback?.low ?? 1n;
  if (bottom < 1n) bottom = 1n;
  // Past the model's reach the top rung takes the best it knows: its own recommendation for the target.
  let market = topOdds?.cheapest(target)?.price ?? topOdds?.cheapest(Math.min(target, 0.5))?.price;
  market ??= input.fallback?.high ?? bottom * 4n;
  if (input.recent !== undefined && input.recent > market) market = input.recent;
  // One step of headroom over the market's price: the top rung goes out slots after a single send would have, and
  // a market that rose meanwhile must not leave the whole ladder under it.
  const marketPriority = scale.priorityOf(market);
  const top = scale.priceAtLeast(marketPriority / TOP_STEP);
  // A cheap bet that every one of the newest blocks refused is not a bet on the market now (a model still holding a
  // cheaper past): the bottom rung is at least the cheapest price that cleared one of them.
  if (input.recentLow !== undefined && input.recentLow > bottom && input.recentLow < top) bottom = input.recentLow;
  const prices: bigint[] = [bottom];
  for (let i = 1; i < rungs; i++) {
    let price: bigint;
    if (i === rungs - 1) price = top;
    else {
      const goal = MEANINGFUL_ODDS + ((target - MEANINGFUL_ODDS) * i) / (rungs - 1);
      const ratio = top > bottom ? Number(top) / Number(bottom) : 1;
      const geometric = BigInt(Math.round(Number(bottom) * ratio ** (i / (rungs - 1))));
      price = oddsAt[i]?.cheapestAbove(goal)?.price ?? geometric;
      const stepped = scale.priceAtMost(marketPriority * TOP_STEP ** (rungs - 1 - i));
      if (stepped > price) price = stepped;
      // Room below the top for the rungs still to come (a model that rates the top cheaper than the market now).
      const ceiling = top - BigInt(rungs - 1 - i);
      if (price > ceiling) price = geometric < ceiling ? geometric : ceiling;
      // A bottom the newest blocks raised to the market's edge: the rungs between it and the top spread evenly.
      if (price <= prices[i - 1] && geometric > prices[i - 1] && geometric < ceiling) price = geometric;
    }
    // Strictly rising, whatever the model says (a market where everything lands at 0 still gets a ladder).
    if (price <= prices[i - 1]) price = prices[i - 1] + 1n;
    prices.push(price);
  }
  return prices.map((price, i) => ({ price, odds: oddsAt[i]?.odds(price) ?? 0, offset: offsets[i] }));
}
