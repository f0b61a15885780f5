/**
 * Catches a node that lags or lies, one URL at a time: the slots it reports must not go back by more
 * than a few, a signature status must not be for a slot past the one the answer was read at, and a
 * blockhash must not be valid past what the node's own slot allows. An answer that breaks one of these
 * is never handed on: the attempt fails as `node_lagging`, which counts against the URL's breaker and
 * fails over to the next URL.
 *
 * Slots are compared per commitment (a finalized read trails a confirmed one by some 32 slots by design).
 */

/** How far a node's slot may go back before it counts as lagging: load-balanced nodes jitter a little. */
export const SLOT_REGRESSION_TOLERANCE = 8n;
/**
 * How long a lower slot keeps being refused before it is taken as the node's new truth (a restarted or
 * rebuilt node, a localnet started anew): past this, refusing it would only keep a recovered URL out.
 */
export const REGRESSION_MEMORY_MS = 60_000;
/**
 * A blockhash is valid for 150 blocks after the block height it was made at, and block height never
 * exceeds the slot: `lastValidBlockHeight` past the answer's slot plus this is a blockhash from the future.
 */
const BLOCKHASH_HORIZON = 300n;

/** Why an answer was refused. */
export interface Lie {
  /** `slot_went_back`, `status_from_the_future` or `blockhash_from_the_future`. */
  readonly kind: "slot_went_back" | "status_from_the_future" | "blockhash_from_the_future";
  /** Where in the answer (a dot path), for logs. */
  readonly path: string;
}

/** The watch of one URL. */
export interface SlotWatch {
  /**
   * Checks an answer (`result` already fits its schema) and, when it holds up, records its slot.
   * Returns why it does not, or undefined.
   */
  check(method: string, payload: unknown, result: unknown): Lie | undefined;
}

/** Creates the watch of one URL. */
export function createSlotWatch(now: () => number = Date.now): SlotWatch {
  // Per commitment: the highest slot seen, and when it was last reached or passed.
  const marks = new Map<string, { slot: bigint; at: number }>();

  /** Whether `slot` (at `commitment`) is behind the mark; records it when not. */
  function wentBack(commitment: string, slot: bigint): boolean {
    const mark = marks.get(commitment);
    const t = now();
    if (mark === undefined || slot >= mark.slot) {
      marks.set(commitment, { slot, at: t });
      return false;
    }
    if (mark.slot - slot <= SLOT_REGRESSION_TOLERANCE) return false;
    if (t - mark.at > REGRESSION_MEMORY_MS) {
      marks.set(commitment, { slot, at: t });
      return false;
    }
    return true;
  }

  return {
    check(method, payload, result) {
      const commitment = commitmentOf(payload);
      if (method === "getSlot") {
        return wentBack(commitment, result as bigint) ? { kind: "slot_went_back", path: "result" } : undefined;
      }
      const withContext = result as { context?: { slot?: unknown }; value?: unknown } | null;
      const slot = withContext?.context?.slot;
      if (typeof slot !== "bigint") return undefined;
      if (method === "getSignatureStatuses") {
        const statuses = withContext!.value as ({ slot: bigint } | null)[];
        for (let i = 0; i < statuses.length; i++) {
          const status = statuses[i];
          if (status !== null && status.slot > slot + SLOT_REGRESSION_TOLERANCE)
            return { kind: "status_from_the_future", path: `result.value.${i}.slot` };
        }
      }
      if (method === "getLatestBlockhash") {
        const { lastValidBlockHeight } = withContext!.value as { lastValidBlockHeight: bigint };
        if (lastValidBlockHeight > slot + BLOCKHASH_HORIZON)
          return { kind: "blockhash_from_the_future", path: "result.value.lastValidBlockHeight" };
      }
      return wentBack(commitment, slot) ? { kind: "slot_went_back", path: "result.context.slot" } : undefined;
    },
  };
}

/** The commitment a read was made at: the config object's, or the node's default (finalized). */
function commitmentOf(payload: unknown): string {
  const params = (payload as { params?: unknown } | null)?.params;
  if (Array.isArray(params)) {
    for (const param of params) {
      const c = (param as { commitment?: unknown } | null)?.commitment;
      if (typeof c === "string") return c;
    }
  }
  return "finalized";
}
