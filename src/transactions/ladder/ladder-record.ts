/**
 * A fee ladder's state: what the store keeps (rung bytes included, so that any replica can go on climbing) and what
 * clients see. A ladder ends once, and its status only moves forward.
 */
import type { ChainError } from "../transaction-error.ts";

/** Where a ladder stands. */
export type LadderState =
  | "pending"
  | "landed"
  | "confirmed"
  | "finalized"
  | "failed"
  | "nonce_advanced"
  | "expired"
  | "cancelled";

/** Where a rung stands. */
export type RungState = "waiting" | "submitted" | "landed" | "dead";

/** One rung. */
export interface Rung {
  readonly signature: string;
  readonly price: bigint;
  /** The signed wire bytes (kept until the ladder ends). */
  readonly wire: Uint8Array;
  readonly state: RungState;
  readonly submittedSlot?: bigint;
  /** Its fee if it lands, in lamports. */
  readonly fee: bigint;
}

/** The overpay of a landed ladder: the cheapest price that made the same block on the same accounts. */
export interface Overpay {
  readonly cheapestPrice: bigint;
  readonly cheapestFee: bigint;
  readonly ratio: number;
}

/** A ladder. */
export interface Ladder {
  readonly id: string;
  readonly state: LadderState;
  readonly rungs: readonly Rung[];
  readonly nonceAccount: string;
  readonly nonce: string;
  readonly target: number;
  readonly firstSlot: bigint;
  readonly deadlineSlot: bigint;
  /** Offsets (slots after the first submission) at which each rung is due at the latest. */
  readonly offsets: readonly number[];
  /** The write-locked accounts (static), for the overpay comparison. */
  readonly writable: readonly string[];
  readonly landedRung?: number;
  readonly slot?: bigint;
  readonly feePaid?: bigint;
  readonly error?: ChainError;
  readonly overpay?: Overpay;
  /** The slot at which the nonce was first seen moved with no rung seen in a block (see ladders.ts). */
  readonly nonceMovedAt?: bigint;
  /** Whether the client asked to stop climbing (the status may still move to landed: the chain decides). */
  readonly cancelled: boolean;
  readonly updatedAt: Date;
}

const FINAL: ReadonlySet<LadderState> = new Set(["finalized", "failed", "nonce_advanced", "expired", "cancelled"]);

/** Whether nothing will change the ladder any more (a cancelled one stops when its nonce moves, see ladders.ts). */
export function isFinalLadder(ladder: Ladder): boolean {
  if (ladder.state === "cancelled") return ladder.rungs.every((r) => r.state !== "submitted");
  return FINAL.has(ladder.state);
}

/** Whether the ladder is still climbing or waiting for a submitted rung. */
export function isOpenLadder(ladder: Ladder): boolean {
  return ladder.state === "pending" || (ladder.state === "cancelled" && !isFinalLadder(ladder));
}

/** Slots from the first submission to the landed rung's block. */
export function slotsToLand(ladder: Ladder): bigint | undefined {
  return ladder.slot === undefined ? undefined : ladder.slot - ladder.firstSlot;
}
