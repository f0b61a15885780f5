/**
 * Hooks through which the upstream reports each call (all its attempts together) for tracing. The
 * upstream module stays free of any tracing library: the server wires an OpenTelemetry implementation
 * (src/server/tracing.ts) when tracing is on, and nothing at all when it is off.
 */
import type { UpstreamOutcome } from "./metrics.ts";

/** Starts the trace of one upstream call. */
export interface UpstreamCallTracer {
  /** A JSON-RPC (or DAS) call of `method` starts; undefined when it is not to be traced (no traced caller). */
  start(method: string): UpstreamCallTrace | undefined;
}

/** The trace of one call, across its attempts. */
export interface UpstreamCallTrace {
  /** One HTTP attempt ended; `endpoint` is the endpoint's redacted label, `rpcErrorCode` a JSON-RPC error's code. */
  attempt(endpoint: string, outcome: UpstreamOutcome, seconds: number, rpcErrorCode?: number): void;
  /** The call ended: with a response (`error` undefined) or with what it throws. */
  end(error?: unknown): void;
}
