/**
 * One-off status lookups (GetTransactionStatus, the first record of a watch on a signature Solgate
 * did not send) gathered over a few milliseconds into `getSignatureStatuses` calls of up to 256
 * signatures with history search, so that a burst of lookups costs a handful of upstream calls.
 */
import type { GetSignatureStatusesApi, Rpc, Signature } from "@solana/kit";
import type { SignatureStatusView } from "./transaction-status.ts";

/** The most signatures `getSignatureStatuses` takes per call. */
export const MAX_SIGNATURES_PER_CALL = 256;

/** Options of {@link createStatusBatcher}. */
export interface StatusBatcherOptions {
  rpc: Rpc<GetSignatureStatusesApi>;
  /** How long to gather lookups before calling (default 5 ms). */
  windowMs?: number;
}

/** Looks statuses up in batches. */
export interface StatusBatcher {
  /** The node's status of `signature`, searching its whole history; null when it knows none. */
  lookup(signature: string): Promise<SignatureStatusView | null>;
}

interface Pending {
  resolve(status: SignatureStatusView | null): void;
  reject(error: unknown): void;
}

/** Reads statuses for many signatures, `MAX_SIGNATURES_PER_CALL` per call, all calls in parallel. */
export async function fetchStatuses(
  rpc: Rpc<GetSignatureStatusesApi>,
  signatures: readonly string[],
  searchTransactionHistory: boolean,
): Promise<{ statuses: Map<string, SignatureStatusView | null>; slot: bigint }> {
  const chunks: string[][] = [];
  for (let i = 0; i < signatures.length; i += MAX_SIGNATURES_PER_CALL) {
    chunks.push(signatures.slice(i, i + MAX_SIGNATURES_PER_CALL));
  }
  const results = await Promise.all(
    chunks.map((chunk) => rpc.getSignatureStatuses(chunk as Signature[], { searchTransactionHistory }).send()),
  );
  const statuses = new Map<string, SignatureStatusView | null>();
  let slot = 0n;
  results.forEach((result, c) => {
    if (result.context.slot > slot) slot = result.context.slot;
    chunks[c].forEach((signature, i) => statuses.set(signature, result.value[i] ?? null));
  });
  return { statuses, slot };
}

/** Creates a batcher. */
export function createStatusBatcher(options: StatusBatcherOptions): StatusBatcher {
  const windowMs = options.windowMs ?? 5;
  let queue = new Map<string, Pending[]>();
  let timer: NodeJS.Timeout | undefined;

  async function flush(): Promise<void> {
    timer = undefined;
    const batch = queue;
    queue = new Map();
    const signatures = [...batch.keys()];
    try {
      const { statuses } = await fetchStatuses(options.rpc, signatures, true);
      for (const [signature, waiters] of batch) {
        for (const waiter of waiters) waiter.resolve(statuses.get(signature) ?? null);
      }
    } catch (error) {
      for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
    }
  }

  return {
    lookup(signature) {
      return new Promise((resolve, reject) => {
        const waiters = queue.get(signature);
        if (waiters) waiters.push({ resolve, reject });
        else queue.set(signature, [{ resolve, reject }]);
        if (queue.size >= MAX_SIGNATURES_PER_CALL) {
          if (timer) clearTimeout(timer);
          void flush();
        } else if (timer === undefined) {
          timer = setTimeout(() => void flush(), windowMs);
        }
      });
    },
  };
}
