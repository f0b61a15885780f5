/**
 * OpenTelemetry traces: a SERVER span per RPC on every path (the router's interceptor, the lean gRPC
 * stream path, the REST transcoder and its SSE watch), parented by the caller's W3C `traceparent`,
 * and a CLIENT span per upstream JSON-RPC call beneath it (context carried by AsyncLocalStorage).
 *
 * Built only when tracing is configured: with it off, the server adds no interceptor, the upstream no
 * wrapper, and no provider or context manager exists, so a request builds no span object at all.
 * The provider is this gateway's own (not the global one), so tests can run several gateways at once;
 * only the AsyncLocalStorage context manager is process-wide, as the API requires.
 */
import type { IncomingHttpHeaders } from "node:http";
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Attributes, Context, Span, TextMapGetter, Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
} from "@opentelemetry/semantic-conventions";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Interceptor, StreamResponse } from "@connectrpc/connect";
import { isSolgateError, reasonOf } from "../errors.ts";
import type { UpstreamCallTrace, UpstreamCallTracer } from "../upstream/call-tracer.ts";
import { codeName, VIA_HEADER } from "./interceptors.ts";
import { REQUEST_ID_HEADER } from "./request-id.ts";

// RPC attribute names from the incubating semantic conventions, which their package asks users to copy
// rather than import (they may change in minor releases).
const ATTR_RPC_SYSTEM = "rpc.system";
const ATTR_RPC_SERVICE = "rpc.service";
const ATTR_RPC_METHOD = "rpc.method";
const ATTR_RPC_GRPC_STATUS_CODE = "rpc.grpc.status_code";
const ATTR_RPC_CONNECT_RPC_ERROR_CODE = "rpc.connect_rpc.error_code";
const ATTR_RPC_JSONRPC_VERSION = "rpc.jsonrpc.version";
const ATTR_RPC_JSONRPC_ERROR_CODE = "rpc.jsonrpc.error_code";
/** Solgate's own attributes. */
export const ATTR_REQUEST_ID = "solgate.request_id";
export const ATTR_ERROR_REASON = "solgate.error.reason";
export const ATTR_CHAIN = "solgate.chain";
export const ATTR_UPSTREAM_ENDPOINT = "solgate.upstream.endpoint";
export const ATTR_UPSTREAM_ATTEMPTS = "solgate.upstream.attempts";
export const ATTR_UPSTREAM_OUTCOME = "solgate.upstream.outcome";

/** How an RPC reached the server, for `rpc.system`. */
export type RpcSystem = "grpc" | "connect_rpc";

/** Options of {@link createTracing}. */
export interface TracingOptions {
  serviceName: string;
  serviceVersion?: string;
  /** OTLP/HTTP (protobuf) traces URL; ignored when `spanProcessor` is given. */
  tracesUrl?: string;
  /** Where finished spans go instead of the OTLP exporter (tests: a SimpleSpanProcessor over an InMemorySpanExporter). */
  spanProcessor?: SpanProcessor;
  /** Ratio of new traces kept (default 1); a caller's sampled flag always wins. */
  sampleRatio?: number;
}

/** One RPC's span, for paths outside the router (the lean gRPC stream path). */
export interface RpcSpan {
  /** Runs `fn` with this span active, so upstream calls become its children. */
  run<T>(fn: () => T): T;
  /** Ends the span with the RPC's outcome. */
  end(error?: unknown): void;
}

/** A REST request's span (HTTP semantic conventions). */
export interface HttpSpan {
  run<T>(fn: () => T): T;
  /** The route template matched (`/v1/{chain}/network/fees`): names the span. */
  route(template: string): void;
}

/** Tracing for one gateway. */
export interface Tracing {
  /** RPC spans for everything the Connect router serves; goes outermost. */
  readonly interceptor: Interceptor;
  /** Starts the span of an RPC served outside the router. */
  startRpc(options: { service: string; method: string; system: RpcSystem; headers: IncomingHttpHeaders }): RpcSpan;
  /** Starts a REST request's span; it ends when the response closes. */
  startHttp(
    req: { method?: string; headers: IncomingHttpHeaders },
    res: { statusCode: number; once(event: "close", fn: () => void): unknown },
  ): HttpSpan;
  /** The upstream hooks of one chain. */
  upstreamFor(chain: string): UpstreamCallTracer;
  /** Flushes spans not yet exported and stops the exporter. */
  shutdown(): Promise<void>;
}

let contextManagerInstalled = false;

/** Builds tracing (call only when it is configured). */
export function createTracing(options: TracingOptions): Tracing {
  if (!contextManagerInstalled) {
    // Process-wide by the API's design; installed once, on the first gateway that traces.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerInstalled = true;
  }
  const processor =
    options.spanProcessor ??
    new BatchSpanProcessor(
      new OTLPTraceExporter({ ...(options.tracesUrl === undefined ? {} : { url: options.tracesUrl }) }),
    );
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({
        [ATTR_SERVICE_NAME]: options.serviceName,
        ...(options.serviceVersion === undefined ? {} : { [ATTR_SERVICE_VERSION]: options.serviceVersion }),
      }),
    ),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio ?? 1) }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer("solgate");
  const propagator = new W3CTraceContextPropagator();

  /** The caller's context from `traceparent`/`tracestate`, on top of `base`. */
  const extract = <C>(base: Context, carrier: C, getter: TextMapGetter<C>) => propagator.extract(base, carrier, getter);

  return {
    interceptor: createTracingInterceptor(tracer, extract),
    startRpc({ service, method, system, headers }) {
      const parent = extract(ROOT_CONTEXT, headers, nodeHeadersGetter);
      const span = tracer.startSpan(
        `${service}/${method}`,
        {
          kind: SpanKind.SERVER,
          attributes: rpcAttributes(system, service, method, headerOf(headers, REQUEST_ID_HEADER)),
        },
        parent,
      );
      const active = trace.setSpan(parent, span);
      return {
        run: (fn) => context.with(active, fn),
        end(error) {
          endRpcSpan(span, system, error);
        },
      };
    },
    startHttp(req, res) {
      const parent = extract(ROOT_CONTEXT, req.headers, nodeHeadersGetter);
      const method = req.method ?? "GET";
      const span = tracer.startSpan(
        method,
        {
          kind: SpanKind.SERVER,
          attributes: {
            [ATTR_HTTP_REQUEST_METHOD]: method,
            [ATTR_REQUEST_ID]: headerOf(req.headers, REQUEST_ID_HEADER),
          },
        },
        parent,
      );
      res.once("close", () => {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
        // Server spans are errors for 5xx only; 4xx is the client's (HTTP semantic conventions).
        if (res.statusCode >= 500) {
          span.setAttribute(ATTR_ERROR_TYPE, String(res.statusCode));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      });
      const active = trace.setSpan(parent, span);
      return {
        run: (fn) => context.with(active, fn),
        route(template) {
          span.setAttribute(ATTR_HTTP_ROUTE, template);
          span.updateName(`${method} ${template}`);
        },
      };
    },
    upstreamFor: (chain) => createUpstreamTracer(tracer, chain),
    async shutdown() {
      await provider.shutdown();
    },
  };
}

/** Spans for the router: the caller's context (or, for REST in process, the REST span) as parent. */
function createTracingInterceptor(
  tracer: Tracer,
  extract: <C>(base: Context, carrier: C, getter: TextMapGetter<C>) => Context,
): Interceptor {
  return (next) => async (req) => {
    const service = req.service.typeName;
    const method = req.method.name;
    const contentType = req.header.get("content-type");
    const inProcess = req.header.get(VIA_HEADER) === "rest";
    // A REST call arrives in process as binary Connect, under the REST request's span.
    const system: RpcSystem = !inProcess && contentType?.startsWith("application/grpc") ? "grpc" : "connect_rpc";
    const parent = inProcess ? context.active() : extract(ROOT_CONTEXT, req.header, fetchHeadersGetter);
    const span = tracer.startSpan(
      `${service}/${method}`,
      {
        kind: inProcess ? SpanKind.INTERNAL : SpanKind.SERVER,
        attributes: rpcAttributes(system, service, method, req.header.get(REQUEST_ID_HEADER) ?? undefined),
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await context.with(active, () => next(req));
    } catch (e) {
      endRpcSpan(span, system, e);
      throw e;
    }
    if (!res.stream) {
      endRpcSpan(span, system, undefined);
      return res;
    }
    return {
      ...res,
      message: streamUnder(active, res.message, (error) => endRpcSpan(span, system, error)),
    } as StreamResponse;
  };
}

/**
 * A server stream's messages, each pulled with the RPC's context active (the handler's generator runs
 * in whoever pulls it, and its upstream calls must land under the RPC span); `done` once it ends.
 */
async function* streamUnder<T>(
  active: Context,
  source: AsyncIterable<T>,
  done: (error: unknown) => void,
): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let outcome: unknown = new ConnectError("stream abandoned by the client", Code.Canceled);
  try {
    for (;;) {
      const step = await context.with(active, () => it.next());
      if (step.done) break;
      yield step.value;
    }
    outcome = undefined;
  } catch (e) {
    outcome = e;
    throw e;
  } finally {
    if (outcome !== undefined) void Promise.resolve(it.return?.()).catch(() => {});
    done(outcome);
  }
}

function rpcAttributes(system: RpcSystem, service: string, method: string, requestId: string | undefined): Attributes {
  return {
    [ATTR_RPC_SYSTEM]: system,
    [ATTR_RPC_SERVICE]: service,
    [ATTR_RPC_METHOD]: method,
    ...(requestId === undefined ? {} : { [ATTR_REQUEST_ID]: requestId }),
  };
}

/**
 * Records the outcome: the status code, and for an error the ERROR status with the ErrorInfo reason
 * (never the message, which may quote what the client sent).
 */
function endRpcSpan(span: Span, system: RpcSystem, error: unknown): void {
  if (error === undefined) {
    if (system === "grpc") span.setAttribute(ATTR_RPC_GRPC_STATUS_CODE, 0);
  } else {
    const connectError = ConnectError.from(error);
    const code = codeName(connectError.code);
    const reason = reasonOf(connectError) ?? code;
    if (system === "grpc") span.setAttribute(ATTR_RPC_GRPC_STATUS_CODE, connectError.code);
    else span.setAttribute(ATTR_RPC_CONNECT_RPC_ERROR_CODE, code);
    span.setAttribute(ATTR_ERROR_TYPE, reason);
    span.setAttribute(ATTR_ERROR_REASON, reason);
    span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
  }
  span.end();
}

/**
 * Upstream spans: one per call under the active RPC span (none without one: the fee follower and the
 * status poller run on their own and would otherwise make a root trace per tick), its attempts as events.
 */
function createUpstreamTracer(tracer: Tracer, chain: string): UpstreamCallTracer {
  return {
    start(method) {
      const parent = context.active();
      if (!trace.getSpan(parent)?.isRecording()) return undefined;
      const span = tracer.startSpan(
        method,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            [ATTR_RPC_SYSTEM]: "jsonrpc",
            [ATTR_RPC_METHOD]: method,
            [ATTR_RPC_JSONRPC_VERSION]: "2.0",
            [ATTR_CHAIN]: chain,
          },
        },
        parent,
      );
      let attempts = 0;
      let endpoint: string | undefined;
      let outcome = "ok";
      let rpcErrorCode: number | undefined;
      const trace_: UpstreamCallTrace = {
        attempt(label, attemptOutcome, seconds, code) {
          attempts++;
          endpoint = label;
          outcome = attemptOutcome;
          rpcErrorCode = code;
          span.addEvent("attempt", {
            [ATTR_UPSTREAM_ENDPOINT]: label,
            [ATTR_UPSTREAM_OUTCOME]: attemptOutcome,
            "solgate.upstream.seconds": seconds,
          });
        },
        end(error) {
          span.setAttribute(ATTR_UPSTREAM_ATTEMPTS, attempts);
          if (endpoint !== undefined) span.setAttribute(ATTR_UPSTREAM_ENDPOINT, endpoint);
          if (rpcErrorCode !== undefined && Number.isFinite(rpcErrorCode))
            span.setAttribute(ATTR_RPC_JSONRPC_ERROR_CODE, rpcErrorCode);
          if (error !== undefined) {
            // A caller that gave up (its RPC ended) is not the node's failure.
            const reason = isSolgateError(error)
              ? error.reason
              : error instanceof Error && error.name === "AbortError"
                ? "aborted"
                : outcome;
            span.setAttribute(ATTR_UPSTREAM_OUTCOME, reason === "aborted" ? "aborted" : outcome);
            span.setAttribute(ATTR_ERROR_TYPE, reason);
            span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
          } else {
            span.setAttribute(ATTR_UPSTREAM_OUTCOME, outcome);
            // A JSON-RPC error is an answer, but an error one (OTel marks failed client calls ERROR).
            if (outcome === "rpc_error") span.setStatus({ code: SpanStatusCode.ERROR, message: "rpc_error" });
          }
          span.end();
        },
      };
      return trace_;
    },
  };
}

const nodeHeadersGetter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

const fetchHeadersGetter: TextMapGetter<Headers> = {
  keys: (carrier) => {
    const names: string[] = [];
    carrier.forEach((_, name) => names.push(name));
    return names;
  },
  get: (carrier, key) => carrier.get(key) ?? undefined,
};

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === "string" ? value : undefined;
}
