/**
 * Every signature the chain has executed, with its slot and error: de-duplication and
 * `getSignatureStatuses` read it.
 *
 * LiteSVM keeps 32 entries (an older duplicate would run again), so the chain keeps its own:
 * nothing is forgotten while it is younger than `protectSlots` (a duplicate could still be valid
 * then), and beyond that at most `limit` entries are kept, oldest first out.
 */
import type { TransactionErrorJson } from "../wire/transaction-error.ts";

/** What is remembered about one executed transaction. */
export interface SignatureEntry {
  slot: bigint;
  /** Position in its block. */
  index: number;
  err: TransactionErrorJson | null;
}

/** Signature history with bounded memory. */
export interface SignatureHistory {
  get(signature: string): SignatureEntry | undefined;
  has(signature: string): boolean;
  add(signature: string, entry: SignatureEntry): void;
  /** Drops the oldest entries beyond `limit` that are older than `currentSlot - protectSlots`. */
  prune(currentSlot: bigint): void;
  readonly size: number;
}

/** Creates an empty history. */
export function createSignatureHistory(options: { limit: number; protectSlots: bigint }): SignatureHistory {
  const entries = new Map<string, SignatureEntry>();
  return {
    get: (signature) => entries.get(signature),
    has: (signature) => entries.has(signature),
    add(signature, entry) {
      entries.set(signature, entry);
    },
    prune(currentSlot) {
      let excess = entries.size - options.limit;
      if (excess <= 0) return;
      for (const [signature, entry] of entries) {
        if (excess <= 0 || entry.slot + options.protectSlots >= currentSlot) break;
        entries.delete(signature);
        excess--;
      }
    },
    get size() {
      return entries.size;
    },
  };
}
