/**
 * Where ladders live: in memory for one process, or in Redis for a fleet (redis-ladder-store.ts), where any replica
 * answers for any ladder and the lease holder climbs them all, so that a climb outlives the replica that took it.
 */
import { SOLE_LEASE } from "../../store/lease.ts";
import type { Lease } from "../../store/lease.ts";
import { isFinalLadder } from "./ladder-record.ts";
import type { Ladder } from "./ladder-record.ts";

/** Storage of ladders. */
export interface LadderStore {
  get(id: string): Promise<Ladder | undefined>;
  /** Adds a ladder unless one with its id exists; returns the existing one then. */
  insert(ladder: Ladder): Promise<Ladder | undefined>;
  put(ladder: Ladder): Promise<void>;
  /** Forgets a ladder that never started (its first submission failed). */
  delete(id: string): Promise<void>;
  /** Every ladder not final. */
  open(): Promise<Ladder[]>;
  /** Tells listeners about a ladder's new record. */
  publish(ladder: Ladder): void;
  onPublished(listener: (ladder: Ladder) => void): () => void;
  /** The lease of the climbing: its holder ticks every open ladder of the fleet. */
  readonly lease: Lease;
}

/** Options of {@link createMemoryLadderStore}. */
export interface MemoryLadderStoreOptions {
  /** Most ladders held, final ones dropped first (default 10,000). */
  maxEntries?: number;
  /** How long a final ladder is kept (default 10 minutes). */
  finalTtlMs?: number;
  now?: () => number;
}

/** A store in this process. */
export function createMemoryLadderStore(options: MemoryLadderStoreOptions = {}): LadderStore {
  const maxEntries = options.maxEntries ?? 10_000;
  const ttl = options.finalTtlMs ?? 600_000;
  const now = options.now ?? Date.now;
  const ladders = new Map<string, Ladder>();
  const listeners = new Set<(ladder: Ladder) => void>();

  function sweep(): void {
    const t = now();
    for (const [id, ladder] of ladders) {
      if (isFinalLadder(ladder) && t - ladder.updatedAt.getTime() > ttl) ladders.delete(id);
    }
    if (ladders.size < maxEntries) return;
    for (const [id, ladder] of ladders) {
      if (ladders.size < maxEntries) break;
      if (isFinalLadder(ladder)) ladders.delete(id);
    }
  }

  return {
    async get(id) {
      return ladders.get(id);
    },
    async insert(ladder) {
      const existing = ladders.get(ladder.id);
      if (existing !== undefined) return existing;
      sweep();
      ladders.set(ladder.id, ladder);
      return undefined;
    },
    async put(ladder) {
      ladders.set(ladder.id, ladder);
    },
    async delete(id) {
      ladders.delete(id);
    },
    async open() {
      return [...ladders.values()].filter((ladder) => !isFinalLadder(ladder));
    },
    publish(ladder) {
      for (const listener of listeners) listener(ladder);
    },
    onPublished(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    lease: SOLE_LEASE,
  };
}
