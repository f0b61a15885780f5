/**
 * A circuit breaker per upstream URL, on cockatiel's `CircuitBreakerPolicy`: it opens after a run of
 * consecutive failures or when too large a share of recent attempts failed, lets one probe through after
 * a cool-down (half-open), and closes again when the probe succeeds. While it is open (or its probe is
 * in flight) failover skips the URL without touching it.
 *
 * The cool-down starts short (1 s) and doubles with each failed probe up to its longest: a node back after a
 * blip is used again within a second, not after the longest cool-down. With one RPC URL, an open breaker stops
 * status polls and rebroadcasts; a fixed 10 s cool-down after a 2 s outage let a taken send's blockhash lapse
 * (the failure matrix's RPC-path row, docs/fleet.md), and on mainnet it is a sixth of a blockhash's life.
 */
import {
  CircuitState,
  circuitBreaker,
  ConsecutiveBreaker,
  CountBreaker,
  ExponentialBackoff,
  handleWhenResult,
  noJitterGenerator,
} from "cockatiel";
import type { IBackoff, IBackoffFactory, IBreaker, IHalfOpenAfterBackoffContext } from "cockatiel";

/** Options of {@link createEndpointBreaker}. */
export interface EndpointBreakerOptions {
  /** Failures in a row that open the breaker (default 5). */
  consecutiveFailures?: number;
  /** Share of the last `windowSize` attempts that, once failed, opens the breaker (default 0.5; 1: never by ratio). */
  failureRatio?: number;
  /** Attempts the ratio is taken over (default 20; the ratio counts once half of them are in). */
  windowSize?: number;
  /** The longest an open breaker waits before letting a probe through (default 10 s). */
  halfOpenAfterMs?: number;
  /** The first wait, doubled after each failed probe up to `halfOpenAfterMs` (default 1 s, at most `halfOpenAfterMs`). */
  firstHalfOpenAfterMs?: number;
  /** Told of every change of state. */
  onStateChange?: (state: BreakerState) => void;
  /**
   * Asks the URL whether it answers (true: it does). When given, a cool-down that ends with no call to probe
   * the URL runs this as the probe: a replica with no calls of its own would otherwise stay open, and unready,
   * long after its node came back.
   */
  probe?: (signal: AbortSignal) => Promise<boolean>;
  /** Stops the breaker's own probes (the upstream closed). */
  signal?: AbortSignal;
}

/** A breaker's state, as metrics and readiness report it. */
export type BreakerState = "closed" | "open" | "half_open";

/** What one attempt through the breaker came to: whether it counts as a failure of the URL. */
export interface BreakerVerdict {
  readonly endpointFailed: boolean;
}

/** The breaker of one upstream URL. */
export interface EndpointBreaker {
  /** The state now (an open breaker whose cool-down is over stays `open` until a call probes it). */
  state(): BreakerState;
  /** Whether a call now would be let through (closed, or open with the cool-down over: the probe). */
  admits(): boolean;
  /** Milliseconds until an open breaker lets a probe through (0 when it admits calls). */
  retryAfterMs(): number;
  /**
   * Runs one attempt through the breaker. Resolves to `undefined` without calling `attempt` when the
   * breaker is open; errors `attempt` throws (a caller's abort) pass through and are not counted.
   */
  run<T extends BreakerVerdict>(attempt: () => Promise<T>): Promise<T | undefined>;
}

/** Opens when either of two cockatiel breakers would: a run of failures, or a failure ratio. */
class EitherBreaker implements IBreaker {
  private readonly consecutive: ConsecutiveBreaker;
  private readonly ratio: CountBreaker | undefined;
  constructor(consecutive: ConsecutiveBreaker, ratio: CountBreaker | undefined) {
    this.consecutive = consecutive;
    this.ratio = ratio;
  }
  get state(): unknown {
    return { consecutive: this.consecutive.state, ratio: this.ratio?.state };
  }
  set state(value: unknown) {
    const saved = value as { consecutive: number; ratio: unknown };
    this.consecutive.state = saved.consecutive;
    if (this.ratio !== undefined) this.ratio.state = saved.ratio;
  }
  success(state: CircuitState): void {
    this.consecutive.success();
    this.ratio?.success(state);
  }
  failure(state: CircuitState): boolean {
    const byRun = this.consecutive.failure();
    const byRatio = this.ratio?.failure(state) ?? false;
    return byRun || byRatio;
  }
}

/** Creates the breaker of one URL (closed). */
export function createEndpointBreaker(options: EndpointBreakerOptions = {}): EndpointBreaker {
  const halfOpenAfterMs = options.halfOpenAfterMs ?? 10_000;
  const firstHalfOpenAfterMs = Math.min(options.firstHalfOpenAfterMs ?? 1_000, halfOpenAfterMs);
  // The cool-down of the current opening, as cockatiel's backoff hands it out (cockatiel keeps it private).
  let coolDownMs = firstHalfOpenAfterMs;
  const noted = (backoff: IBackoff<IHalfOpenAfterBackoffContext>): IBackoff<IHalfOpenAfterBackoffContext> => {
    coolDownMs = backoff.duration;
    return { duration: backoff.duration, next: (context) => noted(backoff.next(context)) };
  };
  const doubling: IBackoffFactory<IHalfOpenAfterBackoffContext> = new ExponentialBackoff({
    initialDelay: firstHalfOpenAfterMs,
    maxDelay: halfOpenAfterMs,
    generator: noJitterGenerator,
  });
  const windowSize = options.windowSize ?? 20;
  const failureRatio = options.failureRatio ?? 0.5;
  // cockatiel times the cool-down with Date.now; so does this.
  const now = Date.now;
  // Only attempts whose result blames the URL count as failures; a thrown error (the caller gave up) is not counted.
  const policy = circuitBreaker(
    handleWhenResult((result) => (result as BreakerVerdict).endpointFailed),
    {
      halfOpenAfter: { next: (context) => noted(doubling.next(context)) },
      breaker: new EitherBreaker(
        new ConsecutiveBreaker(options.consecutiveFailures ?? 5),
        failureRatio >= 1
          ? undefined
          : new CountBreaker({
              threshold: failureRatio,
              size: windowSize,
              minimumNumberOfCalls: Math.ceil(windowSize / 2),
            }),
      ),
    },
  );
  let openedAt = 0;
  policy.onBreak(() => {
    openedAt = now();
    if (options.probe !== undefined) probeAfterCoolDown(options.probe);
  });
  policy.onStateChange((state) => options.onStateChange?.(stateName(state)));

  const coolingDown = () => policy.state === CircuitState.Open && now() - openedAt < coolDownMs;
  // One timer per breaker: each opening replaces the last one's.
  let probeTimer: NodeJS.Timeout | undefined;
  const probeAfterCoolDown = (probe: (signal: AbortSignal) => Promise<boolean>, delayMs = coolDownMs) => {
    clearTimeout(probeTimer);
    const stop = options.signal;
    if (stop?.aborted) return;
    probeTimer = setTimeout(() => {
      probeTimer = undefined;
      // A call may have probed already (closed, or half-open with its probe in flight).
      if (policy.state !== CircuitState.Open || stop?.aborted) return;
      // Date.now and the timers' clock can disagree by a millisecond: wait out what is left.
      if (coolingDown()) return probeAfterCoolDown(probe, breaker.retryAfterMs() + 1);
      const signal = stop ?? new AbortController().signal;
      void breaker.run(async () => ({ endpointFailed: !(await probe(signal).catch(() => false)) })).catch(() => {});
    }, delayMs);
    probeTimer.unref();
  };
  options.signal?.addEventListener("abort", () => clearTimeout(probeTimer), { once: true });
  const breaker: EndpointBreaker = {
    state: () => stateName(policy.state),
    admits: () => policy.state === CircuitState.Closed || (policy.state === CircuitState.Open && !coolingDown()),
    retryAfterMs: () => (policy.state === CircuitState.Closed ? 0 : Math.max(0, openedAt + coolDownMs - now())),
    async run(attempt) {
      // Checked here rather than left to cockatiel: a call must not wait behind a half-open probe.
      if (policy.state === CircuitState.HalfOpen || coolingDown()) return undefined;
      return policy.execute(() => attempt());
    },
  };
  return breaker;
}

function stateName(state: CircuitState): BreakerState {
  switch (state) {
    case CircuitState.Closed:
      return "closed";
    case CircuitState.HalfOpen:
      return "half_open";
    default:
      return "open";
  }
}
