/**
 * The live feed of one chain's global fee levels (FeeService.WatchFees): the market offers its global
 * estimate after every tick; the feed publishes it when what a client acts on changed (the levels,
 * their odds, the source, the tip levels), at most once per slot, and a heartbeat when nothing was published for a
 * while. Every open watch gets the same event objects, so a transport can encode each one once and
 * hand the bytes to all its streams. One shared promise wakes every waiting watch: a watch costs an
 * async generator and nothing per event.
 */
import type { FeeEstimate } from "./fee-estimate.ts";

/** One event of a fee watch. */
export type FeeFeedEvent =
  | { readonly kind: "estimate"; readonly estimate: FeeEstimate }
  | { readonly kind: "heartbeat"; readonly slot: bigint };

/** Options of {@link createFeeFeed}. */
export interface FeeFeedOptions {
  /** A heartbeat goes out after this long without an event (default 15 s). */
  heartbeatMs?: number;
  now?: () => number;
}

/** The feed. */
export interface FeeFeed {
  /**
   * Offers the market's current global estimate; published when its levels, odds or source differ from
   * the last published one and its slot is newer (a change within a published slot waits for the next).
   * Also sends the heartbeat when it is due. Returns whether anything was published.
   */
  offer(estimate: FeeEstimate): boolean;
  /** The last published estimate (undefined before the first offer). */
  latest(): FeeEstimate | undefined;
  /**
   * The watch of one client: the latest estimate at once (when there is one), then every event, until
   * `signal` aborts. A client that reads slowly skips to the newest event; it is never queued.
   */
  watch(signal: AbortSignal): AsyncGenerator<FeeFeedEvent>;
  /** Watches open now. */
  watchers(): number;
}

// What a client acts on: everything but the fields that move with every block (slot, times, sample size),
// at any depth (the tip levels' read time and sample size do not count either).
const MOVING_FIELDS = new Set(["slot", "updatedAt", "windowSlots", "sampleSize"]);

function contentKey(estimate: FeeEstimate): string {
  return JSON.stringify(estimate, (key, value: unknown) =>
    MOVING_FIELDS.has(key) ? undefined : typeof value === "bigint" ? value.toString() : value,
  );
}

/** Creates an empty feed. */
export function createFeeFeed(options: FeeFeedOptions = {}): FeeFeed {
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const now = options.now ?? Date.now;
  let published: FeeEstimate | undefined;
  let publishedKey = "";
  // The event of the published estimate: one object, handed to every watch.
  let publishedEvent: FeeFeedEvent | undefined;
  let lastEvent: FeeFeedEvent | undefined;
  let lastEventAt = now();
  let open = 0;
  // Resolved with the next event; replaced at each one.
  let wake = Promise.withResolvers<FeeFeedEvent>();

  function emit(event: FeeFeedEvent): void {
    lastEvent = event;
    lastEventAt = now();
    const woken = wake;
    wake = Promise.withResolvers<FeeFeedEvent>();
    woken.resolve(event);
  }

  /**
   * The next event, or undefined when `signal` aborts first. Not `Promise.race` with one long-lived abort
   * promise: each race would leave a reaction on it for the life of the watch (one per slot, forever).
   */
  function nextEvent(signal: AbortSignal): Promise<FeeFeedEvent | undefined> {
    return new Promise((resolve) => {
      const onAbort = () => resolve(undefined);
      signal.addEventListener("abort", onAbort, { once: true });
      void wake.promise.then((event) => {
        signal.removeEventListener("abort", onAbort);
        resolve(event);
      });
    });
  }

  function heartbeatIfDue(slot: bigint): boolean {
    if (published === undefined || now() - lastEventAt < heartbeatMs) return false;
    emit({ kind: "heartbeat", slot });
    return true;
  }

  function publishes(estimate: FeeEstimate): boolean {
    if (published === undefined) return true;
    if (estimate.source !== published.source) return true;
    return estimate.slot > published.slot && contentKey(estimate) !== publishedKey;
  }

  return {
    offer(estimate) {
      if (published === estimate || !publishes(estimate)) return heartbeatIfDue(estimate.slot);
      published = estimate;
      publishedKey = contentKey(estimate);
      publishedEvent = { kind: "estimate", estimate };
      emit(publishedEvent);
      return true;
    },

    latest: () => published,

    async *watch(signal) {
      if (signal.aborted) return;
      open++;
      try {
        let seen = lastEvent;
        let sent = publishedEvent;
        if (sent !== undefined) yield sent;
        while (!signal.aborted) {
          let next: FeeFeedEvent | undefined;
          if (publishedEvent !== sent)
            next = publishedEvent; // fell behind: the newest estimate, not what it missed
          else if (lastEvent !== seen) next = lastEvent;
          else next = await nextEvent(signal);
          if (next === undefined || signal.aborted) return;
          seen = next === publishedEvent ? lastEvent : next;
          if (next.kind === "estimate") sent = next;
          yield next;
        }
      } finally {
        open--;
      }
    },

    watchers: () => open,
  };
}
