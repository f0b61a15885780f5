/**
 * HTTP/2 requests answered without node:http2's compatibility layer (`Http2ServerRequest` and
 * `Http2ServerResponse`). That layer wraps every stream in a second readable and a second writable, with
 * about a dozen listeners, and costs more than the rest of a bare HTTP/2 answer: measured with h2load, a
 * bare `node:http2` server answering a small GET from the `stream` event did 1.5 × the requests per second
 * it did through the compatibility layer (docs/benchmarks.md, the hot path's fourth round).
 *
 * An exchange is the request and response the handler chain reads and writes, over the stream itself, with
 * only the members that chain uses. The listener hands a stream to an exchange only when the server says
 * the request is one whose handlers use nothing else (unary calls of the lean path, REST reads); every other
 * stream goes through the compatibility layer as before, and an exchange whose request ends up at the
 * router is turned into the compatibility layer's pair then ({@link compatOf}).
 */
import { EventEmitter } from "node:events";
import http2 from "node:http2";
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerHttp2Stream } from "node:http2";

/** What a stream calls on "data", "end" or "error" (as `ServerHttp2Stream.on` takes it). */
type StreamListener = Parameters<ServerHttp2Stream["on"]>[1];

/** A request's headers and body, read from its stream. */
export class H2Request {
  readonly httpVersionMajor = 2;
  readonly method: string;
  readonly url: string;
  readonly stream: ServerHttp2Stream;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  constructor(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, rawHeaders: string[]) {
    this.stream = stream;
    this.headers = headers;
    this.rawHeaders = rawHeaders;
    this.method = headers[":method"] ?? "GET";
    this.url = headers[":path"] ?? "/";
  }
  on(event: "data" | "end" | "error", listener: StreamListener): this {
    this.stream.on(event, listener);
    return this;
  }
  off(event: "data" | "end" | "error", listener: StreamListener): this {
    this.stream.off(event, listener);
    return this;
  }
}

/** A response written to its stream in one go: `writeHead(...)`, `addTrailers(...)`, then `end(body)`. */
export class H2Response extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  #headers: OutgoingHttpHeaders = {};
  #trailers: OutgoingHttpHeaders | undefined;
  readonly stream: ServerHttp2Stream;
  constructor(stream: ServerHttp2Stream) {
    super();
    this.stream = stream;
    (stream as StreamOf).solgateResponse = this;
    stream.on("close", forwardClose);
  }
  get destroyed(): boolean {
    return this.stream.destroyed;
  }
  setHeader(name: string, value: number | string | readonly string[]): this {
    this.#headers[name.toLowerCase()] = value as OutgoingHttpHeaders[string];
    return this;
  }
  getHeader(name: string): OutgoingHttpHeaders[string] {
    return this.#headers[name.toLowerCase()];
  }
  getHeaders(): OutgoingHttpHeaders {
    return { ...this.#headers };
  }
  writeHead(status: number, headers?: OutgoingHttpHeaders): this {
    this.statusCode = status;
    if (headers !== undefined) for (const name in headers) this.#headers[name.toLowerCase()] = headers[name];
    return this;
  }
  addTrailers(trailers: OutgoingHttpHeaders): void {
    this.#trailers = trailers;
  }
  end(body?: Uint8Array | string): this {
    if (this.writableEnded) return this;
    this.writableEnded = true;
    this.headersSent = true;
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return this;
    const trailers = this.#trailers;
    const headers = this.#headers;
    headers[":status"] = this.statusCode; // respond adds the date, as the compatibility layer does
    const empty = body === undefined || body.length === 0;
    stream.respond(headers, trailers === undefined ? { endStream: empty } : { waitForTrailers: true });
    if (trailers !== undefined) stream.once("wantTrailers", () => stream.sendTrailers(trailers));
    if (!empty || trailers !== undefined) stream.end(body);
    return this;
  }
  destroy(): void {
    this.stream.destroy();
  }
}

/** A stream that knows its exchange's response. */
type StreamOf = ServerHttp2Stream & { solgateResponse?: H2Response };

/** The stream's close, as its response's (one function for every stream, not a closure each). */
function forwardClose(this: StreamOf): void {
  this.solgateResponse?.emit("close");
}

/** The compatibility layer's request and response for an exchange, with the headers set on it so far. */
export function compatOf(
  req: H2Request,
  res: H2Response,
): { req: http2.Http2ServerRequest; res: http2.Http2ServerResponse } {
  const request = new http2.Http2ServerRequest(req.stream, req.headers, {}, req.rawHeaders);
  // A body that ended before the pair was made (an empty DATA frame with END_STREAM, read while a pre-handler
  // was deciding) has emitted its "end" already: the new request would wait for it for ever.
  if (req.stream.readableEnded) request.push(null);
  const response = new http2.Http2ServerResponse(req.stream);
  const headers = res.getHeaders();
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) response.setHeader(name, value);
  }
  return { req: request, res: response };
}

/** Which streams become exchanges: decided from the request's headers alone. */
export type DirectStreams = (headers: IncomingHttpHeaders) => boolean;

const noop = () => {};

/**
 * Routes `server`'s streams: those `direct` accepts to `handler` as an exchange, the rest through the
 * compatibility layer (to `handler` as `Http2ServerRequest` and `Http2ServerResponse`, as before). Call
 * after the server's "request" listener is added: the compatibility layer is the "stream" listener Node
 * adds then, and it is taken out of the server's listeners here.
 */
export function routeStreams(
  server: http2.Http2Server,
  direct: DirectStreams,
  handler: (req: H2Request, res: H2Response) => void,
): void {
  const listeners = server.listeners("stream");
  if (listeners.length !== 1)
    throw new Error(
      `expected node:http2's compatibility layer as the only "stream" listener, found ${listeners.length}`,
    );
  const compat = listeners[0] as (...args: unknown[]) => void;
  server.removeListener("stream", compat);
  server.on("stream", (stream, headers, flags, rawHeaders) => {
    let take = false;
    try {
      take = direct(headers);
    } catch {
      // Not an exchange, then: the compatibility layer and the handlers behind it answer it as before.
    }
    if (!take) {
      compat.call(server, stream, headers, flags, rawHeaders);
      return;
    }
    // As the compatibility layer does: a stream error is the response's end, never the process's.
    stream.on("error", noop);
    handler(new H2Request(stream, headers, rawHeaders as unknown as string[]), new H2Response(stream));
  });
}
