/**
 * The leader's transaction buffer, as agave 3.0's scheduler keeps it (`receive_and_buffer.rs`,
 * `transaction_state_container.rs`): every received transaction is priced on arrival (its cost and its
 * priority, cost-model.ts) and held in priority order, highest first, ties by arrival. Each block walks
 * it in that order: what fits is executed, what does not fit waits for the next block, what expired or
 * is already known is dropped. The buffer is bounded: when full, the lowest priority is dropped (the
 * newcomer itself when it is the lowest). De-duplicated by first signature, never letting an unverified
 * copy (same first signature, other bytes) keep a verified one out.
 */
import type { DecodedTransaction } from "../wire/decode-transaction.ts";

/** What the buffer needs to know of a transaction to order and pack it. */
export interface TransactionPricing {
  /** agave's cost (cost-model.ts `transactionCost(...).total`). */
  cost: bigint;
  /** reward x 1e6 / (cost + 1). */
  priority: bigint;
  /** The accounts it write-locks (lookup-table writes resolved on arrival). */
  writable: readonly string[];
  /** Bytes of account data it may allocate (cost-model.ts `allocatedAccountsDataSize`). */
  allocated: bigint;
}

/** A transaction as buffered: `verified` when its signatures were checked on these exact bytes. */
export interface QueuedTransaction extends TransactionPricing {
  readonly tx: DecodedTransaction;
  readonly verified: boolean;
  /** Arrival order (ties of priority go to the earlier). */
  readonly seq: number;
}

/** What a block did with one buffered transaction. */
export type Disposition = "taken" | "waiting" | "dropped";

/** Counters since start (localnet_status). */
export interface BufferStats {
  /** Dropped because the buffer was full (lowest priority). */
  evicted: number;
}

/** The buffer of transactions waiting for a block. */
export interface TransactionQueue {
  /** Buffers `tx` (a known signature or a duplicate is silently ignored; when full the lowest priority goes). */
  submit(tx: DecodedTransaction, verified: boolean): void;
  /**
   * Walks the buffer in priority order (highest first, ties by arrival); `visit` says what became of each:
   * taken (executed) and dropped leave the buffer, waiting stays for the next block.
   */
  schedule(visit: (entry: QueuedTransaction) => Disposition): void;
  /** Is this signature waiting in the buffer? */
  isPending(signature: string): boolean;
  readonly length: number;
  readonly stats: BufferStats;
}

/** Higher priority first; equal priorities by arrival. */
function before(a: QueuedTransaction, b: QueuedTransaction): boolean {
  return a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq);
}

/**
 * Creates the buffer. `isKnown` says whether a signature is already in the history (then it is not
 * buffered); `price` gives a transaction's cost and priority.
 */
export function createTransactionQueue(options: {
  maxQueue: number;
  isKnown: (signature: string) => boolean;
  price: (tx: DecodedTransaction) => TransactionPricing;
}): TransactionQueue {
  /** Kept sorted with {@link before}. */
  let buffer: QueuedTransaction[] = [];
  /** Signature -> buffered copies, and whether one of them has verified signatures. */
  const pending = new Map<string, { copies: number; verified: boolean }>();
  const stats: BufferStats = { evicted: 0 };
  let seq = 0;

  const release = (entry: QueuedTransaction) => {
    const signature = entry.tx.signatureStrings[0]!;
    const state = pending.get(signature);
    if (state === undefined) return;
    if (--state.copies <= 0) pending.delete(signature);
  };

  /** The index at which `entry` keeps the buffer sorted (after every entry that goes before it). */
  const insertionPoint = (entry: QueuedTransaction): number => {
    let lo = 0;
    let hi = buffer.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(buffer[mid]!, entry)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };

  return {
    submit(tx, verified) {
      const signature = tx.signatureStrings[0]!;
      if (options.isKnown(signature)) return;
      // A buffered copy shadows a duplicate, unless it is unverified and this one is verified: a
      // forged copy (same first signature, other bytes) must not keep the genuine one out.
      const state = pending.get(signature);
      if (state !== undefined && (state.verified || !verified)) return;
      const entry: QueuedTransaction = { tx, verified, seq: seq++, ...options.price(tx) };
      const at = insertionPoint(entry);
      if (buffer.length >= options.maxQueue) {
        stats.evicted++;
        // Full: the lowest priority goes; when that is the newcomer, it is never buffered.
        if (at >= buffer.length) return;
        release(buffer.pop()!);
      }
      buffer.splice(at, 0, entry);
      const now = pending.get(signature);
      if (now === undefined) pending.set(signature, { copies: 1, verified });
      else {
        now.copies++;
        now.verified ||= verified;
      }
    },
    schedule(visit) {
      const kept: QueuedTransaction[] = [];
      const walked = buffer;
      // Entries submitted while walking (a visitor never does, but stay safe) land in the new buffer.
      buffer = [];
      for (const entry of walked) {
        const disposition = visit(entry);
        if (disposition === "waiting") kept.push(entry);
        else release(entry);
      }
      const added = buffer;
      buffer = kept;
      for (const entry of added) buffer.splice(insertionPoint(entry), 0, entry);
    },
    isPending: (signature) => pending.has(signature),
    get length() {
      return buffer.length;
    },
    stats,
  };
}
