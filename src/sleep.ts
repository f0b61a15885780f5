/**
 * The one abortable sleep: node's `timers/promises` timer, which resolves at once when `signal` aborts instead of
 * rejecting. Loops that sleep between rounds check their own stop after it; a caller that must fail on an abort
 * calls `signal.throwIfAborted()` after it.
 */
import { setTimeout as timer } from "node:timers/promises";

/**
 * Resolves after `ms`, or as soon as `signal` aborts (at once if it already has). Never rejects. With `ref: false`
 * the timer does not hold the process open (background loops that nothing waits on).
 */
export async function sleep(ms: number, signal?: AbortSignal, options: { ref?: boolean } = {}): Promise<void> {
  if (signal?.aborted) return;
  await timer(ms, undefined, { ref: options.ref ?? true, ...(signal === undefined ? {} : { signal }) }).catch(() => {});
}
