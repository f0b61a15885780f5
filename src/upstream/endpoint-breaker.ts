/**
 * A circuit breaker per upstream URL, on cockatiel's `CircuitBreakerPolicy`: it opens after a run of
 * consecutive failures or when too large a share of recent attempts failed, lets one probe through after
 * a cool-down (half-open), and closes again when the probe succeeds. While it is open (or its probe is
 * in flight) failover skips the URL without touching it.
 */
import { CircuitState, circuitBreaker, ConsecutiveBreaker, CountBreaker, handleWhenResult } from "cockatiel";
import type { IBreaker } from "cockatiel";

/** Options of {@link createEndpointBreaker}. */
export interface EndpointBreakerOptions {
  /** Failures in a row that open the breaker (default 5). */
  consecutiveFailures?: number;
  /** Share of the last `windowSize` attempts that, once failed, opens the breaker (default 0.5; 1: never by ratio). */
  failureRatio?: number;
  /** Attempts the ratio is taken over (default 20; the ratio counts once half of them are in). */
  windowSize?: number;
  /** How long an open breaker waits before letting a probe through (default 10 s). */
  halfOpenAfterMs?: number;
  /** Told of every change of state. */
  onStateChange?: (state: BreakerState) => void;
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
  const windowSize = options.windowSize ?? 20;
  const failureRatio = options.failureRatio ?? 0.5;
  // cockatiel times the cool-down with Date.now; so does this.
  const now = Date.now;
  // Only attempts whose result blames the URL count as failures; a thrown error (the caller gave up) is not counted.
  const policy = circuitBreaker(
    handleWhenResult((result) => (result as BreakerVerdict).endpointFailed),
    {
      halfOpenAfter: halfOpenAfterMs,
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
  });
  policy.onStateChange((state) => options.onStateChange?.(stateName(state)));

  const coolingDown = () => policy.state === CircuitState.Open && now() - openedAt < halfOpenAfterMs;
  return {
    state: () => stateName(policy.state),
    admits: () => policy.state === CircuitState.Closed || (policy.state === CircuitState.Open && !coolingDown()),
    retryAfterMs: () => (policy.state === CircuitState.Closed ? 0 : Math.max(0, openedAt + halfOpenAfterMs - now())),
    async run(attempt) {
      // Checked here rather than left to cockatiel: a call must not wait behind a half-open probe.
      if (policy.state === CircuitState.HalfOpen || coolingDown()) return undefined;
      return policy.execute(() => attempt());
    },
  };
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
