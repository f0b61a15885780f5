/**
 * What one tick does to one tracked send, as a pure step: from the send and what the node says of
 * it now, the send's next record and whether it changed state or is due for a rebroadcast. The status
 * engine performs the step (store writes, notifications, the rebroadcast itself).
 */
import type { TrackedSend } from "./transaction-store.ts";
import { isAdvance, isTerminalState, observeStatus } from "./transaction-status.ts";
import type { SignatureStatusView, StatusRecord } from "./transaction-status.ts";

// Settled sends are kept a while for status queries; their bytes are no longer needed.
const NO_BYTES = new Uint8Array(0);

/** A record as clients see it (a tracked send minus its bookkeeping). */
export function publicRecord(send: TrackedSend | StatusRecord): StatusRecord {
  return {
    signature: send.signature,
    state: send.state,
    updatedAt: send.updatedAt,
    ...(send.slot === undefined ? {} : { slot: send.slot }),
    ...(send.error === undefined ? {} : { error: send.error }),
    ...(send.fee === undefined ? {} : { fee: send.fee }),
    ...(send.lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight: send.lastValidBlockHeight }),
  };
}

/** What the tick knows besides the send's own status. */
export interface StepContext {
  /** A block height read before the status (undefined when none was read yet). */
  readonly heightBefore: bigint | undefined;
  /** Whether the node said, before the status was read, that the send's blockhash is no longer valid. */
  readonly blockhashLapsed: boolean;
  readonly now: number;
  readonly rebroadcastIntervalMs: number;
}

/** The outcome of a step. */
export type TrackedStep =
  /** A new state (clients are told); `next.fee` is still to be filled when the state is in a block. */
  | { readonly kind: "transition"; readonly next: TrackedSend }
  /** Bookkeeping only (landed, slot): stored, nobody told. */
  | { readonly kind: "update"; readonly next: TrackedSend }
  /** Still unseen and due: resend the bytes and store `next`. */
  | { readonly kind: "rebroadcast"; readonly next: TrackedSend }
  | { readonly kind: "none" };

/**
 * One step. Success and failure are taken at confirmed commitment or better; expiry only when the
 * send is unseen by a status read that came after a height past its last valid one (or, when that height
 * was never learnt, after the node said its blockhash lapsed), so a send that landed in its last valid
 * block is never called expired, nor one whose told last valid height the chain has not passed.
 */
export function stepTrackedSend(send: TrackedSend, status: SignatureStatusView | null, ctx: StepContext): TrackedStep {
  const updatedAt = new Date(ctx.now);
  if (status !== null) {
    const observed = observeStatus(status);
    if (isAdvance(send.state, observed.state)) {
      return {
        kind: "transition",
        next: {
          ...send,
          ...(isTerminalState(observed.state) ? { wire: NO_BYTES } : {}),
          state: observed.state,
          slot: observed.slot,
          landed: true,
          updatedAt,
          ...(observed.error === undefined ? {} : { error: observed.error }),
        },
      };
    }
    if (!send.landed || send.slot !== observed.slot)
      return { kind: "update", next: { ...send, landed: true, slot: observed.slot } };
    return { kind: "none" };
  }
  // Landed for good: the node's short status cache may simply have moved on.
  if (send.state !== "submitted") return { kind: "none" };
  // Expired only once the chain is past the last valid height the client was told, even where that is an
  // upper bound and the node already calls the blockhash dead: a client that saw `expired` while the chain
  // stood at or below that height would rightly take it for a lie. Only a send whose height was never learnt
  // takes the node's word alone.
  const past =
    ctx.heightBefore !== undefined &&
    send.lastValidBlockHeight !== undefined &&
    ctx.heightBefore > send.lastValidBlockHeight;
  if (past || (ctx.blockhashLapsed && send.lastValidBlockHeight === undefined))
    return { kind: "transition", next: { ...send, wire: NO_BYTES, state: "expired", landed: false, updatedAt } };
  // Lapsed but not yet past its bound: nothing can land it any more, so it is not sent again (and the node is
  // asked again a period later, not on every tick).
  if (ctx.blockhashLapsed) return { kind: "update", next: { ...send, landed: false, lastBroadcastAt: ctx.now } };
  if (ctx.now - send.lastBroadcastAt < ctx.rebroadcastIntervalMs) {
    // Seen before but not now: its block was dropped on a fork.
    return send.landed ? { kind: "update", next: { ...send, landed: false } } : { kind: "none" };
  }
  return {
    kind: "rebroadcast",
    next: { ...send, landed: false, lastBroadcastAt: ctx.now, broadcasts: send.broadcasts + 1 },
  };
}
