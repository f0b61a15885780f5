/**
 * Where tracked sends live. The status engine is the only code that reads and writes them, and only
 * through {@link TransactionStore}: the in-memory store below for one process, or the Redis store
 * (redis-transaction-store.ts) that a fleet of replicas shares. Both are bounded: a cap on sends and a
 * time to live once a send is settled for good.
 */
import { SolgateError } from "../errors.ts";
import { SOLE_LEASE } from "../store/lease.ts";
import type { Lease } from "../store/lease.ts";
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
   * Adds a send unless one with its signature is tracked already (by any replica).
   * @returns undefined when added; the send tracked already otherwise.
   * @throws SolgateError RATE_LIMITED when the store is full of sends still in flight.
   */
  insert(send: TrackedSend): Promise<TrackedSend | undefined>;
  /** Replaces a send's record; a record never moves back along the states (a stale write is dropped). */
  put(send: TrackedSend): Promise<void>;
  /**
   * Forgets a send whose first submission failed, so that the client may simply retry it, unless another caller
   * (another replica) has found it by {@link insert} meanwhile: that one has told its client `submitted`, so the
   * send stays and is rebroadcast. Atomic with `insert`.
   * @returns whether it was forgotten.
   */
  delete(signature: string): Promise<boolean>;
  /** Every send not yet in a terminal state (finalized, failed, expired). */
  active(): Promise<TrackedSend[]>;
  /** Tells every replica's listeners (this one's included, at once) about a send's new record. */
  publish(record: StatusRecord): Promise<void>;
  /** Listens to published records; returns the function that stops listening. */
  onPublished(listener: (record: StatusRecord) => void): () => void;
  /** The lease of the fleet-wide work (status polling, rebroadcasts): one holder at a time. */
  readonly lease: Lease;
}

/** A state's place along the way, so that a late write cannot move a record back. */
export function stateRank(state: TrackedSend["state"]): number {
  return state === "submitted" ? 0 : state === "confirmed" ? 1 : 2;
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
  const listeners = new Set<(record: StatusRecord) => void>();
  const inFlight = new Map<string, TrackedSend>();
  // Settled signatures with their eviction time; the TTL is constant, so insertion order is expiry order.
  const settled = new Map<string, number>();
  // Sends that a second insert found: answered for, so never forgotten by `delete`.
  const joined = new Set<string>();

  function sweep(force: boolean): void {
    const t = now();
    for (const [signature, expiresAt] of settled) {
      if (expiresAt > t && !force) break;
      settled.delete(signature);
      all.delete(signature);
      joined.delete(signature);
      if (force) return;
    }
  }

  const store: TransactionStore & { size(): number } = {
    async get(signature) {
      const send = all.get(signature);
      if (send !== undefined && settled.has(signature) && (settled.get(signature) ?? 0) <= now()) {
        sweep(false);
        return undefined;
      }
      return send;
    },
    async insert(send) {
      const existing = await store.get(send.signature);
      if (existing !== undefined) {
        joined.add(send.signature);
        return existing;
      }
      await store.put(send);
      return undefined;
    },
    async put(send) {
      const current = all.get(send.signature);
      if (current !== undefined && stateRank(send.state) < stateRank(current.state)) return;
      sweep(false);
      if (!all.has(send.signature) && all.size >= maxEntries) {
        if (settled.size === 0) {
          throw new SolgateError(
            "RATE_LIMITED",
            "too many transactions in flight; retry shortly",
            {
              maxTracked: maxEntries,
            },
            { retryAfterMs: 2000 },
          );
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
      if (joined.has(signature)) return false;
      all.delete(signature);
      inFlight.delete(signature);
      settled.delete(signature);
      return true;
    },
    async active() {
      return [...inFlight.values()];
    },
    async publish(record) {
      for (const listener of listeners) listener(record);
    },
    onPublished(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    lease: SOLE_LEASE,
    size: () => all.size,
  };
  return store;
}
