/**
 * The fee market's fallback source: while blocks cannot be read, the node's own
 * `getRecentPrioritizationFees`, polled in the background at most every `refreshMs`.
 */
import type { GetRecentPrioritizationFeesApi, Rpc } from "@solana/kit";
import { fetchRecentFeeLevels } from "./recent-fees.ts";
import type { RecentFeeLevels } from "./recent-fees.ts";

/** The node's recent levels, when they were fetched, and when their newest slot last moved. */
export type FallbackLevels = RecentFeeLevels & { readonly fetchedAt: number; readonly movedAt: number };

/** The fallback poller. */
export interface FeeFallback {
  /** The levels last fetched; undefined before the first success. */
  current(): FallbackLevels | undefined;
  /** Polls the node unless it was polled less than `refreshMs` ago; failures go to `onError`. */
  refreshIfDue(signal: AbortSignal): Promise<void>;
}

/** Creates the poller (it polls only when asked). */
export function createFeeFallback(options: {
  rpc: Rpc<GetRecentPrioritizationFeesApi>;
  refreshMs: number;
  now: () => number;
  onError: (error: unknown) => void;
}): FeeFallback {
  let last: FallbackLevels | undefined;
  return {
    current: () => last,
    async refreshIfDue(signal) {
      if (signal.aborted || (last !== undefined && options.now() - last.fetchedAt < options.refreshMs)) return;
      try {
        const recent = await fetchRecentFeeLevels(options.rpc, [], signal);
        const at = options.now();
        if (recent === undefined) return;
        const moved = last === undefined || recent.newestSlot !== last.newestSlot;
        last = { ...recent, fetchedAt: at, movedAt: moved || last === undefined ? at : last.movedAt };
      } catch (error) {
        if (!signal.aborted) options.onError(error);
      }
    },
  };
}
