/**
 * The fallback market: `getRecentPrioritizationFees`, which a node answers from its own cache when
 * blocks cannot be read. Each of its ~150 entries is the lowest price that landed in one slot (for the
 * given accounts), so its percentiles describe a floor rather than the bids; the response says so
 * through its source.
 */
import type { Address, GetRecentPrioritizationFeesApi, Rpc } from "@solana/kit";
import { levelsOf } from "./percentile.ts";
import type { FeeLevels } from "./percentile.ts";

/** The most accounts a node accepts in one `getRecentPrioritizationFees` call. */
export const MAX_PRIORITIZATION_FEE_ACCOUNTS = 128;

/** Levels over the per-slot minimums a node reported. */
export interface RecentFeeLevels {
  readonly levels: FeeLevels;
  /** How many slots the node reported. */
  readonly sampleSize: number;
  /** The newest of them. */
  readonly newestSlot: bigint;
}

/** Percentile levels of a `getRecentPrioritizationFees` result; undefined when it is empty. */
export function levelsOfRecentFees(
  entries: readonly { readonly slot: bigint; readonly prioritizationFee: bigint }[],
): RecentFeeLevels | undefined {
  if (entries.length === 0) return undefined;
  let newestSlot = 0n;
  for (const e of entries) if (e.slot > newestSlot) newestSlot = e.slot;
  return { levels: levelsOf(entries.map((e) => e.prioritizationFee))!, sampleSize: entries.length, newestSlot };
}

/**
 * Asks the node for its recent per-slot minimum prices, for the chain (no accounts) or for slots in which
 * all of `accounts` (at most 128; extra ones are ignored) were write-locked.
 */
export async function fetchRecentFeeLevels(
  rpc: Rpc<GetRecentPrioritizationFeesApi>,
  accounts: readonly string[] = [],
  abortSignal?: AbortSignal,
): Promise<RecentFeeLevels | undefined> {
  const request =
    accounts.length === 0
      ? rpc.getRecentPrioritizationFees()
      : rpc.getRecentPrioritizationFees(accounts.slice(0, MAX_PRIORITIZATION_FEE_ACCOUNTS) as Address[]);
  const entries = await request.send({ abortSignal });
  return levelsOfRecentFees(entries);
}
