/**
 * A bundle's record and the rules that order its states, shared by the bundles core (bundles.ts) and the
 * stores that keep what was sent (bundle-store.ts, redis-bundle-store.ts).
 */
import type { InflightBundleStatus } from "../upstream/block-engine.ts";
import type { StatusRecord } from "./transaction-status.ts";

/**
 * Where a bundle stands. `pending`, `landed` (Jito's Landed, not yet confirmed), `confirmed` and `finalized`
 * (every member at that commitment); `failed` (the engine's Failed, or a member failed on the chain),
 * `invalid` (the engine does not hold it) and `expired` (a blockhash lapsed before it landed) mean it will
 * never land. Final: finalized, failed, invalid, expired.
 */
export type BundleState = "pending" | "landed" | "confirmed" | "finalized" | "failed" | "invalid" | "expired";

/** The states after which nothing changes. */
export const FINAL_BUNDLE_STATES: ReadonlySet<BundleState> = new Set(["finalized", "failed", "invalid", "expired"]);

/** The state of one bundle. */
export interface BundleRecord {
  readonly bundleId: string;
  readonly state: BundleState;
  /** The block engine's word, when it was asked. */
  readonly engineStatus?: InflightBundleStatus["status"];
  /** Why it will never land (failed, invalid, expired). */
  readonly reason?: string;
  /** The slot of the block that holds it. */
  readonly slot?: bigint;
  /** The members' first signatures in order (empty for a bundle not sent through Solgate). */
  readonly signatures: readonly string[];
  /** The members' own records, once the bundle is in a block. */
  readonly transactions: readonly StatusRecord[];
  /** The least last valid block height of its blockhashes, when known. */
  readonly lastValidBlockHeight?: bigint;
  readonly updatedAt: Date;
}

/** Whether a bundle in this state will never change again. */
export function isFinalBundleState(state: BundleState): boolean {
  return FINAL_BUNDLE_STATES.has(state);
}

/** A state's place along the way (pending 0, landed 1, confirmed 2, final 3), so that an answer never goes back. */
export function bundleRank(state: BundleState): number {
  return isFinalBundleState(state) ? 3 : state === "confirmed" ? 2 : state === "landed" ? 1 : 0;
}

/** Whether the record puts the bundle in a block (a resend of it then changes nothing). */
export function isInBlock(record: BundleRecord): boolean {
  return record.slot !== undefined && record.state !== "invalid" && record.state !== "expired";
}

/** What a watcher would see change in a record (not its read time). */
export function bundleRecordKey(record: BundleRecord): string {
  return JSON.stringify([
    record.state,
    record.engineStatus,
    record.reason,
    String(record.slot),
    record.transactions.map((t) => [t.state, String(t.slot)]),
  ]);
}
