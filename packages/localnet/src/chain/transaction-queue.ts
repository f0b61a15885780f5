/**
 * Transactions waiting for the next slot: bounded, de-duplicated by first signature, and never letting
 * an unverified copy (same first signature, other bytes) keep a verified one out.
 */
import type { DecodedTransaction } from "../wire/decode-transaction.ts";

/** A transaction as queued: `verified` when its signatures were checked on these exact bytes. */
export interface QueuedTransaction {
  readonly tx: DecodedTransaction;
  readonly verified: boolean;
}

/** The queue of the next slots' transactions. */
export interface TransactionQueue {
  /** Queues `tx` (a known signature, a duplicate or an overflow is silently ignored). */
  submit(tx: DecodedTransaction, verified: boolean): void;
  /** Removes and returns the next `max` transactions, in arrival order; each stays pending until {@link settle}d. */
  take(max: number): QueuedTransaction[];
  /** Marks a taken transaction's signature as no longer waiting. */
  settle(signature: string): void;
  /** Is this signature waiting for the next slot? */
  isPending(signature: string): boolean;
  readonly length: number;
}

/** Creates the queue; `isKnown` says whether a signature is already in the history (then it is not queued). */
export function createTransactionQueue(options: {
  maxQueue: number;
  isKnown: (signature: string) => boolean;
}): TransactionQueue {
  const queue: QueuedTransaction[] = [];
  /** Signature -> whether a queued copy has verified signatures. */
  const pending = new Map<string, boolean>();
  return {
    submit(tx, verified) {
      const signature = tx.signatureStrings[0]!;
      if (options.isKnown(signature) || queue.length >= options.maxQueue) return;
      // A queued copy shadows a duplicate, unless it is unverified and this one is verified: a
      // forged copy (same first signature, other bytes) must not keep the genuine one out.
      const queued = pending.get(signature);
      if (queued === true || (queued === false && !verified)) return;
      pending.set(signature, verified);
      queue.push({ tx, verified });
    },
    take: (max) => queue.splice(0, max),
    settle: (signature) => void pending.delete(signature),
    isPending: (signature) => pending.has(signature),
    get length() {
      return queue.length;
    },
  };
}
