/**
 * One Yellowstone Geyser `Subscribe`, kept open: the building block of both streams (geyser-source.ts:
 * statuses at confirmed; geyser-blocks.ts: blocks at processed). A stream supplies its filters and its update
 * handler; this module owns the rest, alike for both:
 *
 * - the connection (Connect on the gen/geyser code, `x-token` when set) and the request stream that opens with
 *   the filters and then pings every `pingMs`;
 * - health: usable while connected and heard within `silenceMs` (what counts as heard is the stream's: it calls
 *   `heard()`), and not lagging when the stream has its own measure of lag; each change is counted and told once;
 * - the resume cursor: the newest slot the stream reported through `advance`; after a break it reconnects with
 *   backoff and `from_slot` = that slot + 1, or from the tip when the server cannot replay that far;
 * - in a fleet, the lease: only its holder subscribes, checked before each subscription and while subscribed.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  Geyser,
  type SubscribeRequest,
  SubscribeRequestSchema,
  type SubscribeUpdate,
} from "../../gen/geyser/geyser_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { sleep } from "../sleep.ts";

/** A lease of fleet-wide work (store/lease.ts); none: this process always holds it. */
export interface StreamLease {
  hold(): Promise<boolean>;
}

/** What both streams are configured with. */
export interface GeyserSubscriptionOptions {
  /** The Geyser gRPC endpoint (http: for h2c, https: for TLS). */
  url: string;
  /** Sent as `x-token` when set. */
  token?: string;
  /** A transport to share (default: a new one for `url`). */
  transport?: Transport;
  /** Nothing heard for this long: the stream counts as down (default 2,000 ms). */
  silenceMs?: number;
  /** Client ping period (default 1,000 ms). */
  pingMs?: number;
  /** Reconnect backoff: first step and cap (default 100 ms, 5 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Told once per change of health, for one log line. */
  onHealth?: (healthy: boolean, reason: string) => void;
  /**
   * In a fleet: the lease of the work this stream feeds. Only its holder subscribes; checked before each
   * subscription and every `leaseCheckMs` (default 1,000 ms) while subscribed.
   */
  lease?: StreamLease;
  leaseCheckMs?: number;
  now?: () => number;
}

/** Counters both streams keep, for metrics and tests. */
export interface GeyserSubscriptionStats {
  /** Streams opened after the first. */
  reconnects: number;
  /** Streams opened in all (the first included). */
  subscriptions: number;
  /** Times the stream went from usable to not: its consumers fell back to JSON-RPC. */
  fallbacks: number;
  /** The newest slot the stream advanced to, and the `from_slot` of the last reconnect. */
  lastSlot: bigint | undefined;
  lastFromSlot: bigint | undefined;
}

/** What one stream supplies: its filters, its update handler, and the words of its log lines. */
export interface GeyserStreamSpec {
  /** The filters and commitment of the subscription (`from_slot` is added here). */
  filters: MessageInitShape<typeof SubscribeRequestSchema>;
  /** Each update, pings' pongs included; calls `heard` for what keeps the stream healthy. */
  onUpdate(update: SubscribeUpdate): void;
  /** The reason logged when nothing was heard for `silenceMs`. */
  silentReason: string;
  /** The reason logged when an update made the stream healthy again. */
  heardReason: string;
  /** The reason logged when the lease went to another replica. */
  leaseLostReason: string;
  /** When the stream is connected and heard but too far behind to be used: why; undefined when it is not. */
  lagging?(): string | undefined;
  /** Each change of health, before `onHealth`. */
  healthChanged?(healthy: boolean): void;
}

/** A running subscription, for the stream built on it. */
export interface GeyserSubscription {
  /** Connected, heard within `silenceMs`, and not lagging. */
  healthy(): boolean;
  /** Something that counts as life came: the silence clock restarts and health is checked. */
  heard(): void;
  /** Moves the resume cursor to `slot` when it is newer; false (and no move) when it is not. */
  advance(slot: bigint): boolean;
  /** A snapshot of the counters; `stats.lastSlot` is the cursor. */
  stats(): GeyserSubscriptionStats;
  close(): void;
}

/** Starts subscribing at once (when the lease allows); it runs until `close`. */
export function createGeyserSubscription(
  options: GeyserSubscriptionOptions,
  spec: GeyserStreamSpec,
): GeyserSubscription {
  const silenceMs = options.silenceMs ?? 2000;
  const pingMs = options.pingMs ?? 1000;
  const onHealth = options.onHealth ?? (() => {});
  const now = options.now ?? Date.now;
  const client = createClient(Geyser, options.transport ?? createGrpcTransport({ baseUrl: options.url }));
  const closer = new AbortController();
  const stats: GeyserSubscriptionStats = {
    reconnects: 0,
    subscriptions: 0,
    fallbacks: 0,
    lastSlot: undefined,
    lastFromSlot: undefined,
  };
  let connected = false;
  let reported = false;
  const silence = silenceAlarm(silenceMs, now, () => checkHealth(spec.silentReason));

  const lagging = () => spec.lagging?.();
  const healthy = () => connected && silence.quietMs() < silenceMs && lagging() === undefined;

  /** Reports a change of health once. */
  function checkHealth(reason: string): void {
    const ok = healthy();
    if (!ok && connected && silence.quietMs() < silenceMs) reason = lagging() ?? reason;
    if (ok === reported) return;
    reported = ok;
    if (!ok) stats.fallbacks++;
    spec.healthChanged?.(ok);
    onHealth(ok, reason);
  }

  async function runOnce(fromSlot: bigint | undefined, signal: AbortSignal): Promise<void> {
    stats.subscriptions++;
    const request = create(SubscribeRequestSchema, {
      ...spec.filters,
      ...(fromSlot === undefined ? {} : { fromSlot }),
    });
    try {
      const updates = client.subscribe(pingingRequests(request, pingMs, signal), {
        signal,
        ...(options.token === undefined ? {} : { headers: { "x-token": options.token } }),
      });
      for await (const update of updates) {
        connected = true;
        spec.onUpdate(update);
      }
    } finally {
      connected = false;
    }
  }

  let first = true;
  resubscribe({
    closer: closer.signal,
    ...(options.lease === undefined ? {} : { lease: options.lease }),
    leaseCheckMs: options.leaseCheckMs ?? 1000,
    baseDelayMs: options.baseDelayMs ?? 100,
    maxDelayMs: options.maxDelayMs ?? 5000,
    leaseLostReason: spec.leaseLostReason,
    subscribe(signal) {
      const fromSlot = stats.lastSlot === undefined ? undefined : stats.lastSlot + 1n;
      if (!first) {
        stats.reconnects++;
        stats.lastFromSlot = fromSlot;
      }
      first = false;
      return runOnce(fromSlot, signal);
    },
    ended(reason, error) {
      // The server keeps only so many slots (or replays none): start from its tip instead.
      if (isReplayUnavailable(error)) stats.lastSlot = undefined;
      checkHealth(reason);
    },
  });

  return {
    healthy,
    heard() {
      silence.heard();
      checkHealth(spec.heardReason);
    },
    advance(slot) {
      if (stats.lastSlot !== undefined && slot <= stats.lastSlot) return false;
      stats.lastSlot = slot;
      return true;
    },
    stats: () => ({ ...stats }),
    close() {
      closer.abort();
      silence.stop();
    },
  };
}

/** Calls `onSilent` once `silenceMs` pass on `now`'s clock with no `heard()`. */
interface SilenceAlarm {
  heard(): void;
  /** Milliseconds on `now`'s clock since the last `heard()` (Infinity before the first). */
  quietMs(): number;
  stop(): void;
}

/**
 * A timer can fire before `now` says its time is up (timers run on a monotonic clock, Date.now is
 * rounded to the millisecond), so an early check re-arms for what is left instead of never firing again.
 */
function silenceAlarm(silenceMs: number, now: () => number, onSilent: () => void): SilenceAlarm {
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

/** The client side of `Subscribe`: `first` (the filters), then a ping every `pingMs` until `signal` aborts. */
async function* pingingRequests(
  first: SubscribeRequest,
  pingMs: number,
  signal: AbortSignal,
): AsyncGenerator<SubscribeRequest> {
  yield first;
  let id = 1;
  while (!signal.aborted) {
    await sleep(pingMs, signal, { ref: false });
    if (signal.aborted) return;
    yield create(SubscribeRequestSchema, { ping: { id: id++ } });
  }
}

/** Whether this replica holds `lease` now (a failed check counts as not). */
async function holdsLease(lease: StreamLease | undefined): Promise<boolean> {
  return lease === undefined ? true : lease.hold().catch(() => false);
}

/**
 * While subscribed: checks `lease` every `everyMs` and calls `onLost` once it is gone (another replica
 * subscribes then). Returns the stop function; nothing to watch without a lease.
 */
function watchLease(lease: StreamLease | undefined, everyMs: number, onLost: () => void): () => void {
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
interface ResubscribeOptions {
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
function resubscribe(options: ResubscribeOptions): void {
  const { closer } = options;
  void (async () => {
    let delay = options.baseDelayMs;
    while (!closer.aborted) {
      if (!(await holdsLease(options.lease))) {
        await sleep(options.leaseCheckMs, closer, { ref: false });
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
      await sleep(delay, closer, { ref: false });
      delay = Math.min(delay * 2, options.maxDelayMs);
    }
  })();
}
