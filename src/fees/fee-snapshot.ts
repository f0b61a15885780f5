/**
 * What the fee market answers from: a snapshot of its source of truth (the block window, or the
 * node's recent prioritization fees in fallback), and the estimates built on it. Pure functions:
 * the market decides when a snapshot is stale and keeps the current one.
 */
import type { FollowerState } from "./block-follower.ts";
import { baseFeeFor, withRecommendation } from "./fee-estimate.ts";
import type { FeeEstimate, FeeSource, PriorityLevels } from "./fee-estimate.ts";
import type { LandingOddsQuote } from "./fee-odds.ts";
import type { FeeWindow } from "./fee-window.ts";
import type { FeeLevels } from "./percentile.ts";
import type { RecentFeeLevels } from "./recent-fees.ts";

/** The market's view at one moment: where its levels come from and what they cover. */
export interface FeeSnapshot {
  readonly source: FeeSource;
  readonly levels: FeeLevels | undefined;
  readonly slot: bigint;
  readonly windowSlots: number;
  readonly sampleSize: number;
  readonly updatedAt: Date | undefined;
}

/** The snapshot of the block window, given the follower's progress (its own, or the fleet leader's). */
export function blockSnapshot(window: FeeWindow, state: FollowerState): FeeSnapshot {
  const newest = window.newestSlot();
  const global = window.global();
  const covered = newest === undefined || state.firstSlot === undefined ? 0 : Number(newest - state.firstSlot + 1n);
  return {
    source: global === undefined ? "none" : "blocks",
    levels: global?.levels,
    slot: newest ?? 0n,
    windowSlots: Math.min(window.windowSlots, covered),
    sampleSize: global?.sampleSize ?? 0,
    updatedAt: state.lastMoveAt === undefined ? undefined : new Date(state.lastMoveAt),
  };
}

/** The snapshot of the node's recent prioritization fees; `movedAt` is when their newest slot last moved. */
export function fallbackSnapshot(recent: RecentFeeLevels & { movedAt: number }): FeeSnapshot {
  return {
    source: "recentPrioritizationFees",
    levels: recent.levels,
    slot: recent.newestSlot,
    windowSlots: recent.sampleSize,
    sampleSize: recent.sampleSize,
    updatedAt: new Date(recent.movedAt),
  };
}

/** Bounds of `recommended`. */
export interface RecommendationBounds {
  readonly floor: bigint;
  readonly ceiling: bigint | undefined;
}

/** The recommendation and odds for levels, when the odds can be estimated. */
export type OddsQuoter = (levels: FeeLevels) => { recommended: bigint; odds: LandingOddsQuote } | undefined;

/**
 * The estimate for `levels` (the snapshot's, or raised for some accounts) seen through `view`. With a
 * quoter that can estimate odds (block source only), `recommended` and the odds come from it.
 */
export function estimateOf(
  view: FeeSnapshot,
  levels: FeeLevels | undefined,
  writable: readonly string[],
  signatures: number,
  bounds: RecommendationBounds,
  quoter?: OddsQuoter,
): FeeEstimate {
  let priority: PriorityLevels | undefined;
  if (levels !== undefined) {
    priority = withRecommendation(levels, bounds.floor, bounds.ceiling);
    const quoted = view.source === "blocks" ? quoter?.(levels) : undefined;
    if (quoted !== undefined) priority = { ...priority, recommended: quoted.recommended, odds: quoted.odds };
  }
  return {
    priority,
    baseFee: baseFeeFor(signatures),
    updatedAt: view.updatedAt,
    source: levels === undefined ? "none" : view.source,
    slot: view.slot,
    windowSlots: view.windowSlots,
    sampleSize: view.sampleSize,
    writableAccounts: writable,
  };
}
