/**
 * The lean unary path: plain unary calls over gRPC (HTTP/2), gRPC-Web and Connect (POST, binary or JSON),
 * served without connect-node's per-call machinery — a universal request with a copied header object and
 * a URL parsed per call, an async-iterable body, a handler context with a linked abort controller and a
 * deadline signal, an interceptor chain composed per call, an async-iterable response — which cost a cached
 * gRPC read about 8 × what node:http2 needs to answer it (docs/benchmarks.md, "The hot path").
 *
 * A call here goes to the method's implementation through the router's own interceptors (the unary invoker,
 * as REST does), so auth, rate limits, logs, metrics, tracing, validation and error mapping are the same on
 * every path; the wire work uses Connect's own protocol helpers (serialization, envelopes, timeouts, trailer
 * status, error JSON, compression negotiation). What this path does not take, the router serves in full, so
 * every answer is what Connect would give:
 * - other content types (gRPC-JSON, gRPC-Web text, Connect streams), Connect GET, gRPC over HTTP/1.1,
 *   compressed requests, timeout headers that do not parse, and calls without a valid key (the router refuses
 *   them without reading the body) never reach the body here;
 * - a body that is not exactly one well-formed message within the read limit is handed to the router with
 *   the bytes read, and the router gives its answer (RESOURCE_EXHAUSTED, INVALID_ARGUMENT, ...).
 * The Connect conformance suite runs against this path in CI (test/conformance).
 */
import { toBinary } from "@bufbuild/protobuf";
import type { DescMessage, DescMethodUnary, JsonReadOptions, JsonWriteOptions, Message } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import {
  compressionNegotiate,
  createMethodSerializationLookup,
  encodeEnvelope,
  mergeNonProtocolHeaders,
} from "@connectrpc/connect/protocol";
import type { Compression, MethodSerializationLookup } from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  errorToJsonBytes,
  parseTimeout as parseConnectTimeout,
  trailerMux,
} from "@connectrpc/connect/protocol-connect";
import { parseTimeout as parseGrpcTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { trailerFlag, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";
import type { OutgoingHttpHeaders } from "node:http";
import type { IncomingHttpHeaders } from "node:http2";
import type { ApiKeyChecker } from "./auth.ts";
import { CHECKED_KEY, PUBLIC_SERVICES } from "./auth.ts";
import type { NodeRequest, NodeResponse, PreHandler } from "./http-handler.ts";
import { requestHeaders } from "./lazy-headers.ts";
import { MAX_TIMER_MS } from "./request-gate.ts";
import { CallContext } from "./unary-invoker.ts";
import type { UnaryInvoker } from "./unary-invoker.ts";
import { writeNow } from "./turn-writer.ts";
import type { TurnWriter } from "./turn-writer.ts";

/** Hands a request to the router, with the body bytes already read from it (if any). */
export type RouterFallback = (req: NodeRequest, res: NodeResponse, body?: Uint8Array) => void;

/** Options of {@link createUnaryPath}. */
export interface UnaryPathOptions {
  /** The methods served here (each served by `invoker`). */
  readonly methods: readonly DescMethodUnary[];
  readonly invoker: UnaryInvoker;
  readonly auth: ApiKeyChecker;
  /** The router: what this path does not take, and bodies it does not decode. */
  readonly fallback: RouterFallback;
  /** Largest request message accepted, in bytes (the router's). */
  readonly readMaxBytes: number;
  /** Response compressions offered (the router's), used as the router uses them. */
  readonly compressions: readonly Compression[];
  /** Responses smaller than this are sent uncompressed; Connect's default is 1 KiB. */
  readonly compressMinBytes?: number;
  /** The router's JSON options (a type registry for `Any`), for Connect JSON messages and errors. */
  readonly jsonOptions?: Partial<JsonReadOptions & JsonWriteOptions>;
  /** Writes each answer; default at once. The server's writes them at the end of the turn (turn-writer.ts). */
  readonly writer?: TurnWriter;
}

type Protocol = "grpc" | "grpc_web" | "connect";

/** A request content type this path takes: its protocol, codec, and the content type it answers with. */
interface Wire {
  readonly protocol: Protocol;
  readonly binary: boolean;
  readonly contentType: string;
}

const GRPC: Wire = { protocol: "grpc", binary: true, contentType: "application/grpc+proto" };
const GRPC_WEB: Wire = { protocol: "grpc_web", binary: true, contentType: "application/grpc-web+proto" };
const CONNECT_PROTO: Wire = { protocol: "connect", binary: true, contentType: "application/proto" };
const CONNECT_JSON: Wire = { protocol: "connect", binary: false, contentType: "application/json" };

/** Exact request content types (as clients send them); any other spelling goes to the router. */
const WIRES = new Map<string, Wire>([
  ["application/grpc", GRPC],
  ["application/grpc+proto", GRPC],
  ["application/grpc-web", GRPC_WEB],
  ["application/grpc-web+proto", GRPC_WEB],
  ["application/proto", CONNECT_PROTO],
  ["application/json", CONNECT_JSON],
  ["application/json; charset=utf-8", CONNECT_JSON],
  ["application/json;charset=utf-8", CONNECT_JSON],
]);

/** One method as this path serves it. */
interface Route {
  readonly method: DescMethodUnary;
  readonly path: string;
  readonly isPublic: boolean;
  readonly serialization: MethodSerializationLookup<DescMessage, DescMessage>;
}

/** What a call needs once its body is in. */
interface Call {
  readonly route: Route;
  readonly jsonOptions: Partial<JsonWriteOptions> | undefined;
  readonly wire: Wire;
  readonly req: NodeRequest;
  readonly res: NodeResponse;
  readonly keyName: string | undefined;
  readonly timeoutMs: number | undefined;
}

/** The lean unary path: its pre-handler, and which requests it may take, told from their headers alone. */
export interface UnaryPath {
  readonly handle: PreHandler;
  /** A POST to one of its methods in a content type it takes (an HTTP/2 exchange may carry it: h2-exchange.ts). */
  takes(headers: IncomingHttpHeaders): boolean;
}

/**
 * Builds the path.
 *
 * Long (~170 lines): the route table built once and the per-request steps that read it are one hot path,
 * kept in one closure.
 */
export function createUnaryPath(options: UnaryPathOptions): UnaryPath {
  const { invoker, auth, fallback, readMaxBytes, compressions } = options;
  const compressMinBytes = options.compressMinBytes ?? 1024;
  const writer = options.writer ?? writeNow;
  const send = (
    call: Call,
    context: CallContext,
    bytes: Uint8Array | undefined,
    compression: Compression | null,
    error: ConnectError | undefined,
  ) => writer(call.res, () => write(call, context, bytes, compression, error));
  const routes = new Map<string, Route>();
  for (const method of options.methods) {
    const path = `/${method.parent.typeName}/${method.name}`;
    routes.set(path, {
      method,
      path,
      isPublic: PUBLIC_SERVICES.has(method.parent.typeName),
      serialization: createMethodSerializationLookup(method, undefined, options.jsonOptions, {
        readMaxBytes,
        writeMaxBytes: Number.MAX_SAFE_INTEGER,
      }),
    });
  }
  // The most a body may hold: one message at the limit, plus its envelope's five bytes.
  const bodyMaxBytes = readMaxBytes + 5;

  const serve = (call: Call, body: Uint8Array): void => {
    const { route, wire, req, res } = call;
    let payload: Uint8Array = body;
    if (wire.protocol !== "connect") {
      // Exactly one uncompressed message, or the router says what is wrong with it.
      if (body.length < 5 || body[0] !== 0 || readLength(body) !== body.length - 5) {
        fallback(req, res, body);
        return;
      }
      payload = body.subarray(5);
    }
    let input: Message;
    try {
      input = route.serialization.getI(wire.binary).parse(payload) as Message;
    } catch {
      fallback(req, res, body);
      return;
    }
    const abort = new AbortController();
    const values = createContextValues();
    if (call.keyName !== undefined) values.set(CHECKED_KEY, call.keyName);
    let timer: NodeJS.Timeout | undefined;
    let deadline: number | undefined;
    if (call.timeoutMs !== undefined) {
      deadline = Date.now() + call.timeoutMs;
      if (call.timeoutMs <= 0) abort.abort(timedOut());
      else timer = setTimeout(onDeadline, call.timeoutMs, abort);
    }
    const authority = (req.headers[":authority"] ?? req.headers.host) as string | undefined;
    const context = new CallContext(
      route.method,
      `http://${authority ?? "localhost"}${route.path}`,
      abort.signal,
      requestHeaders(req.headers),
      values,
      wire.protocol === "grpc_web" ? "grpc-web" : wire.protocol,
      "POST",
      deadline,
    );
    // The client going away cancels the call (its signal aborts with CANCELED); a finished call needs nothing.
    const onClose = () => {
      if (!res.writableEnded) abort.abort(new ConnectError("the client closed the request", Code.Canceled));
    };
    res.once("close", onClose);
    invoker.call(route.method, input, context).then(
      (output) => {
        clearTimeout(timer);
        res.off("close", onClose);
        answer(call, context, output, undefined);
      },
      (reason: unknown) => {
        clearTimeout(timer);
        res.off("close", onClose);
        const error =
          reason instanceof ConnectError
            ? reason
            : new ConnectError("internal error", Code.Internal, undefined, undefined, reason);
        answer(call, context, undefined, error);
      },
    );
  };

  const answer = (call: Call, context: CallContext, output: Message | undefined, error: ConnectError | undefined) => {
    if (call.res.destroyed || call.res.writableEnded) return;
    const acceptHeader =
      call.wire.protocol === "connect" ? call.req.headers["accept-encoding"] : call.req.headers["grpc-accept-encoding"];
    let compression: Compression | null = null;
    if (acceptHeader !== undefined && output !== undefined && compressions.length > 0) {
      const negotiated = compressionNegotiate(
        [...compressions],
        null,
        Array.isArray(acceptHeader) ? acceptHeader.join(",") : acceptHeader,
        call.wire.protocol === "connect" ? "accept-encoding" : "grpc-accept-encoding",
      );
      compression = negotiated.response;
    }
    let bytes: Uint8Array | undefined;
    if (output !== undefined) {
      try {
        bytes = encoded(call.route, call.wire.binary, output);
      } catch (reason) {
        // As connect answers an output it cannot serialize (an Any of a type not in the JSON registry).
        send(call, context, undefined, null, ConnectError.from(reason, Code.Internal));
        return;
      }
    }
    if (compression !== null && bytes !== undefined && bytes.length >= compressMinBytes) {
      compression.compress(bytes).then(
        (compressed) => send(call, context, compressed, compression, error),
        (reason: unknown) =>
          send(
            call,
            context,
            undefined,
            null,
            new ConnectError("compression failed", Code.Internal, undefined, undefined, reason),
          ),
      );
      return;
    }
    send(call, context, bytes, null, error);
  };

  const takes = (headers: IncomingHttpHeaders): boolean => {
    const type = headers["content-type"];
    return headers[":method"] === "POST" && routes.has(headers[":path"] ?? "") && type !== undefined && WIRES.has(type);
  };

  const handle: PreHandler = (req, res) => {
    if (req.method !== "POST") return false;
    const route = routes.get(req.url ?? "");
    if (route === undefined) return false;
    const type = req.headers["content-type"];
    const wire = type === undefined ? undefined : WIRES.get(type);
    if (wire === undefined || (wire.protocol === "grpc" && req.httpVersionMajor !== 2)) return false;
    const encoding = wire.protocol === "connect" ? req.headers["content-encoding"] : req.headers["grpc-encoding"];
    if (encoding !== undefined && encoding !== "identity") return false;
    // Auth before the body: a call without a valid key is the router's to refuse, body unread.
    let keyName: string | undefined;
    if (!route.isPublic) {
      keyName = auth.nameOf(req.headers.authorization);
      if (keyName === undefined) return false;
    }
    const timeoutHeader = wire.protocol === "connect" ? req.headers["connect-timeout-ms"] : req.headers["grpc-timeout"];
    let timeoutMs: number | undefined;
    if (timeoutHeader !== undefined) {
      if (typeof timeoutHeader !== "string") return false;
      const timeout = (wire.protocol === "connect" ? parseConnectTimeout : parseGrpcTimeout)(
        timeoutHeader,
        Number.MAX_SAFE_INTEGER,
      );
      if (timeout.error !== undefined) return false;
      // A deadline beyond Node's timers is no deadline (as the request gate does for the router).
      if (timeout.timeoutMs !== undefined && timeout.timeoutMs <= MAX_TIMER_MS) timeoutMs = timeout.timeoutMs;
    }
    const call: Call = { route, jsonOptions: options.jsonOptions, wire, req, res, keyName, timeoutMs };
    readBody(req, bodyMaxBytes, (body, complete) => {
      if (complete) serve(call, body);
      else fallback(req, res, body);
    });
    return true;
  };
  return { handle, takes };
}

function readLength(envelope: Uint8Array): number {
  return ((envelope[1] << 24) | (envelope[2] << 16) | (envelope[3] << 8) | envelope[4]) >>> 0;
}

function timedOut(): ConnectError {
  return new ConnectError("the operation timed out", Code.DeadlineExceeded);
}

function onDeadline(abort: AbortController): void {
  abort.abort(timedOut());
}

/**
 * Reads the request body; `done(body, true)` once it has all of it, `done(bytes, false)` as soon as it
 * holds more than `maxBytes` (the rest is left unread).
 */
function readBody(req: NodeRequest, maxBytes: number, done: (body: Uint8Array, complete: boolean) => void): void {
  let first: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (first === undefined) first = chunk;
    else (chunks ??= [first]).push(chunk);
    if (size > maxBytes) {
      req.off("data", onData);
      req.off("end", onEnd);
      done(chunks === undefined ? first : Buffer.concat(chunks), false);
    }
  };
  const onEnd = () => {
    req.off("data", onData);
    done(chunks !== undefined ? Buffer.concat(chunks) : (first ?? EMPTY), true);
  };
  req.on("data", onData);
  req.on("end", onEnd);
}

const EMPTY = new Uint8Array(0);

/** Encoded answers, kept with the message: a shared cached answer (GetFees) is encoded once per change. */
const binaryAnswers = new WeakMap<Message, Uint8Array>();
const jsonAnswers = new WeakMap<Message, Uint8Array>();

function encoded(route: Route, binary: boolean, output: Message): Uint8Array {
  const cache = binary ? binaryAnswers : jsonAnswers;
  const cached = cache.get(output);
  if (cached !== undefined) return cached;
  const bytes = binary ? toBinary(route.method.output, output) : route.serialization.getO(false).serialize(output);
  cache.set(output, bytes);
  return bytes;
}

/** Enveloped answers (gRPC's message frame), and gRPC-Web bodies ending with the OK trailer, kept per encoded answer. */
const envelopes = new WeakMap<Uint8Array, Uint8Array>();
const okBodies = new WeakMap<Uint8Array, Uint8Array>();

function enveloped(bytes: Uint8Array): Uint8Array {
  let frame = envelopes.get(bytes);
  if (frame === undefined) envelopes.set(bytes, (frame = encodeEnvelope(0, bytes)));
  return frame;
}

function withOkTrailer(data: Uint8Array): Uint8Array {
  let body = okBodies.get(data);
  if (body === undefined) okBodies.set(data, (body = Buffer.concat([data, GRPC_WEB_OK_FRAME])));
  return body;
}

/** The OK trailer of gRPC and gRPC-Web when the implementation set none. */
const GRPC_OK = { "grpc-status": "0" } as const;
const GRPC_WEB_OK_FRAME = encodeEnvelope(trailerFlag, trailerSerialize(new Headers(GRPC_OK)));

/** Writes the answer in the call's protocol. */
function write(
  call: Call,
  context: CallContext,
  bytes: Uint8Array | undefined,
  compression: Compression | null,
  error: ConnectError | undefined,
): void {
  const { res, wire } = call;
  if (res.destroyed || res.writableEnded) return;
  const headers: OutgoingHttpHeaders = { "content-type": wire.contentType };
  const responseHeader = context.peekResponseHeader();
  if (responseHeader !== undefined) addHeaders(headers, responseHeader);
  const node = res as unknown as {
    writeHead(status: number, headers: OutgoingHttpHeaders): { end(body?: Uint8Array): void };
    addTrailers(trailers: OutgoingHttpHeaders): void;
  };
  if (wire.protocol === "connect") {
    const trailer = context.peekResponseTrailer();
    let status = 200;
    let body: Uint8Array;
    if (error !== undefined || bytes === undefined) {
      const failure = error ?? new ConnectError("internal error", Code.Internal);
      status = codeToHttpStatus(failure.code);
      headers["content-type"] = "application/json";
      if (!failure.isWireError) {
        const metadata = new Headers();
        mergeNonProtocolHeaders(metadata, failure.metadata);
        addHeaders(headers, metadata);
      }
      body = errorToJsonBytes(failure, call.jsonOptions ?? {});
    } else {
      body = bytes;
      if (compression !== null) headers["content-encoding"] = compression.name;
    }
    if (trailer !== undefined) addHeaders(headers, trailerMux(new Headers(), trailer));
    headers["content-length"] = body.byteLength;
    node.writeHead(status, headers).end(body);
    return;
  }
  if (compression !== null && bytes !== undefined) headers["grpc-encoding"] = compression.name;
  const trailer = context.peekResponseTrailer();
  const data =
    bytes === undefined || error !== undefined
      ? undefined
      : compression === null
        ? enveloped(bytes)
        : encodeEnvelope(1, bytes);
  if (wire.protocol === "grpc") {
    let trailers: OutgoingHttpHeaders = GRPC_OK;
    if (error !== undefined || trailer !== undefined) {
      const status = setTrailerStatus(new Headers(trailer), error);
      trailers = {};
      addHeaders(trailers, status);
    }
    node.addTrailers(trailers);
    node.writeHead(200, headers).end(data);
    return;
  }
  // gRPC-Web: the trailer is the body's last frame.
  const frame =
    error === undefined && trailer === undefined
      ? GRPC_WEB_OK_FRAME
      : encodeEnvelope(trailerFlag, trailerSerialize(setTrailerStatus(new Headers(trailer), error)));
  const body =
    data === undefined ? frame : frame === GRPC_WEB_OK_FRAME ? withOkTrailer(data) : Buffer.concat([data, frame]);
  headers["content-length"] = body.byteLength;
  node.writeHead(200, headers).end(body);
}

/** Adds `from` to Node outgoing headers (a name seen twice keeps every value). */
function addHeaders(to: OutgoingHttpHeaders, from: Headers): void {
  from.forEach((value, name) => {
    const had = to[name];
    if (had === undefined || name === "content-type") to[name] = value;
    else to[name] = Array.isArray(had) ? [...had, value] : [String(had), value];
  });
}
