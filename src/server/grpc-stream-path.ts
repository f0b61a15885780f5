/**
 * A lean path for long-lived gRPC server streams (WatchStatus). connect-node holds about 44 KB of heap
 * per open stream where a raw HTTP/2 stream holds about 2 KB (test/bench/stream-memory-bench.ts), so
 * 10,000 watchers cost ~700 MB through the router. This pre-handler serves binary gRPC calls of the
 * given server-streaming methods straight on the HTTP/2 stream, with Connect's own gRPC helpers
 * (envelopes, content types, trailer status), and does for them what the interceptors do: auth, error
 * mapping, drain, logging and metrics, and the contract's validation rules. gRPC-Web, Connect and
 * gRPC-JSON calls still go to the router. A message a service marks as shared (WatchFees' events, one
 * per slot for every watch) is encoded once and its bytes written to every stream.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import type { DescMessage, DescMethodServerStreaming, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { parseContentType, parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { toConnectError } from "../errors.ts";
import type { ApiKeyChecker } from "./auth.ts";
import type { RateLimiter } from "./rate-limit.ts";
import type { NodeRequest, PreHandler } from "./http-handler.ts";
import { codeName, shuttingDownError } from "./interceptors.ts";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";
import { REQUEST_ID_HEADER } from "./request-id.ts";
import { decodeRequest, MAX_TIMER_MS } from "./request-gate.ts";
import { assertValidRequest } from "../request-validation.ts";
import { isSharedResponse } from "../services/shared-response.ts";
import type { RpcSpan, Tracing } from "./tracing.ts";

/** One server-streaming method served on the lean path. */
export interface StreamRoute<I extends DescMessage = DescMessage, O extends DescMessage = DescMessage> {
  readonly method: DescMethodServerStreaming<I, O>;
  /** The messages of one call; ends when the stream should end; `signal` aborts when the call does. */
  readonly handle: (request: MessageShape<I>, signal: AbortSignal) => AsyncIterable<MessageInitShape<O>>;
}

/** Declares a route with its method's types checked, stored as a plain {@link StreamRoute}. */
export function streamRoute<I extends DescMessage, O extends DescMessage>(route: StreamRoute<I, O>): StreamRoute {
  return route as unknown as StreamRoute;
}

/** Options of {@link createGrpcStreamPath}. */
export interface GrpcStreamPathOptions {
  readonly routes: readonly StreamRoute[];
  readonly auth: ApiKeyChecker;
  /** Per-key rate limits, counted as on every other path. */
  readonly rateLimiter?: RateLimiter;
  readonly logger: Logger;
  readonly metrics?: Metrics;
  /** Spans for these calls too; absent when tracing is off. */
  readonly tracing?: Tracing;
  /** Aborts when the server drains: open streams end with UNAVAILABLE and a retry hint. */
  readonly drain: AbortSignal;
  /** Largest request message accepted, in bytes. */
  readonly readMaxBytes: number;
}

/** Builds the pre-handler. */
export function createGrpcStreamPath(options: GrpcStreamPathOptions): PreHandler {
  const byPath = new Map(options.routes.map((r) => [`/${r.method.parent.typeName}/${r.method.name}`, r]));
  return (req, res) => {
    if (req.httpVersionMajor !== 2 || req.method !== "POST") return false;
    const route = byPath.get(req.url ?? "");
    if (route === undefined) return false;
    const contentType = parseContentType(headerOf(req, "content-type") ?? null);
    const encoding = headerOf(req, "grpc-encoding");
    // JSON payloads and compressed requests are rare: the router handles them in full.
    if (contentType === undefined || !contentType.binary || (encoding !== undefined && encoding !== "identity"))
      return false;
    if (options.tracing === undefined) {
      void serve(route, req as Http2ServerRequest, res as Http2ServerResponse, options, undefined);
      return true;
    }
    const span = options.tracing.startRpc({
      service: route.method.parent.typeName,
      method: route.method.name,
      system: "grpc",
      headers: req.headers,
    });
    void span.run(() => serve(route, req as Http2ServerRequest, res as Http2ServerResponse, options, span));
    return true;
  };
}

function headerOf(req: NodeRequest, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
}

async function serve(
  route: StreamRoute,
  req: Http2ServerRequest,
  res: Http2ServerResponse,
  options: GrpcStreamPathOptions,
  span: RpcSpan | undefined,
): Promise<void> {
  const started = performance.now();
  const call = new AbortController();
  const { drain } = options;
  let drained = false;
  let deadlineHit = false;
  const onDrain = () => {
    drained = true;
    call.abort();
  };
  const onClose = () => call.abort();
  drain.addEventListener("abort", onDrain, { once: true });
  res.once("close", onClose);
  let timer: NodeJS.Timeout | undefined;
  let error: ConnectError | undefined;
  const closeStream = options.metrics?.streamOpened(route.method.parent.typeName, route.method.name, "grpc-lean");
  try {
    if (drain.aborted) throw shuttingDownError();
    const keyName = options.auth.assertAuthorized(headerOf(req, "authorization"));
    await options.rateLimiter?.consume(keyName);
    const timeout = parseTimeout(headerOf(req, "grpc-timeout") ?? null, Number.MAX_SAFE_INTEGER);
    if (timeout.error) throw timeout.error;
    // A deadline beyond Node's timers (MAX_TIMER_MS) is no deadline: the timer would fire at once.
    if (timeout.timeoutMs !== undefined && timeout.timeoutMs <= MAX_TIMER_MS) {
      timer = setTimeout(() => {
        deadlineHit = true;
        call.abort();
      }, timeout.timeoutMs);
    }
    const input = decodeRequest(route.method.input, await readRequest(req, options.readMaxBytes));
    assertValidRequest(route.method.input, input);
    for await (const message of route.handle(input, call.signal)) {
      if (call.signal.aborted) break;
      if (!res.headersSent)
        res.writeHead(200, { "content-type": "application/grpc+proto", "grpc-accept-encoding": "identity" });
      // Backpressure: the next message is not pulled until the client has taken this one, so a slow reader
      // holds one message here, not an ever-growing buffer (WatchFees skips it to the newest estimate).
      if (!res.write(envelopeOf(route.method.output, message))) await writable(res, call.signal);
    }
    if (drained) error = shuttingDownError();
    else if (deadlineHit) error = new ConnectError("the deadline passed", Code.DeadlineExceeded);
    else if (call.signal.aborted) error = new ConnectError("stream abandoned by the client", Code.Canceled);
  } catch (e) {
    error = drained
      ? shuttingDownError()
      : toConnectError(e, (unexpected) => options.logger.error({ err: unexpected }, "unexpected error"));
  } finally {
    clearTimeout(timer);
    closeStream?.();
    drain.removeEventListener("abort", onDrain);
    res.off("close", onClose);
  }
  finish(res, error);
  span?.end(error);
  const code = error === undefined ? "ok" : codeName(error.code);
  const seconds = (performance.now() - started) / 1000;
  options.metrics?.observeRpc(route.method.parent.typeName, route.method.name, code, seconds);
  options.logger.info(
    {
      requestId: headerOf(req, REQUEST_ID_HEADER),
      procedure: `${route.method.parent.typeName}/${route.method.name}`,
      protocol: "grpc",
      code,
      durationMs: Math.round(seconds * 10_000) / 10,
      ...(error === undefined ? {} : { error: error.rawMessage }),
    },
    "rpc",
  );
}

/** Resolves when `res` drains, closes, or `signal` aborts. */
function writable(res: Http2ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    if (signal.aborted) return resolve();
    res.once("drain", done);
    res.once("close", done);
    signal.addEventListener("abort", done, { once: true });
  });
}

// Enveloped bytes of shared messages, kept as long as the message is.
const sharedEnvelopes = new WeakMap<object, Uint8Array>();

function envelopeOf(output: DescMessage, message: MessageInitShape<DescMessage>): Uint8Array {
  const shared = isSharedResponse(message);
  if (shared) {
    const bytes = sharedEnvelopes.get(message);
    if (bytes !== undefined) return bytes;
  }
  const bytes = encodeEnvelope(0, toBinary(output, create(output, message)));
  if (shared) sharedEnvelopes.set(message, bytes);
  return bytes;
}

/** Ends the call: status in trailers, or in the headers alone (trailers-only) when nothing was sent. */
function finish(res: Http2ServerResponse, error: ConnectError | undefined): void {
  if (res.stream.destroyed || res.writableEnded) return;
  const status: Record<string, string> = {};
  setTrailerStatus(new Headers(), error).forEach((value, key) => {
    status[key] = value;
  });
  if (!res.headersSent) {
    // Trailers-only: one HEADERS frame that ends the stream, as strict clients (grpc-go) require; the
    // compat API would follow the headers with an empty DATA frame to end it.
    const headers: Record<string, string | number | string[]> = {};
    for (const [name, value] of Object.entries(res.getHeaders())) if (value !== undefined) headers[name] = value;
    res.stream.respond(
      { ...headers, ":status": 200, "content-type": "application/grpc+proto", ...status },
      { endStream: true },
    );
    return;
  }
  res.addTrailers(status);
  res.end();
}

/** Reads the one enveloped request message of a server-streaming call. */
async function readRequest(req: Http2ServerRequest, readMaxBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > readMaxBytes + 5)
      throw new ConnectError(`request is over ${readMaxBytes} bytes`, Code.ResourceExhausted);
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks);
  if (body.length < 5) throw new ConnectError("request has no message", Code.InvalidArgument);
  if (body[0] !== 0) throw new ConnectError("compressed request without grpc-encoding", Code.InvalidArgument);
  const length = body.readUInt32BE(1);
  if (length !== body.length - 5) throw new ConnectError("request must hold exactly one message", Code.InvalidArgument);
  return body.subarray(5);
}
