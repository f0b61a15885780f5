/**
 * The two ways to wait on a signature, over the status engine's watcher registry: a watch stream
 * (the record at once, then each change until the end, heartbeats while idle) and a confirm-and-wait
 * send (one answer once the send is confirmed, failed or expired). Both let go of everything they
 * hold when their client goes away.
 */
import { SolgateError, isSolgateError } from "../errors.ts";
import { isAdvance, isSettledState, isTerminalState } from "./transaction-status.ts";
import type { StatusRecord } from "./transaction-status.ts";
import { createEventQueue } from "./watchers.ts";
import type { WatchEvent, Watcher, WatcherRegistry } from "./watchers.ts";
import { sleep } from "../sleep.ts";

/** What the waits need from the engine. */
export interface StatusWaitsDeps {
  registry: WatcherRegistry;
  /** Where a signature stands: tracked, watched or read from the chain; undefined when unknown. */
  record(signature: string): Promise<StatusRecord | undefined>;
  /** The tracked send's record, if Solgate tracks the signature. */
  tracked(signature: string): Promise<StatusRecord | undefined>;
  /** Adds a signature Solgate did not send to the polled set (SolgateError RATE_LIMITED when full). */
  follow(signature: string, record: StatusRecord): Promise<void>;
  /** The last watcher of a signature left. */
  unfollow(signature: string): void;
  /** A confirm-and-wait send started waiting on `signature`; the function returned is called when it stops. */
  onWaitStart(signature: string): () => void;
  now(): number;
  /**
   * How long a watch opened while the shared store cannot be read waits for it (default 10 s, less when the
   * client's deadline comes first) before it ends with STORE_UNAVAILABLE.
   */
  storeWaitMs?: number;
}

/** Watch streams and confirm-and-wait sends. */
export interface StatusWaits {
  /** @see StatusEngine.watch */
  watch(signature: string, signal?: AbortSignal): AsyncGenerator<WatchEvent, void, undefined>;
  /** @see StatusEngine.settle */
  settle(signature: string, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<StatusRecord>;
  /** How many confirm-and-wait sends are waiting. */
  waiting(): number;
  /** Ends every watch and answers every waiting send with its record as it stands (on shutdown). */
  closeAll(): void;
  /**
   * Fails every waiting confirm-and-wait send with `error` (the chain's upstream is down: its confirmation
   * cannot be read). Watch streams carry on: they end on their own terms, heartbeats included.
   */
  failWaiting(error: unknown): void;
}

function notFound(signature: string): SolgateError {
  return new SolgateError(
    "NOT_FOUND",
    `transaction ${signature} is not known to the chain and was not sent through Solgate`,
    { signature },
  );
}

/** Creates the waits. */
export function createStatusWaits(deps: StatusWaitsDeps): StatusWaits {
  const { registry, now } = deps;
  const closers = new Set<() => void>();
  const failers = new Set<(error: unknown) => void>();
  let waiting = 0;

  /**
   * The watch's first record. While the store cannot be read (a failover) and the chain does not know the
   * signature, it asks again until the store answers, the client goes away or `storeWaitMs` pass; then the
   * watch ends with STORE_UNAVAILABLE, never with NOT_FOUND.
   */
  async function firstRecord(signature: string, signal: AbortSignal | undefined): Promise<StatusRecord | undefined> {
    const deadline = now() + (deps.storeWaitMs ?? 10_000);
    for (;;) {
      try {
        return await deps.record(signature);
      } catch (error) {
        const retryable = isSolgateError(error) && error.reason === "STORE_UNAVAILABLE";
        if (!retryable || signal?.aborted || now() >= deadline) throw error;
        await sleep(Math.min(250, Math.max(1, deadline - now())), signal);
        if (signal?.aborted) throw error;
      }
    }
  }

  async function* watch(signature: string, signal?: AbortSignal): AsyncGenerator<WatchEvent, void, undefined> {
    const queue = createEventQueue<WatchEvent>();
    const watcher: Watcher = {
      onRecord: (r) => queue.push({ kind: "record", record: r }),
      onHeartbeat: (slot) => {
        // A client that reads slowly gets one heartbeat, not a backlog of them.
        if (queue.isEmpty()) queue.push({ kind: "heartbeat", slot });
      },
      lastEventAt: now(),
    };
    const close = () => queue.close();
    // Registered before the first read, so that no change can slip between the two.
    registry.add(signature, watcher);
    closers.add(close);
    signal?.addEventListener("abort", close, { once: true });
    try {
      if (signal?.aborted) return;
      let last = await firstRecord(signature, signal);
      if (last === undefined) throw notFound(signature);
      await deps.follow(signature, last);
      yield { kind: "record", record: last };
      if (isTerminalState(last.state)) return;
      for (;;) {
        const { value, done } = await queue.next();
        if (done) return;
        if (value.kind === "record") {
          if (!isAdvance(last.state, value.record.state)) continue;
          last = value.record;
        }
        yield value;
        if (isTerminalState(last.state)) return;
      }
    } finally {
      signal?.removeEventListener("abort", close);
      closers.delete(close);
      queue.close();
      if (registry.remove(signature, watcher) === 0) deps.unfollow(signature);
    }
  }

  function settle(
    signature: string,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<StatusRecord> {
    const { signal } = options;
    return new Promise<StatusRecord>((resolve, reject) => {
      let done = false;
      let onWaitEnd = () => {};
      const finish = (settleWith: () => void) => {
        if (done) return;
        done = true;
        waiting--;
        clearTimeout(timeout);
        onWaitEnd();
        signal?.removeEventListener("abort", onAbort);
        closers.delete(answerAsItStands);
        failers.delete(fail);
        registry.remove(signature, watcher);
        settleWith();
      };
      const watcher: Watcher = {
        onRecord: (r) => {
          if (isSettledState(r.state)) finish(() => resolve(r));
        },
        lastEventAt: now(),
      };
      const onAbort = () => finish(() => reject(signal?.reason ?? new Error("aborted")));
      const fail = (error: unknown) => finish(() => reject(error));
      // On timeout or shutdown the send is answered with its record as it stands (submitted).
      const answerAsItStands = () => {
        void deps.record(signature).then(
          (r) => finish(() => (r ? resolve(r) : reject(notFound(signature)))),
          (error: unknown) => finish(() => reject(error)),
        );
      };
      const timeout = setTimeout(answerAsItStands, options.timeoutMs ?? 90_000);
      timeout.unref();
      waiting++;
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      closers.add(answerAsItStands);
      failers.add(fail);
      registry.add(signature, watcher);
      onWaitEnd = deps.onWaitStart(signature);
      // Registered first, then read: a send settled before it started waiting answers at once.
      void deps.tracked(signature).then(
        (r) => {
          if (r && isSettledState(r.state)) finish(() => resolve(r));
        },
        (error: unknown) => finish(() => reject(error)),
      );
    });
  }

  return {
    watch,
    settle,
    waiting: () => waiting,
    closeAll() {
      for (const close of [...closers]) close();
    },
    failWaiting(error) {
      for (const fail of [...failers]) fail(error);
    },
  };
}
