/**
 * When the status engine ticks. Normally once per poll interval; while a confirm-and-wait send waits
 * with no notification to come (no feed, or its subscription not yet acknowledged), every
 * `confirmPollIntervalMs`, since its latency is its client's. Once the node acknowledges a subscription
 * to the signature, one tick comes at once (a confirmation that came before the subscription is not
 * notified) and the next when the notification comes. A subscription that fails brings fast ticks back.
 */
import type { SignatureFeed } from "../upstream/signature-feed.ts";

/** Options of {@link createTickPacer}. */
export interface TickPacerOptions {
  /** One tick; its failures go to `onError`. */
  tick: () => Promise<void>;
  pollIntervalMs: number;
  confirmPollIntervalMs: number;
  feed?: Pick<SignatureFeed, "follow">;
  onError: (error: unknown) => void;
  now: () => number;
}

/** The pacer. */
export interface TickPacer {
  start(): void;
  stop(): void;
  /** Brings the next tick forward to at most `delay` from now (after the one under way, if any). */
  hurry(delay: number): void;
  /** A confirm-and-wait send started waiting on `signature`; call the function returned when it stops. */
  waitStarted(signature: string): () => void;
  /** The signatures confirm-and-wait sends wait on here. */
  waited(): IterableIterator<string>;
}

/** Creates the pacer (stopped). */
export function createTickPacer(options: TickPacerOptions): TickPacer {
  const { pollIntervalMs, confirmPollIntervalMs, now } = options;
  // Signatures waited on here, with how many waits each.
  const waitingHere = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let timerDueAt = 0;
  let ticking = false;
  // A notification came during a tick, whose statuses may predate it: tick again straight after.
  let tickAgain = false;
  // Confirm-and-wait sends with no notification to come, for which ticks come fast.
  let unfedWaits = 0;
  let running = false;

  function schedule(delay = unfedWaits > 0 ? confirmPollIntervalMs : pollIntervalMs): void {
    timerDueAt = now() + delay;
    timer = setTimeout(async () => {
      timer = undefined;
      ticking = true;
      try {
        await options.tick();
      } catch (error) {
        options.onError(error);
      }
      ticking = false;
      const immediately = tickAgain;
      tickAgain = false;
      if (running) schedule(immediately ? 0 : undefined);
    }, delay);
    timer.unref();
  }

  function hurry(delay: number): void {
    if (!running) return;
    if (ticking) {
      if (delay === 0) tickAgain = true;
      return;
    }
    if (timer === undefined || timerDueAt - now() <= delay) return;
    clearTimeout(timer);
    schedule(delay);
  }

  return {
    start() {
      if (running) return;
      running = true;
      schedule();
    },
    stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
    hurry,
    waited: () => waitingHere.keys(),
    waitStarted(signature) {
      let fed = false;
      let ended = false;
      const setFed = (value: boolean) => {
        if (ended || fed === value) return;
        fed = value;
        unfedWaits += value ? -1 : 1;
      };
      unfedWaits++;
      waitingHere.set(signature, (waitingHere.get(signature) ?? 0) + 1);
      hurry(confirmPollIntervalMs);
      const subscription = new AbortController();
      options.feed?.follow(signature, "confirmed", subscription.signal, {
        onSubscribed() {
          setFed(true);
          hurry(0);
        },
        onNotified: () => hurry(0),
        onFailed() {
          setFed(false);
          hurry(confirmPollIntervalMs);
        },
      });
      return () => {
        if (ended) return;
        ended = true;
        subscription.abort();
        if (!fed) unfedWaits--;
        const left = (waitingHere.get(signature) ?? 1) - 1;
        if (left > 0) waitingHere.set(signature, left);
        else waitingHere.delete(signature);
      };
    },
  };
}
