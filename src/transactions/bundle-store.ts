/**
 * Where the bundles sent through Solgate are kept: in this process's memory (below), or in the fleet's Redis
 * (redis-bundle-store.ts), where every replica answers for a bundle any replica took. The bundles core
 * (bundles.ts) is the only code that reads and writes them.
 */
import { BoundedMap } from "../bounded-map.ts";
import { bundleRank, isFinalBundleState, isInBlock } from "./bundle-record.ts";
import type { BundleRecord } from "./bundle-record.ts";

/** A bundle sent through Solgate. */
export interface SentBundle {
  readonly bundleId: string;
  /** The members' first signatures, in order. */
  readonly signatures: readonly string[];
  readonly blockhashes: readonly string[];
  /** The least last valid block height of its blockhashes (exact or an upper bound). */
  readonly lastValidBlockHeight?: bigint;
  /** When it was recorded (epoch ms), just before it went to the block engine. */
  readonly sentAt: number;
  /** Whether the block engine said it took it (until then, the engine not holding it may just be early). */
  readonly accepted: boolean;
  /** The furthest record any replica answered for it (a final one is never replaced). */
  readonly record?: BundleRecord;
}

/** Storage of sent bundles. Implementations may be shared between processes, hence promises. */
export interface BundleStore {
  /**
   * The bundle, if recorded.
   * @throws SolgateError STORE_UNAVAILABLE when the store cannot be read (never "not recorded" then).
   */
  get(bundleId: string): Promise<SentBundle | undefined>;
  /**
   * Records a bundle about to go to the block engine (kept durably before it returns: replicated, on a store that
   * replicates). A resend replaces the record, unless the one held puts the bundle in a block.
   * @throws SolgateError STORE_UNAVAILABLE: not recorded, so the bundle must not be sent.
   */
  insert(bundle: SentBundle): Promise<void>;
  /** The block engine took it. */
  accept(bundleId: string): Promise<void>;
  /** Forgets a bundle the engine refused, so that the client may fix it and send again. */
  delete(bundleId: string): Promise<void>;
  /** Keeps `record` unless the one held is further along or final. */
  advance(bundleId: string, record: BundleRecord): Promise<void>;
}

/** Whether `next` may replace `held` (it is not behind it, and `held` is not final). */
export function mayAdvance(held: BundleRecord | undefined, next: BundleRecord): boolean {
  if (held === undefined) return true;
  return !isFinalBundleState(held.state) && bundleRank(next.state) >= bundleRank(held.state);
}

/** The default store: the last `maxEntries` bundles sent through this process (default 10,000), oldest forgotten first. */
export function createMemoryBundleStore(options: { maxEntries?: number } = {}): BundleStore {
  const maxEntries = options.maxEntries ?? 10_000;
  const sent = new BoundedMap<string, SentBundle>(maxEntries);
  return {
    async get(bundleId) {
      return sent.get(bundleId);
    },
    async insert(bundle) {
      const held = sent.get(bundle.bundleId);
      if (held?.record !== undefined && isInBlock(held.record)) return;
      sent.delete(bundle.bundleId);
      sent.set(bundle.bundleId, bundle);
    },
    async accept(bundleId) {
      const held = sent.get(bundleId);
      if (held !== undefined) sent.set(bundleId, { ...held, accepted: true });
    },
    async delete(bundleId) {
      sent.delete(bundleId);
    },
    async advance(bundleId, record) {
      const held = sent.get(bundleId);
      if (held !== undefined && mayAdvance(held.record, record)) sent.set(bundleId, { ...held, record });
    },
  };
}
