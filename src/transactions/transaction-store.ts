/**
 * Where tracked sends live. The status engine reads and writes them only through
 * {@link TransactionStore}, so that a shared store (Redis, for replicas) can replace the default
 * in-memory one, which is bounded: a cap on entries and a time to live once a send is settled for good.
 */
import { SolgateError } from "../errors.ts";
import { isTerminalState } from "./transaction-status.ts";
import type { StatusRecord } from "./transaction-status.ts";

/** A send Solgate tracks: its status record plus what rebroadcasting and expiry need. */
export interface TrackedSend extends StatusRecord {
  /** The signed wire bytes, resent as they are. */
  readonly wire: Uint8Array;
  /** The blockhash the transaction names. */
  readonly blockhash: string;
  /**
   * The last block height at which the blockhash is valid (an upper bound when `expiryExact` is false);
   * undefined until the node says (it is learnt alongside the first submission), or if it never did.
   */
  readonly lastValidBlockHeight?: bigint;
  /** Whether `lastValidBlockHeight` is exact; if not, expiry is confirmed with `isBlockhashValid`. */
  readonly expiryExact: boolean;
  /** The commitment at which the blockhash was found valid; sends and simulations use it too. */
  readonly commitment: "processed" | "confirmed";
  /** The fee the chain will charge, computed from the message; undefined when only the node can say. */
  readonly expectedFee?: bigint;
  /** Whether it was seen in a block at any commitment (it is not rebroadcast then). */
  readonly landed: boolean;
  /** When it was last sent to the upstream (epoch ms). */
  readonly lastBroadcastAt: number;
  /** How many times it was sent. */
  readonly broadcasts: number;
}

/** Storage of tracked sends. Implementations may be shared between processes, hence promises. */
export interface TransactionStore {
  /** The send with this first signature, if tracked (settled ones stay for a while). */
  get(signature: string): Promise<TrackedSend | undefined>;
  /**
   * Inserts or replaces a send.
   * @throws SolgateError RATE_LIMITED when the store is full of sends still in flight.
   */
  put(send: TrackedSend): Promise<void>;
  /** Forgets a send (one whose first submission failed, so that the client may simply retry). */
  delete(signature: string): Promise<void>;
  /** Every send not yet in a terminal state (finalized, failed, expired). */
  active(): Promise<TrackedSend[]>;
}

/** Options of {@link createMemoryTransactionStore}. */
export interface MemoryTransactionStoreOptions {
  /** The most sends held at once, settled ones included (default 100,000). */
  maxEntries?: number;
  /** How long a send is kept after reaching a terminal state (default 10 minutes). */
  terminalTtlMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

/**
 * The default store: a map in this process. Settled sends leave after their TTL or, when the cap is
 * reached, oldest first; sends in flight are never dropped, so a full store refuses new ones instead.
 */
export function createMemoryTransactionStore(options: MemoryTransactionStoreOptions = {}): TransactionStore & {
  /** How many sends are held. */
  size(): number;
} {
  const maxEntries = options.maxEntries ?? 100_000;
  const ttlMs = options.terminalTtlMs ?? 10 * 60_000;
  const now = options.now ?? Date.now;
  const all = new Map<string, TrackedSend>();
  const inFlight = new Map<string, TrackedSend>();
  // Settled signatures with their eviction time; the TTL is constant, so insertion order is expiry order.
  const settled = new Map<string, number>();

  function sweep(force: boolean): void {
    const t = now();
    for (const [signature, expiresAt] of settled) {
      if (expiresAt > t && !force) break;
      settled.delete(signature);
      all.delete(signature);
      if (force) return;
    }
  }

  return {
    async get(signature) {
      const send = all.get(signature);
      if (send !== undefined && settled.has(signature) && (settled.get(signature) ?? 0) <= now()) {
        sweep(false);
        return undefined;
      }
      return send;
    },
    async put(send) {
      sweep(false);
      if (!all.has(send.signature) && all.size >= maxEntries) {
        if (settled.size === 0) {
          throw new SolgateError("RATE_LIMITED", "too many transactions in flight; retry shortly", {
            maxTracked: maxEntries,
          }, { retryAfterMs: 2000 });
        }
        sweep(true);
      }
      all.set(send.signature, send);
      if (isTerminalState(send.state)) {
        inFlight.delete(send.signature);
        if (!settled.has(send.signature)) settled.set(send.signature, now() + ttlMs);
      } else {
        inFlight.set(send.signature, send);
      }
    },
    async delete(signature) {
      all.delete(signature);
      inFlight.delete(signature);
      settled.delete(signature);
    },
    async active() {
      return [...inFlight.values()];
    },
    size: () => all.size,
  };
}
