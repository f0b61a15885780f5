/**
 * PrepareLadder's core: an unsigned draft and a durable nonce account in, N unsigned rungs out. The nonce account is
 * read and checked, the draft goes through PrepareTransaction's preparer once with the nonce as its lifetime (so
 * that its compute-unit limit is measured as a single prepare measures it), and the prepared message is re-priced
 * byte for byte into the rungs the plan (ladder-plan.ts) prices from the landing odds.
 */
import { SolgateError } from "../../errors.ts";
import type { OddsAt } from "../../fees/fee-odds.ts";
import { LAMPORTS_PER_SIGNATURE, computeBudgetOf, transactionFeeLamports } from "../../solana/compute-budget.ts";
import { decodeWireTransaction, staticWritableAccounts } from "../../solana/wire-transaction.ts";
import type { Preparer } from "../prepare-transaction.ts";
import { costShapeOf } from "../../fees/transaction-cost.ts";
import {
  RECENT_BLOCKS,
  RECENT_CLEARED,
  RECENT_LOW_BLOCKS,
  planLadder,
  planOffsets,
  priorityScaleOf,
} from "./ladder-plan.ts";
import { assertAffordable, feePayerRoom, readNonceAccount } from "./nonce-account.ts";
import type { NonceRpc } from "./nonce-account.ts";
import { rungAtPrice } from "./rung-message.ts";

/** Odds for a transaction within k slots, and the levels to fall back on (the fee market offers both). */
export interface LadderOddsSource {
  oddsForTransaction(wire: Uint8Array, withinSlots?: number): Promise<OddsAt | undefined>;
  forAccounts(
    writable: readonly string[],
    signatures?: number,
  ): { priority?: { low: bigint; veryHigh: bigint; recommended: bigint } | undefined };
}

/** A PrepareLadder request, decoded from the transport. */
export interface PrepareLadderRequest {
  readonly wire: Uint8Array;
  readonly nonceAccount: string;
  /** 2 to 8 (default 4). */
  readonly rungs?: number;
  /** 4 to 150 (default 20). */
  readonly deadlineSlots?: number;
  /** Above 0 and below 1 (default: the market's target). */
  readonly target?: number;
  readonly signal?: AbortSignal;
}

/** One prepared rung. */
export interface PreparedLadderRung {
  readonly wire: Uint8Array;
  readonly price: bigint;
  readonly odds: number;
  readonly sendAtSlot: bigint;
  readonly fee: bigint;
}

/** The prepared ladder. */
export interface PreparedLadder {
  readonly rungs: readonly PreparedLadderRung[];
  readonly nonce: string;
  readonly computeUnitLimit: number;
  readonly deadlineSlots: number;
  readonly target: number;
  readonly slot: bigint;
}

/** Options of {@link createLadderPreparer}. */
export interface LadderPreparerOptions {
  rpc: NonceRpc;
  preparer: Preparer;
  fees?: LadderOddsSource;
  /** The target when the request names none (SOLGATE_FEES_TARGET; default 0.9). */
  target?: number;
  /** The largest k the odds answer for (default 149). */
  maxOddsSlots?: number;
  newestSlot: () => bigint;
}

/** Shared bounds of the ladder's request fields. */
export const LADDER_DEFAULTS = { rungs: 4, deadlineSlots: 20 } as const;

/**
 * Checks a field against its range.
 * @throws SolgateError INVALID_PARAMETER naming the field.
 */
export function checkRange(field: string, value: number | undefined, low: number, high: number, fallback: number) {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < low || value > high)
    throw new SolgateError("INVALID_PARAMETER", `${field} must be a whole number from ${low} to ${high}`, { field });
  return value;
}

/**
 * Checks a target probability.
 * @throws SolgateError INVALID_PARAMETER (field `target`).
 */
export function checkTarget(value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(value > 0 && value < 1))
    throw new SolgateError("INVALID_PARAMETER", "target must be above 0 and below 1", { field: "target" });
  return value;
}

/** Creates the ladder preparer. */
export function createLadderPreparer(options: LadderPreparerOptions) {
  const { rpc, preparer, fees } = options;
  const rent: { value?: bigint } = {};
  const maxK = options.maxOddsSlots ?? 149;

  return {
    /**
     * Prepares the rungs.
     * @throws SolgateError INVALID_TRANSACTION, INVALID_PARAMETER, NONCE_ACCOUNT_NOT_FOUND, NONCE_ACCOUNT_INVALID,
     * NONCE_AUTHORITY_NOT_SIGNER, LADDER_FEE_UNAFFORDABLE, and PrepareTransaction's refusals (SIMULATION_FAILED).
     */
    async prepare(request: PrepareLadderRequest): Promise<PreparedLadder> {
      const rungs = checkRange("rungs", request.rungs, 2, 8, LADDER_DEFAULTS.rungs);
      const deadlineSlots = checkRange("deadlineSlots", request.deadlineSlots, 4, 150, LADDER_DEFAULTS.deadlineSlots);
      const target = checkTarget(request.target, options.target ?? 0.9);
      const draft = decodeWireTransaction(request.wire);
      const nonce = await readNonceAccount(rpc, request.nonceAccount);
      if (!draft.signers.includes(nonce.authority)) {
        throw new SolgateError(
          "NONCE_AUTHORITY_NOT_SIGNER",
          `nonce account ${nonce.address}'s authority ${nonce.authority} is not a signer of the draft; add it as a signer (or make it the fee payer)`,
          { nonceAccount: nonce.address, authority: nonce.authority },
        );
      }
      // A payer that cannot even pay the base fee is refused before the simulation (which would fail on it anyway).
      const feePayer = draft.signers[0];
      const room = await feePayerRoom(rpc, feePayer, rent);
      assertAffordable(room, LAMPORTS_PER_SIGNATURE * BigInt(draft.signatures.length), feePayer);
      // Priced at 1 for now: only the limit is taken from this prepare; every rung is re-priced below.
      const prepared = await preparer.prepare({
        wire: request.wire,
        priorityFee: { kind: "microLamports", microLamports: 1n },
        replaceComputeBudget: true,
        durableNonce: { nonceAccount: nonce.address, authority: nonce.authority, nonce: nonce.nonce },
        signal: request.signal,
      });
      const slot = options.newestSlot();
      // The plan asks for odds within the slots left at each rung's offset: read those up front (the plan is pure).
      const within = planOffsets(deadlineSlots, rungs, true).map((offset) =>
        Math.max(1, Math.min(maxK, deadlineSlots - offset)),
      );
      const ks = [...new Set(within)];
      const answers = await Promise.all(ks.map((k) => fees?.oddsForTransaction(prepared.wire, k)));
      const oddsByK = new Map(ks.map((k, i) => [k, answers[i]]));
      const compiled = decodeWireTransaction(prepared.wire);
      const writable = staticWritableAccounts(compiled.message);
      const levels = fees?.forAccounts(writable, compiled.signatures.length).priority;
      const market = answers.find((answer) => answer !== undefined);
      const recent = market?.clearedRecently(RECENT_BLOCKS, RECENT_CLEARED);
      const recentLow = market?.clearedRecently(RECENT_LOW_BLOCKS, 1);
      const plan = planLadder({
        // The rung's cost shape, as the fee market reads a block's transactions.
        scale: priorityScaleOf(costShapeOf(compiled.message, compiled.signatures.length, writable.length)),
        rungs,
        deadlineSlots,
        target,
        maxK,
        odds: (k) => oddsByK.get(k),
        ...(recent === undefined ? {} : { recent }),
        ...(recentLow === undefined ? {} : { recentLow }),
        ...(levels === undefined
          ? {}
          : { fallback: { low: levels.low, high: levels.veryHigh > levels.low ? levels.veryHigh : levels.low * 4n } }),
      });
      const out = plan.map((rung) => {
        const wire = rungAtPrice(prepared.wire, rung.price);
        const budget = computeBudgetOf(decodeWireTransaction(wire).message);
        return {
          wire,
          price: rung.price,
          odds: rung.odds,
          sendAtSlot: slot + BigInt(rung.offset),
          fee: transactionFeeLamports(compiled.signatures.length, budget),
        };
      });
      assertAffordable(await feePayerRoom(rpc, feePayer, rent), out[out.length - 1].fee, feePayer);
      return {
        rungs: out,
        nonce: nonce.nonce,
        computeUnitLimit: prepared.computeUnitLimit,
        deadlineSlots,
        target,
        slot,
      };
    },
  };
}

/** The ladder preparer. */
export type LadderPreparer = ReturnType<typeof createLadderPreparer>;
