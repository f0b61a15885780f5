/**
 * What both Geyser subscriptions (geyser-source.ts: statuses; geyser-blocks.ts: blocks) do alike: the
 * request stream that opens with the filters and then pings, a sleep that ends early on close, and the
 * fleet lease that decides whether this replica subscribes at all.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type SubscribeRequest, SubscribeRequestSchema } from "../../gen/geyser/geyser_pb.js";

/** A lease of fleet-wide work (store/lease.ts); none: this process always holds it. */
export interface StreamLease {
  hold(): Promise<boolean>;
}

/** Calls `onSilent` once `silenceMs` pass on `now`'s clock with no `heard()`. */
export interface SilenceAlarm {
  heard(): void;
  /** Milliseconds on `now`'s clock since the last `heard()` (Infinity before the first). */
  quietMs(): number;
  stop(): void;
}

/**
 * A timer can fire before `now` says its time is up (timers run on a monotonic clock, Date.now is
 * rounded to the millisecond), so an early check re-arms for what is left instead of never firing again.
 */
export function silenceAlarm(silenceMs: number, now: () => number, onSilent: () => void): SilenceAlarm {
  let heardAt = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  const quietMs = () => now() - heardAt;
  const arm = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(check, Math.max(1, ms));
    timer.unref();
  };
  function check(): void {
    const quiet = quietMs();
    if (quiet < silenceMs) arm(silenceMs - quiet);
    else onSilent();
  }
  return {
    heard() {
      heardAt = now();
      arm(silenceMs);
    },
    quietMs,
    stop: () => clearTimeout(timer),
  };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    timer.unref();
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** The client side of `Subscribe`: `first` (the filters), then a ping every `pingMs` until `signal` aborts. */
export async function* pingingRequests(
  first: SubscribeRequest,
  pingMs: number,
  signal: AbortSignal,
): AsyncGenerator<SubscribeRequest> {
  yield first;
  let id = 1;
  while (!signal.aborted) {
    await abortableSleep(pingMs, signal);
    if (signal.aborted) return;
    yield create(SubscribeRequestSchema, { ping: { id: id++ } });
  }
}

/** Whether this replica holds `lease` now (a failed check counts as not). */
export async function holdsLease(lease: StreamLease | undefined): Promise<boolean> {
  return lease === undefined ? true : lease.hold().catch(() => false);
}

/**
 * While subscribed: checks `lease` every `everyMs` and calls `onLost` once it is gone (another replica
 * subscribes then). Returns the stop function; nothing to watch without a lease.
 */
export function watchLease(lease: StreamLease | undefined, everyMs: number, onLost: () => void): () => void {
  if (lease === undefined) return () => {};
  const timer = setInterval(() => {
    void holdsLease(lease).then((held) => {
      if (!held) onLost();
    });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Whether a subscription failed because its `from_slot` is outside what the server can replay, so that only a
 * subscription from the tip can succeed. Yellowstone says so as OUT_OF_RANGE, but some released versions send
 * the same words ("broadcast from N is not available, last available: M") as INTERNAL, and a server without
 * replay answers "from_slot is not supported": the words decide, whatever the code.
 */
export function isReplayUnavailable(error: ConnectError | undefined): boolean {
  if (error === undefined) return false;
  if (error.code === Code.OutOfRange) return true;
  return (
    /is not available, last available: \d+/.test(error.rawMessage) || error.rawMessage === "from_slot is not supported"
  );
}

/** Options of {@link resubscribe}. */
export interface ResubscribeOptions {
  /** Ends the loop. */
  closer: AbortSignal;
  /** In a fleet: subscribe only while holding it, checked before each subscription and every `leaseCheckMs`. */
  lease?: StreamLease;
  leaseCheckMs: number;
  /** Backoff between subscriptions: first step and cap (doubling; back to the first after a clean end). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** The reason given when the lease went to another replica. */
  leaseLostReason: string;
  /** One subscription, until it ends (returns) or fails (throws); `signal` aborts it. */
  subscribe(signal: AbortSignal): Promise<void>;
  /** After each subscription: why it ended, and the error when it failed ({@link isReplayUnavailable}: restart from the tip). */
  ended(reason: string, error: ConnectError | undefined): void;
}

/** Subscribes again and again, with backoff, while this replica holds the lease, until `closer` aborts. */
export function resubscribe(options: ResubscribeOptions): void {
  const { closer } = options;
  void (async () => {
    let delay = options.baseDelayMs;
    while (!closer.aborted) {
      if (!(await holdsLease(options.lease))) {
        await abortableSleep(options.leaseCheckMs, closer);
        continue;
      }
      const attempt = new AbortController();
      let leaseLost = false;
      // Another replica took the lease: this one stops subscribing.
      const stopLeaseWatch = watchLease(options.lease, options.leaseCheckMs, () => {
        leaseLost = true;
        attempt.abort();
      });
      let reason = "stream ended";
      let failure: ConnectError | undefined;
      try {
        await options.subscribe(AbortSignal.any([attempt.signal, closer]));
        delay = options.baseDelayMs;
      } catch (error) {
        if (closer.aborted) break;
        failure = ConnectError.from(error);
        reason = leaseLost ? options.leaseLostReason : `stream failed: ${failure.message}`;
      } finally {
        stopLeaseWatch();
        attempt.abort();
      }
      options.ended(reason, failure);
      await abortableSleep(delay, closer);
      delay = Math.min(delay * 2, options.maxDelayMs);
    }
  })();
}
