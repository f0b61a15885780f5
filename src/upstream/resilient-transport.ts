/**
 * The kit `RpcTransport` that every upstream call goes through: one attempt at a time per call,
 * each under a timeout and a slot of the concurrency cap, retried with exponential backoff and
 * jitter on HTTP 429/5xx, timeouts, network errors and unhealthy nodes, failing over across the
 * configured URLs and remembering which one answered last; all of it within one time budget per call,
 * and skipping URLs whose circuit breaker is open. An answer is only handed on once it fits its method's
 * schema and the URL's slot watch finds nothing wrong with it; one that does not is a failed attempt.
 */
import {
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_NODE_UNHEALTHY,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
} from "@solana/kit";
import type { RpcTransport } from "@solana/kit";
import type { Semaphore } from "./semaphore.ts";
import type { UpstreamMetrics, UpstreamOutcome } from "./metrics.ts";
import type { UpstreamCallTrace, UpstreamCallTracer } from "./call-tracer.ts";
import { tagRawRpcError } from "./rpc-errors.ts";
import { toSolgateError } from "./upstream-failure.ts";
import type { Failure } from "./upstream-failure.ts";
import type { EndpointBreaker } from "./endpoint-breaker.ts";
import { checkResult } from "./response-schemas.ts";
import type { GenericSchema } from "valibot";
import type { SlotWatch } from "./slot-watch.ts";
import { ResponseTooLargeError } from "./capped-http.ts";
import { sleep } from "../sleep.ts";

/** One upstream URL with the kit HTTP transport that reaches it. */
export interface Endpoint {
  /** Redacted label for metrics, logs and errors (never the URL itself: it may hold an API key). */
  readonly label: string;
  readonly transport: RpcTransport;
  /** The URL's circuit breaker, shared by every transport that reaches the URL; none: always tried. */
  readonly breaker?: EndpointBreaker;
  /** The URL's slot watch (a lying or lagging node), shared like the breaker; none: not watched. */
  readonly watch?: SlotWatch;
}

/** An answer refused at the boundary, for logs: never the body, only where it went wrong. */
export interface RefusedAnswer {
  method: string;
  /** The endpoint's redacted label (its origin). */
  endpoint: string;
  /** `invalid_response` (did not fit the method's schema), `node_lagging` (a slot that cannot be), `response_too_large`. */
  failure: "invalid_response" | "node_lagging" | "response_too_large";
  /** The path of the first mismatch (`result.value.0.slot`), or why the node was taken as lagging. */
  path?: string;
  /** What the schema expected there, or the kind of lie. */
  expected?: string;
}

/** Options of {@link createResilientTransport}. */
export interface ResilientTransportOptions {
  /** The chain's name, for error messages. */
  chain: string;
  /** At least one; tried in order, starting from the last one that answered. */
  endpoints: readonly Endpoint[];
  /**
   * Per attempt, from sending the request to the last byte of the response; shrunk to an equal share of
   * what is left of the budget among this attempt and the URLs still to try this round.
   */
  timeoutMs: number;
  /**
   * The whole call, every attempt, backoff and failover included (default 10 s). When it runs out the
   * call fails with UPSTREAM_UNAVAILABLE. A caller's signal that aborts sooner (its own deadline) wins.
   */
  budgetMs?: number;
  /** Attempts after the first, across all endpoints. */
  maxRetries: number;
  semaphore: Semaphore;
  metrics: UpstreamMetrics;
  /** Traces each call (a span per call, its attempts as events); absent when tracing is off. */
  tracer?: UpstreamCallTracer;
  /** First backoff step; doubles each round (default 100 ms). */
  baseDelayMs?: number;
  /** Largest backoff step (default 2 s). */
  maxDelayMs?: number;
  /** A Retry-After longer than this is not waited out: the call fails at once, passing the delay on (default 5 s). */
  maxRetryAfterMs?: number;
  /**
   * Whether a timed-out attempt is tried again (default true). Key scans say no: a scan that outlasts
   * the timeout is most likely too heavy, and repeating it only multiplies the load on the node.
   */
  retryTimeouts?: boolean;
  /** Aborted by `close()`: in-flight attempts stop and no new ones start. */
  closeSignal: AbortSignal;
  /**
   * The schema of each method's `result` (see response-schemas.ts): an answer that does not fit is
   * refused as `invalid_response`, counted against the URL and failed over. None: answers pass unchecked.
   */
  schemas?: Readonly<Record<string, GenericSchema>>;
  /** Told of every answer refused at the boundary (for a warning log). */
  onRefused?: (refused: RefusedAnswer) => void;
  /** For tests; defaults to Math.random. */
  random?: () => number;
}

/** "Node is unhealthy": another node may well be healthy, so it is retried like a 503. */
const NODE_UNHEALTHY = SOLANA_ERROR__JSON_RPC__SERVER_ERROR_NODE_UNHEALTHY;

/** How one attempt ended: the node's response, or why there was none. */
type AttemptResult<TResponse> = { ok: true; response: TResponse } | { ok: false; failure: Failure };

/**
 * Creates the transport. The returned function is what kit's `createSolanaRpcFromTransport` wraps.
 *
 * Long (~250 lines): one call's retry rounds, failover, per-attempt timeouts within the call's budget and the
 * breaker each read the same per-call state and options; the attempt functions stay inside to close over them.
 */
export function createResilientTransport(options: ResilientTransportOptions): RpcTransport {
  const { endpoints, timeoutMs, maxRetries, semaphore, metrics, closeSignal } = options;
  if (endpoints.length === 0) throw new RangeError("at least one upstream URL is required");
  const budgetMs = options.budgetMs ?? 10_000;
  const baseDelayMs = options.baseDelayMs ?? 100;
  const maxDelayMs = options.maxDelayMs ?? 2000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 5000;
  const random = options.random ?? Math.random;
  // The endpoint that answered last: every call starts there, so a dead primary costs one failure, not one per call.
  let preferred = 0;

  const { tracer } = options;
  if (tracer === undefined) {
    return function resilientTransport<TResponse>(config: { payload: unknown; signal?: AbortSignal }) {
      return call<TResponse>(config, methodOf(config.payload), undefined);
    };
  }
  // With tracing on, each call is wrapped in its trace; a call nobody traces skips it.
  return async function tracedTransport<TResponse>(config: { payload: unknown; signal?: AbortSignal }) {
    const method = methodOf(config.payload);
    const trace = tracer.start(method);
    if (trace === undefined) return call<TResponse>(config, method, undefined);
    try {
      const response = await call<TResponse>(config, method, trace);
      trace.end();
      return response;
    } catch (error) {
      trace.end(error);
      throw error;
    }
  };

  async function call<TResponse>(
    config: { payload: unknown; signal?: AbortSignal },
    method: string,
    trace: UpstreamCallTrace | undefined,
  ): Promise<TResponse> {
    const callerSignal = config.signal;
    const deadline = performance.now() + budgetMs;
    const budget = new AbortController();
    const budgetTimer = setTimeout(() => budget.abort(new Error("upstream budget spent")), budgetMs);
    const fail = (failure: Failure) => toSolgateError(failure, method, options.chain, { budgetMs });
    try {
      let index = preferred;
      let triedThisRound = new Set<number>();
      let attemptedThisRound = false;
      let round = 0;
      let attempts = 0;
      let last: Failure | undefined;
      let skipped: Failure | undefined;

      for (;;) {
        if (closeSignal.aborted) throw fail({ kind: "closed" });
        if (triedThisRound.size > 0) {
          // Move to an endpoint this round has not tried; once all have, back off before the next round.
          const untried = nextUntried(index, endpoints.length, triedThisRound);
          if (untried !== undefined) {
            index = untried;
          } else {
            // Every endpoint's breaker is open: fail fast rather than wait for one to cool down.
            if (!attemptedThisRound) break;
            if (last?.retryAfterMs !== undefined && last.retryAfterMs > maxRetryAfterMs) break;
            round++;
            const backoff = Math.max(
              jittered(Math.min(maxDelayMs, baseDelayMs * 2 ** (round - 1)), random),
              last?.retryAfterMs ?? 0,
            );
            if (performance.now() + backoff >= deadline) {
              last = budgetSpent(last);
              break;
            }
            await sleep(backoff, anySignal(callerSignal, closeSignal));
            callerSignal?.throwIfAborted();
            if (closeSignal.aborted) throw fail({ kind: "closed" });
            triedThisRound = new Set();
            attemptedThisRound = false;
            index = preferred;
          }
        }
        triedThisRound.add(index);
        const left = deadline - performance.now();
        if (left <= 0) {
          last = budgetSpent(last);
          break;
        }
        const endpoint = endpoints[index];
        const attemptTimeoutMs = Math.min(timeoutMs, left / (1 + untriedOpenTo(triedThisRound)));
        const result = await attemptThroughBreaker<TResponse>(
          endpoint,
          config.payload,
          method,
          callerSignal,
          budget.signal,
          attemptTimeoutMs,
          trace,
        );
        if (result === undefined) {
          skipped = {
            kind: "circuit_open",
            retryable: true,
            endpoint: endpoint.label,
            retryAfterMs: endpoint.breaker?.retryAfterMs(),
          };
          continue;
        }
        attempts++;
        attemptedThisRound = true;
        if (result.ok) {
          preferred = index;
          return result.response;
        }
        last = result.failure;
        if (preferred === index) preferred = (index + 1) % endpoints.length;
        if (last.kind === "timeout" && options.retryTimeouts === false) break;
        if (!last.retryable && nextUntried(index, endpoints.length, triedThisRound) === undefined) break;
        if (attempts > maxRetries) break;
      }
      throw fail(last ?? allOpen(skipped, endpoints) ?? { kind: "closed" });
    } finally {
      clearTimeout(budgetTimer);
    }
  }

  /**
   * Endpoints this round has yet to try whose breakers would let a call through. An attempt gets an equal
   * share of the budget left with them, so a stalled first URL leaves time to fail over to the next.
   */
  function untriedOpenTo(tried: Set<number>): number {
    let count = 0;
    for (let i = 0; i < endpoints.length; i++) if (!tried.has(i) && (endpoints[i].breaker?.admits() ?? true)) count++;
    return count;
  }

  /**
   * One attempt through the endpoint's breaker: `undefined`, without touching the URL, when the
   * breaker is open. Throws only when the caller aborts.
   */
  async function attemptThroughBreaker<TResponse>(
    endpoint: Endpoint,
    payload: unknown,
    method: string,
    callerSignal: AbortSignal | undefined,
    budgetSignal: AbortSignal,
    attemptTimeoutMs: number,
    trace: UpstreamCallTrace | undefined,
  ): Promise<AttemptResult<TResponse> | undefined> {
    const attempt = () =>
      attemptOnce<TResponse>(endpoint, payload, method, callerSignal, budgetSignal, attemptTimeoutMs, trace);
    if (endpoint.breaker === undefined) return attempt();
    const result = await endpoint.breaker.run(async () => {
      const r = await attempt();
      // A scan that outlasts its timeout is most likely too heavy, not the node's fault (see `retryTimeouts`).
      const tooHeavy = !r.ok && r.failure.kind === "timeout" && options.retryTimeouts === false;
      return { result: r, endpointFailed: !r.ok && !tooHeavy && blamesEndpoint(r.failure) };
    });
    return result?.result;
  }

  /** One HTTP exchange under a slot of the cap and the timeout. Throws only when the caller aborts. */
  async function attemptOnce<TResponse>(
    endpoint: Endpoint,
    payload: unknown,
    method: string,
    callerSignal: AbortSignal | undefined,
    budgetSignal: AbortSignal,
    attemptTimeoutMs: number,
    trace: UpstreamCallTrace | undefined,
  ): Promise<AttemptResult<TResponse>> {
    let release: () => void;
    try {
      release = await semaphore.acquire(anySignal(callerSignal, closeSignal, budgetSignal));
    } catch (error) {
      if (callerSignal?.aborted) throw error;
      if (closeSignal.aborted) return { ok: false, failure: { kind: "closed" } };
      // The budget ran out while waiting for a slot: the node was never asked.
      return {
        ok: false,
        failure: { kind: "timeout", retryable: true, endpoint: endpoint.label, budgetSpent: true, queued: true },
      };
    }
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error("upstream attempt timed out")), attemptTimeoutMs);
    const signal = anySignal(callerSignal, closeSignal, timeout.signal);
    const started = performance.now();
    metrics.onCall(method, endpoint.label);
    let outcome: UpstreamOutcome = "ok";
    let rpcErrorCode: number | undefined;
    try {
      const response = (await endpoint.transport<TResponse>({ payload, signal })) as unknown;
      const rpcError = jsonRpcErrorOf(response);
      if (rpcError) {
        if (Number(rpcError.code) === NODE_UNHEALTHY) {
          outcome = "node_unhealthy";
          return { ok: false, failure: { kind: "node_unhealthy", retryable: true, endpoint: endpoint.label } };
        }
        outcome = "rpc_error";
        rpcErrorCode = Number(rpcError.code);
        tagRawRpcError(rpcError);
      } else if (!isJsonRpcResponse(response)) {
        outcome = "bad_response";
        return { ok: false, failure: { kind: "bad_response", retryable: true, endpoint: endpoint.label } };
      } else {
        const result = (response as { result: unknown }).result;
        const mismatch = options.schemas === undefined ? undefined : checkResult(options.schemas, method, result);
        if (mismatch !== undefined) {
          outcome = "invalid_response";
          options.onRefused?.({ method, endpoint: endpoint.label, failure: "invalid_response", ...mismatch });
          return {
            ok: false,
            failure: { kind: "invalid_response", retryable: true, endpoint: endpoint.label, detail: mismatch.path },
          };
        }
        const lie = endpoint.watch?.check(method, payload, result);
        if (lie !== undefined) {
          outcome = "node_lagging";
          options.onRefused?.({
            method,
            endpoint: endpoint.label,
            failure: "node_lagging",
            path: lie.path,
            expected: lie.kind,
          });
          return {
            ok: false,
            failure: { kind: "node_lagging", retryable: true, endpoint: endpoint.label, detail: lie.kind },
          };
        }
      }
      return { ok: true, response: response as TResponse };
    } catch (error) {
      if (callerSignal?.aborted) {
        outcome = "network_error";
        throw callerSignal.reason;
      }
      const failure = classify(error, timeout.signal.aborted, closeSignal.aborted, endpoint.label);
      outcome = outcomeOf(failure);
      if (failure.kind === "response_too_large")
        options.onRefused?.({ method, endpoint: endpoint.label, failure: "response_too_large" });
      return { ok: false, failure };
    } finally {
      clearTimeout(timer);
      release();
      const seconds = (performance.now() - started) / 1000;
      metrics.onResult(method, outcome, seconds, endpoint.label);
      trace?.attempt(endpoint.label, outcome, seconds, rpcErrorCode);
    }
  }
}

/**
 * Whether a failed attempt counts against the URL's breaker: a node that does not answer, answers
 * 5xx or garbage, or says it is unhealthy. A 429 (the provider pacing us) and a 4xx (our request) do
 * not; nor does an attempt that never reached the node (shutdown, no slot before the budget ran out).
 */
function blamesEndpoint(failure: Failure): boolean {
  switch (failure.kind) {
    case "timeout":
      return failure.queued !== true;
    case "network_error":
    case "bad_response":
    case "invalid_response":
    case "response_too_large":
    case "node_lagging":
    case "node_unhealthy":
      return true;
    case "http_error":
      return failure.status === undefined || failure.status === 408 || failure.status >= 500;
    default:
      return false;
  }
}

/** The last failure, marked as the one after which the budget ran out. */
function budgetSpent(last: Failure | undefined): Failure {
  if (last === undefined || last.kind === "closed" || last.kind === "circuit_open")
    return { kind: "timeout", retryable: true, endpoint: "", budgetSpent: true };
  return { ...last, budgetSpent: true };
}

/** When no endpoint was tried because every breaker is open: the soonest a probe will be let through. */
function allOpen(skipped: Failure | undefined, endpoints: readonly Endpoint[]): Failure | undefined {
  if (skipped === undefined || skipped.kind === "closed") return undefined;
  const waits = endpoints.map((e) => e.breaker?.retryAfterMs() ?? 0);
  return {
    kind: "circuit_open",
    retryable: true,
    endpoint: skipped.endpoint,
    retryAfterMs: Math.max(1, Math.min(...waits)),
  };
}

/** What went wrong with one attempt, from what the kit HTTP transport or fetch threw. */
function classify(error: unknown, timedOut: boolean, closed: boolean, endpoint: string): Failure {
  if (closed) return { kind: "closed" };
  if (timedOut) return { kind: "timeout", retryable: true, endpoint };
  if (isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) {
    const status = error.context.statusCode;
    const retryAfterMs = parseRetryAfter(error.context.headers?.get?.("retry-after") ?? null);
    if (status === 429) return { kind: "rate_limited", retryable: true, status, retryAfterMs, endpoint };
    // 408 and 5xx are the server's trouble; other 4xx (auth, payload too large) will not change on retry,
    // though another provider may answer them, hence failover without retrying the same URL.
    const retryable = status === 408 || status >= 500;
    return { kind: "http_error", retryable, status, retryAfterMs, endpoint };
  }
  // Another URL may answer within the limit; the same one asked again would most likely send the same
  // flood (and every try reads up to the limit first), so it is failed over, not retried.
  if (error instanceof ResponseTooLargeError)
    return { kind: "response_too_large", retryable: false, endpoint, detail: String(error.limit) };
  // A 200 whose body is not JSON (a captive proxy, an HTML error page) surfaces as a SyntaxError; JSON nested
  // too deep for the parser's stack as a RangeError.
  if (error instanceof SyntaxError || error instanceof RangeError)
    return { kind: "bad_response", retryable: true, endpoint };
  return { kind: "network_error", retryable: true, endpoint, detail: networkDetail(error) };
}

function outcomeOf(failure: Failure): UpstreamOutcome {
  switch (failure.kind) {
    case "rate_limited":
    case "http_error":
    case "timeout":
    case "network_error":
    case "bad_response":
    case "invalid_response":
    case "response_too_large":
    case "node_lagging":
    case "node_unhealthy":
      return failure.kind;
    default:
      return "network_error";
  }
}

/**
 * Retry-After in milliseconds, from either form HTTP allows (delta-seconds or an HTTP date);
 * undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - Date.now());
}

/** "Equal jitter": half the step fixed, half random, so retries spread out but never fire at once. */
function jittered(stepMs: number, random: () => number): number {
  return stepMs / 2 + random() * (stepMs / 2);
}

function nextUntried(from: number, count: number, tried: Set<number>): number | undefined {
  for (let i = 1; i <= count; i++) {
    const candidate = (from + i) % count;
    if (!tried.has(candidate)) return candidate;
  }
  return undefined;
}

function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}

function methodOf(payload: unknown): string {
  const method = (payload as { method?: unknown } | null)?.method;
  return typeof method === "string" ? method : "unknown";
}

function jsonRpcErrorOf(response: unknown): { code: unknown; message: unknown; data?: unknown } | undefined {
  if (typeof response !== "object" || response === null || !("error" in response)) return undefined;
  const error = (response as { error: unknown }).error;
  return typeof error === "object" && error !== null && "code" in error
    ? (error as { code: unknown; message: unknown })
    : undefined;
}

function isJsonRpcResponse(response: unknown): boolean {
  return typeof response === "object" && response !== null && "result" in response;
}

/** fetch wraps socket errors as `TypeError: fetch failed` with the real one in `cause`. */
/** The system error code of a failed connection (`ECONNREFUSED`, ...): never its message, which names the host. */
function networkDetail(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  if (cause && typeof cause.code === "string" && /^[A-Z_]+$/.test(cause.code)) return cause.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Z_]+$/.test(code) ? code : "network error";
}
