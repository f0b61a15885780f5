/**
 * A fee ladder's plan: when each rung would be sent and at what price, from the landing-odds model. Pure: the
 * odds come in as a function of k (the slots left), so the plan can be tested without a market.
 *
 * Rung i is sent `offset(i)` slots after the first submission; the offsets spread evenly over the deadline less the
 * slots the top rung keeps for itself. The top rung is the cheapest price whose odds reach the target within the
 * slots it has left; the bottom rung the cheapest price with meaningful odds (at least {@link MEANINGFUL_ODDS})
 * within the whole deadline, and never 0; the rungs between rise geometrically, strictly.
 */
import type { OddsAt } from "../../fees/fee-odds.ts";

/** The odds below which a price is not worth a rung: the bottom rung's floor. */
export const MEANINGFUL_ODDS = 0.2;

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
  /** Prices to use while the model cannot say: the market's levels (low and very high), when there are any. */
  readonly fallback?: { readonly low: bigint; readonly high: bigint };
}

/** One planned rung. */
export interface PlannedRung {
  readonly price: bigint;
  /** Its odds within the slots left at its send (0 when the model cannot say). */
  readonly odds: number;
  /** Slots after the first submission at which it would be sent. */
  readonly offset: number;
}

/** Slots the top rung keeps for itself: a fair share of the deadline, at least 2. */
export function topRungSlots(deadlineSlots: number, rungs: number): number {
  return Math.max(2, Math.ceil(deadlineSlots / rungs));
}

/** The send offsets of a ladder's rungs, from 0 for the first to the deadline less the top rung's slots. */
export function rungOffsets(deadlineSlots: number, rungs: number): number[] {
  const span = Math.max(0, deadlineSlots - topRungSlots(deadlineSlots, rungs));
  return Array.from({ length: rungs }, (_, i) => Math.floor((i * span) / (rungs - 1)));
}

/** Plans the rungs' prices and offsets. */
export function planLadder(input: PlanInput): PlannedRung[] {
  const { rungs, deadlineSlots, target } = input;
  const offsets = rungOffsets(deadlineSlots, rungs);
  const within = (offset: number) => Math.max(1, Math.min(input.maxK, deadlineSlots - offset));
  const topOdds = input.odds(within(offsets[rungs - 1]));
  const wholeOdds = input.odds(within(0));
  let bottom = wholeOdds?.cheapestAbove(MEANINGFUL_ODDS)?.price ?? input.fallback?.low ?? 1n;
  if (bottom < 1n) bottom = 1n;
  // Past the model's reach the top rung takes the best it knows: its own recommendation for the target.
  let top = topOdds?.cheapest(target)?.price ?? topOdds?.cheapest(Math.min(target, 0.5))?.price;
  top ??= input.fallback?.high ?? bottom * 4n;
  const prices: bigint[] = [];
  for (let i = 0; i < rungs; i++) {
    const ratio = top > bottom ? Number(top) / Number(bottom) : 1;
    let price = i === rungs - 1 && top > bottom ? top : BigInt(Math.round(Number(bottom) * ratio ** (i / (rungs - 1))));
    // Strictly rising, whatever the model says (a market where everything lands at 0 still gets a ladder).
    if (i > 0 && price <= prices[i - 1]) price = prices[i - 1] + 1n;
    prices.push(price);
  }
  return prices.map((price, i) => {
    const odds = i === rungs - 1 ? topOdds : input.odds(within(offsets[i]));
    return { price, odds: odds?.odds(price) ?? 0, offset: offsets[i] };
  });
}
