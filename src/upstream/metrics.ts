/**
 * Hooks through which the upstream reports every HTTP attempt it makes. The server wires a
 * prom-client implementation; tests and scripts use {@link noopUpstreamMetrics}.
 */
import type { BreakerState } from "./endpoint-breaker.ts";

/** How one attempt ended. `rpc_error` is a well-formed JSON-RPC error from the node (the call itself worked). */
export type UpstreamOutcome =
  | "ok"
  | "rpc_error"
  | "rate_limited"
  | "http_error"
  | "timeout"
  | "network_error"
  | "bad_response"
  | "invalid_response"
  | "response_too_large"
  | "node_lagging"
  | "node_unhealthy";

/** Receives one `onCall` and then one `onResult` per HTTP attempt (retries are separate attempts). */
export interface UpstreamMetrics {
  /** An attempt is about to be sent. `url` is the endpoint's redacted label (origin only, never a path or an API key). */
  onCall(method: string, url: string): void;
  /** An attempt ended after `seconds`. */
  onResult(method: string, outcome: UpstreamOutcome, seconds: number, url: string): void;
  /** The circuit breaker of endpoint `url` (redacted label) is now in `state` (also called once, `closed`, at creation). */
  onBreakerState?(url: string, state: BreakerState): void;
}

/** Metrics that go nowhere. */
export const noopUpstreamMetrics: UpstreamMetrics = {
  onCall() {},
  onResult() {},
};

/**
 * The label an endpoint is reported and logged under: its origin only, because provider URLs
 * commonly carry an API key in the path or query string.
 */
export function redactUrl(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "invalid-url";
  }
}
