/**
 * The climb's rule, as a pure decision: given where the ladder stands at a slot and what the landing odds say, is
 * the next rung due?
 *
 * The current rung keeps its place while its odds of landing in the slots left stay at the target, or while its
 * planned stay lasts (the plan's offsets spread the rungs over the deadline). It makes way when its stay is over and
 * its odds in the time left are below the target; and at once, whatever the model says:
 * - when the top rung's planned send slot has come: the plan keeps the top rung the slots it needs to reach the
 *   target, and a model that still rates a lower rung at the target (one that has not seen the market move) must not
 *   eat into them;
 * - when the top rung's odds in the time left less one slot fall below the target: waiting longer would leave even
 *   the top rung short of it (a market that jumped, or a deadline closing in);
 * - when its own odds in the time left fall below the bottom rung's floor of meaningful odds (a rung the market has
 *   left behind holds nothing up);
 * - when the blocks refuse it: {@link REFUSED_BLOCKS} blocks since its submission cleared above its price on its
 *   accounts, or {@link WAITED_BLOCKS} blocks went by without it. That is the market's own answer, read from the
 *   blocks; the model's odds, learnt over a window of slots, lag a market that moved (a fee jump), and on a sharp
 *   curve a rung below the clearing price waits for a dip that the deadline rarely leaves time for.
 * Without odds the plan alone decides.
 *
 * A bottom rung whose price cleared one of the newest blocks on its accounts is patient: the end of its stay does not
 * move it, and the blocks must refuse it {@link PATIENCE} times as often. The top's planned slot, the top's odds and
 * the floor of meaningful odds still do. On an account whose blocks swing between a cheap mode and a dear one, the
 * bottom rung (lifted to the cheap mode, ladder-plan.ts) lands when a cheap block comes, where the rules above made
 * way for the dear rung after 3-4 dear blocks in a row.
 *
 * A ladder whose top rung is headroom (ladder-plan.ts `hasHeadroom`: many times the rung under it) is climbed as a
 * ladder one rung shorter, and from the rung under the top only on the blocks' refusal (the last rule): not at a
 * planned slot, not on the model's odds, which lag a market that moved and would spend the headroom where the rung
 * under it was about to land.
 */
import { MEANINGFUL_ODDS } from "./ladder-plan.ts";

/**
 * Blocks that must refuse a rung (clear above its price) before it makes way: 3. The hindsight-cheapest price that
 * lands is a patient one (in the bench it landed within 20 slots, often after several), and a climb that left a
 * rung after one refusing block paid the rung above it: 1.05-1.15 x hindsight where 3 blocks gave 1.03-1.09, at
 * the same reliability (the top rung's planned slot and its step of headroom, ladder-plan.ts, are what keep a
 * patient climb inside the deadline).
 */
export const REFUSED_BLOCKS = 3;

/**
 * Blocks a rung may go without landing, whatever their clearing prices say, before it makes way: one more than
 * {@link REFUSED_BLOCKS}. The clearing prices are the model's reading of each block for the draft's accounts; on the
 * bench's hot account it read room in blocks that did not take the rung (2.3M µL/CU against a 2.8M market, kept
 * 5-10 slots), so plain non-landing counts too.
 */
export const WAITED_BLOCKS = 4;

/**
 * How many times the blocks must refuse a patient bottom rung ({@link ClimbView.patient}) before it makes way: 2
 * (6 refusing blocks, or 8 without it). In the bench's fee jump, the hot account's bottom rung landed in 27-29 of 40
 * ladders where it landed in 17-26 without patience, and the hot account's median fee, in the rung's terms, was 1.00 x
 * hindsight in four runs of five (2.28 x in the fifth) where it was 1.00-4.56 x; reliability stayed at 100%
 * (docs/benchmarks.md, eighth round).
 */
export const PATIENCE = 2;

/**
 * How far above a rung every block must have cleared for the climb to skip it: 2 times its price. A market that
 * jumped (the bench's tenfold fee jump) clears many times above the rungs priced before it; an ordinary market swings
 * around its rungs, and there a rung that the blocks before its submission all refused often landed in the few
 * blocks after it (skipping at 1 x, tried, passed the 0.93 x rung in 5-8 of 20 hot-account ladders per run and paid
 * the one above: 1.04-1.21 x hindsight where the same code without the skip paid 0.98-1.13 x).
 */
export const SKIP_MARGIN = 2n;

/**
 * The rung to submit once the climb is due: the next one, or, past it, every rung that each block since the current
 * rung's submission (at least {@link REFUSED_BLOCKS} of them) cleared far above ({@link SKIP_MARGIN} times its price),
 * up to the market's top: a market that moved past several rungs at once (a fee jump) is not walked up one refusal at
 * a time, each costing its own blocks while the deadline runs (in the bench, ladders of 5 and 6 rungs prepared before
 * the jump reached their headroom at offset 14-15 of 20 and two of them landed after the deadline, where 4-rung
 * ladders reached it at 10-11). A headroom top (`headroom`) is never skipped to: it keeps its own rule, the blocks'
 * refusal of the market's top once that one is out (skipping to it from lower rungs, tried, paid it where the market's
 * top, sent, would have landed a few slots later).
 *
 * `refused[j]` and `blocks`: of the blocks since the current rung's submission, those that cleared above
 * {@link SKIP_MARGIN} times the price of rung `current + 1 + j`, and all of them.
 */
export function nextRung(
  current: number,
  rungs: number,
  refused: readonly number[],
  blocks: number,
  headroom = false,
): number {
  const last = headroom && rungs >= 3 ? rungs - 2 : rungs - 1;
  let next = current + 1;
  while (next < last && blocks >= REFUSED_BLOCKS && (refused[next - current - 1] ?? 0) >= blocks) next++;
  return next;
}

/** What the decision looks at. */
export interface ClimbView {
  readonly slot: bigint;
  /** The index of the highest rung submitted. */
  readonly current: number;
  readonly rungs: number;
  readonly firstSlot: bigint;
  readonly deadlineSlot: bigint;
  readonly offsets: readonly number[];
  readonly target: number;
  /**
   * The current rung's odds of landing within the slots left, given that it has not landed in the slots since its
   * submission ({@link oddsAfterWaiting}); undefined without a model.
   */
  readonly currentOdds?: number;
  /** The top rung's odds of landing within the slots left less one; undefined without a model. */
  readonly topOdds?: number;
  /** Blocks since the current rung's submission that cleared above its price; undefined without blocks. */
  readonly refused?: number;
  /** Blocks since the current rung's submission (it has landed in none); undefined without blocks. */
  readonly waitedBlocks?: number;
  /** The top rung is headroom: `topOdds` and the planned slot are the rung under it's, and it is reached only on refusal. */
  readonly headroom?: boolean;
  /**
   * The current rung's price cleared at least one of the newest blocks on its accounts (ladder-plan.ts
   * `RECENT_LOW_BLOCKS`): a market it is part of. Only the bottom rung is patient.
   */
  readonly patient?: boolean;
}

/**
 * The odds that a rung which has already waited some slots in vain lands in the time left: from the model's odds
 * within the slots waited (`waited`) and within those plus the slots left (`total`), P(lands in the rest | not yet)
 * = (total - waited) / (1 - waited). The model's unconditional odds in the time left ignore the wait: a model that
 * has not seen the market move (a fee jump) keeps quoting a refused rung at the target, and the ladder sits on it
 * until it expires.
 */
export function oddsAfterWaiting(waited: number, total: number): number {
  if (waited >= 1) return 0;
  return Math.min(1, Math.max(0, (total - waited) / (1 - waited)));
}

/** The slots left before the deadline (0 once it is reached). */
export function slotsLeft(slot: bigint, deadlineSlot: bigint): number {
  return slot >= deadlineSlot ? 0 : Number(deadlineSlot - slot);
}

/** Whether the next rung is due. */
export function shouldClimb(view: ClimbView): boolean {
  if (view.current >= view.rungs - 1) return false;
  if (view.slot >= view.deadlineSlot) return false;
  const patient = view.patient === true && view.current === 0;
  const refused =
    (view.refused !== undefined && view.refused >= REFUSED_BLOCKS * (patient ? PATIENCE : 1)) ||
    (view.waitedBlocks !== undefined && view.waitedBlocks >= WAITED_BLOCKS * (patient ? PATIENCE : 1));
  const last = view.headroom === true && view.rungs >= 3 ? view.rungs - 2 : view.rungs - 1;
  if (view.current >= last) return refused;
  const stayOver = view.slot >= view.firstSlot + BigInt(view.offsets[view.current + 1]);
  if (view.slot >= view.firstSlot + BigInt(view.offsets[last])) return true;
  if (!patient && stayOver && (view.currentOdds === undefined || view.currentOdds < view.target)) return true;
  // A rung that has lost any meaningful chance in the time left (the market moved past it) holds nothing up.
  if (view.currentOdds !== undefined && view.currentOdds < MEANINGFUL_ODDS) return true;
  if (refused) return true;
  return view.topOdds !== undefined && view.topOdds < view.target;
}
