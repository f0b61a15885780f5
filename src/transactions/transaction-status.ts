/**
 * The states a transaction moves through and the record kept of it, plus the rule that reads a
 * node's `getSignatureStatuses` entry into a state.
 *
 *   submitted -> confirmed -> finalized
 *       |            (failed: in a block with an error, at confirmed commitment or better)
 *       +-> expired  (its blockhash lapsed while it was unseen)
 */
import { describeTransactionError } from "./transaction-error.ts";
import type { ChainError } from "./transaction-error.ts";

/** Where a transaction stands. */
export type TransactionState = "submitted" | "confirmed" | "finalized" | "failed" | "expired";

/** The states after which nothing changes. */
export const TERMINAL_STATES: ReadonlySet<TransactionState> = new Set(["finalized", "failed", "expired"]);

/** Whether nothing more will happen to a transaction in this state. */
export function isTerminalState(state: TransactionState): boolean {
  return TERMINAL_STATES.has(state);
}

/** Whether a confirm-and-wait send may answer: confirmed or anything after it. */
export function isSettledState(state: TransactionState): boolean {
  return state !== "submitted";
}

/** The state of one transaction, as Solgate tracks it or reads it from the chain. */
export interface StatusRecord {
  /** The first signature (base58). */
  readonly signature: string;
  readonly state: TransactionState;
  /** The slot of the block holding it, once it is in one. */
  readonly slot?: bigint;
  /** Why it failed (state `failed`). */
  readonly error?: ChainError;
  /** The fee it paid in lamports, once it is in a block. */
  readonly fee?: bigint;
  /** The last block height at which its blockhash is valid, when known. */
  readonly lastValidBlockHeight?: bigint;
  /** When the record last changed. */
  readonly updatedAt: Date;
  /** Why it is still waiting, while it is unseen in blocks too full for its fee (see the fee market's `waiting`). */
  readonly waiting?: WaitingReason;
}

/** Why a submitted transaction is still waiting. */
export interface WaitingReason {
  /** Its odds now of landing within `withinSlots` slots at its own fee. */
  readonly odds: number;
  readonly withinSlots: number;
  /** The compute-unit price that would land now, in micro-lamports. */
  readonly landingPrice: bigint;
  /** The compute-unit price it carries. */
  readonly price: bigint;
}

/** The part of a `getSignatureStatuses` entry this module reads. */
export interface SignatureStatusView {
  readonly slot: bigint;
  readonly err: unknown;
  readonly confirmationStatus: "processed" | "confirmed" | "finalized" | null;
}

/** What a status entry says: the state, and whether it is at least in a (processed) block. */
export interface ObservedStatus {
  readonly state: TransactionState;
  readonly slot: bigint;
  readonly error?: ChainError;
  /** In a block, at any commitment (the transaction need not be rebroadcast). */
  readonly landed: true;
}

/**
 * Reads a status entry. A `processed` transaction is still `submitted` (its block may be dropped on
 * a fork); success or failure is only reported at `confirmed` or better.
 */
export function observeStatus(status: SignatureStatusView): ObservedStatus {
  const commitment = status.confirmationStatus ?? "processed";
  if (commitment === "processed") return { state: "submitted", slot: status.slot, landed: true };
  if (status.err !== null && status.err !== undefined) {
    return { state: "failed", slot: status.slot, error: describeTransactionError(status.err), landed: true };
  }
  return { state: commitment === "finalized" ? "finalized" : "confirmed", slot: status.slot, landed: true };
}

/** The order of states along the happy path, to tell a transition from a repeat or a step back. */
const RANK: Record<TransactionState, number> = { submitted: 0, confirmed: 1, finalized: 2, failed: 2, expired: 2 };

/** Whether `next` moves a transaction forward from `previous`. */
export function isAdvance(previous: TransactionState, next: TransactionState): boolean {
  return RANK[next] > RANK[previous];
}
