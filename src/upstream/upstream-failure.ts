/**
 * The one place where an upstream failure becomes a SolgateError. JSON-RPC errors from the node are
 * not failures here: they reach the cores as kit SolanaErrors (see rpc-errors.ts).
 */
import { SolgateError } from "../errors.ts";

/** Why an attempt (or the whole call) failed. */
export type Failure =
  | { kind: "closed"; retryable?: false; retryAfterMs?: undefined; budgetSpent?: undefined }
  | {
      /** `circuit_open`: every URL's breaker is open, so none was tried. */
      kind:
        | "rate_limited"
        | "http_error"
        | "timeout"
        | "network_error"
        | "bad_response"
        | "invalid_response"
        | "response_too_large"
        | "node_lagging"
        | "node_unhealthy"
        | "circuit_open";
      retryable: boolean;
      /** Redacted endpoint label. */
      endpoint: string;
      status?: number;
      retryAfterMs?: number;
      detail?: string;
      /** The call's time budget ran out after this failure. */
      budgetSpent?: boolean;
      /** A timeout spent waiting for a slot of the concurrency cap, before any request was sent. */
      queued?: boolean;
    };

/** What the client is told to wait when the upstream gave no Retry-After. */
const SUGGESTED_RETRY_MS = 1000;

/**
 * Maps the last failure of a call, after retries, to the error the client sees:
 * HTTP 429 -> RATE_LIMITED; everything else (5xx, timeouts, resets, unhealthy nodes, open breakers, a spent
 * time budget, closed) -> UPSTREAM_UNAVAILABLE: the gateway's budget running out is the upstream's failure, not
 * the client's deadline, so it is UNAVAILABLE (safe to retry) rather than DEADLINE_EXCEEDED.
 * Both carry `retryAfterMs`. Endpoints never appear, not even their origin: URLs may carry API keys,
 * and which provider a gateway uses, and where, is not the client's business (logs and metrics name
 * the endpoint's redacted label).
 */
export function toSolgateError(
  failure: Failure,
  method: string,
  chain: string,
  call: { budgetMs?: number } = {},
): SolgateError {
  if (failure.kind === "closed") {
    return new SolgateError(
      "UPSTREAM_UNAVAILABLE",
      `the ${chain} upstream is shutting down`,
      { chain, method, retryAfterMs: SUGGESTED_RETRY_MS },
      { retryAfterMs: SUGGESTED_RETRY_MS },
    );
  }
  const retryAfterMs = failure.retryAfterMs ?? SUGGESTED_RETRY_MS;
  const details: Record<string, unknown> = { chain, method, retryAfterMs, failure: failure.kind };
  if (failure.status !== undefined) details.status = failure.status;
  // Rate limiting is the more useful thing to say, budget or not: the client learns how long to wait.
  if (failure.kind === "rate_limited") {
    return new SolgateError(
      "RATE_LIMITED",
      `the ${chain} upstream is rate-limiting ${method} calls; retry in ${retryAfterMs} ms`,
      details,
      { retryAfterMs },
    );
  }
  // An answer refused at the boundary says so, whether or not the budget ran out after it: the client
  // learns the node answered, but with something that could not be trusted.
  if (failure.kind === "invalid_response" || failure.kind === "response_too_large") {
    if (failure.kind === "invalid_response" && failure.detail !== undefined) details.path = failure.detail;
    if (failure.kind === "response_too_large") details.limit = Number(failure.detail);
    return new SolgateError(
      "UPSTREAM_INVALID_RESPONSE",
      `the ${chain} upstream answered ${method} with ${describe(failure)}`,
      details,
      { retryAfterMs },
    );
  }
  if (failure.budgetSpent === true && call.budgetMs !== undefined) {
    details.budgetMs = call.budgetMs;
    details.failure = "budget_spent";
    details.lastFailure = failure.kind;
    return new SolgateError(
      "UPSTREAM_UNAVAILABLE",
      `the ${chain} upstream did not answer ${method} within ${call.budgetMs} ms (last attempt: ${describe(failure)})`,
      details,
      { retryAfterMs },
    );
  }
  return new SolgateError(
    "UPSTREAM_UNAVAILABLE",
    `the ${chain} upstream did not answer ${method}: ${describe(failure)}`,
    details,
    { retryAfterMs },
  );
}

function describe(failure: Exclude<Failure, { kind: "closed" }>): string {
  switch (failure.kind) {
    case "timeout":
      return "timed out";
    case "http_error":
      return `HTTP ${failure.status}`;
    case "network_error":
      return `connection failed (${failure.detail ?? "network error"})`;
    case "bad_response":
      return "the response was not JSON-RPC";
    case "node_unhealthy":
      return "the node reports itself unhealthy";
    case "invalid_response":
      return "an answer that does not fit the method's schema";
    case "response_too_large":
      return `an answer larger than the limit of ${failure.detail} bytes`;
    case "node_lagging":
      return `a slot the node cannot be at (${failure.detail}); it is lagging or lying`;
    case "circuit_open":
      return "every node has failed repeatedly; calls resume after a cool-down";
    default:
      return failure.kind;
  }
}
