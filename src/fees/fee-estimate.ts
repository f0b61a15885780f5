/**
 * What the fee market answers: levels with their recommendation, the base fee, and where they come from.
 * Transport-free; src/services/fee-service.ts maps it onto the `FeeEstimate` message.
 */
import { LAMPORTS_PER_SIGNATURE } from "../solana/compute-budget.ts";
import { SolgateError } from "../errors.ts";
import type { LandingOddsQuote, OddsAt } from "./fee-odds.ts";
import type { FeeLevels } from "./percentile.ts";
import type { TipLevels } from "./tip-levels.ts";

/** The unit of every price level. */
export const PRICE_UNIT = "microLamportsPerComputeUnit";

/** Where levels come from. */
export type FeeSource = "blocks" | "recentPrioritizationFees" | "none";

/** The named levels a client may pick for its transaction (`auto` is the recommendation); the one list of them. */
export const PRIORITY_LEVELS = ["auto", "low", "medium", "high"] as const;

/** A named level a client may pick for its transaction. */
export type PriorityLevelName = (typeof PRIORITY_LEVELS)[number];

/** Price levels plus the recommendation, in micro-lamports per compute unit. */
export interface PriorityLevels extends FeeLevels {
  /**
   * With odds: the cheapest price whose odds reach the target within k slots (fee-odds.ts). Without: medium.
   * Either way raised to the floor and capped by the ceiling.
   */
  readonly recommended: bigint;
  readonly unit: typeof PRICE_UNIT;
  /** The odds of landing within k slots at each level; absent while too few blocks were seen to estimate them. */
  readonly odds?: LandingOddsQuote;
}

/** The per-signature fee of a transaction. */
export interface BaseFee {
  readonly lamportsPerSignature: bigint;
  readonly signatures: number;
  readonly lamports: bigint;
}

/** A fee estimate, globally or for accounts / a transaction. */
export interface FeeEstimate {
  /** Absent when `source` is `none`. */
  readonly priority: PriorityLevels | undefined;
  readonly baseFee: BaseFee;
  /** When the window last moved; undefined before any data. */
  readonly updatedAt: Date | undefined;
  readonly source: FeeSource;
  /** The newest slot behind the levels (0 before any data). */
  readonly slot: bigint;
  /** How many slots the levels cover. */
  readonly windowSlots: number;
  /** How many prices the global levels were computed from (transactions, or slots in fallback). */
  readonly sampleSize: number;
  /** The write-locked accounts taken into account (empty for the global estimate). */
  readonly writableAccounts: readonly string[];
  /** Jito tip levels (tip-levels.ts); absent while unknown. */
  readonly tips?: TipLevels;
}

/** Levels plus `recommended`: medium, raised to `floor`, then capped by `ceiling` when one is set. */
export function withRecommendation(levels: FeeLevels, floor: bigint, ceiling: bigint | undefined): PriorityLevels {
  let recommended = levels.medium < floor ? floor : levels.medium;
  if (ceiling !== undefined && recommended > ceiling) recommended = ceiling;
  return {
    low: levels.low,
    medium: levels.medium,
    high: levels.high,
    veryHigh: levels.veryHigh,
    recommended,
    unit: PRICE_UNIT,
  };
}

/** The base fee of a transaction with `signatures` signatures. */
export function baseFeeFor(signatures: number): BaseFee {
  return {
    lamportsPerSignature: LAMPORTS_PER_SIGNATURE,
    signatures,
    lamports: LAMPORTS_PER_SIGNATURE * BigInt(signatures),
  };
}

/** EstimateFees' odds questions (any may be absent). */
export interface OddsQuestions {
  /** A price to give the odds of. */
  readonly price?: bigint;
  /** A probability to price. */
  readonly target?: number;
  /** How many points of the curve to give (8 to 32). */
  readonly curvePoints?: number;
}

/** EstimateFees' odds answers. */
export interface OddsAnswers {
  readonly withinSlots: number;
  readonly priceOdds?: number;
  readonly cheapest?: { readonly price: bigint; readonly odds: number };
  readonly curve: readonly { readonly price: bigint; readonly odds: number }[];
}

/** Whether a request asks any odds question. */
export function asksOdds(questions: OddsQuestions): boolean {
  return questions.price !== undefined || questions.target !== undefined || questions.curvePoints !== undefined;
}

/**
 * Answers the questions from the odds of one transaction within k slots; undefined odds (too few blocks, fallback)
 * leave every answer out but k.
 * @throws SolgateError INVALID_PARAMETER for a target outside (0, 1) or a curve outside 8-32 points.
 */
export function answerOdds(
  at: Pick<OddsAt, "odds" | "cheapest" | "curve"> | undefined,
  withinSlots: number,
  questions: OddsQuestions,
): OddsAnswers {
  const { target, curvePoints } = questions;
  if (target !== undefined && !(target > 0 && target < 1))
    throw new SolgateError("INVALID_PARAMETER", "targetOdds must be above 0 and below 1", { field: "targetOdds" });
  if (curvePoints !== undefined && !(Number.isInteger(curvePoints) && curvePoints >= 8 && curvePoints <= 32))
    throw new SolgateError("INVALID_PARAMETER", "curvePoints must be a whole number from 8 to 32", {
      field: "curvePoints",
    });
  if (at === undefined) return { withinSlots, curve: [] };
  const cheapest = target === undefined ? undefined : at.cheapest(target);
  return {
    withinSlots,
    ...(questions.price === undefined ? {} : { priceOdds: at.odds(questions.price) }),
    ...(cheapest === undefined ? {} : { cheapest }),
    curve: curvePoints === undefined ? [] : at.curve(curvePoints),
  };
}
