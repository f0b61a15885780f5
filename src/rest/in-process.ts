/**
 * Calls the server's own RPCs in process. The REST transcoder holds no service code: unary calls go
 * to the method's implementation through the router's own interceptors (`UnaryInvoker`,
 * src/server/unary-invoker.ts), so auth, rate limits, request ids, logging, metrics, draining and
 * error mapping run exactly as for gRPC and Connect, without encoding the request as Connect binary
 * and parsing the answer back (which cost about a third of a cached REST read; docs/benchmarks.md).
 * Without an invoker (a method registered with interceptors of its own), a unary call speaks Connect
 * binary to the method's universal handler. Streams (the SSE watch) use a Connect transport over the
 * universal handlers, whose envelope and end-of-stream handling they need.
 */
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { VIA_HEADER } from "../server/interceptors.ts";
import type { UnaryInvoker } from "../server/unary-invoker.ts";
import type { DescMethodUnary, Message } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import { CHECKED_KEY } from "../server/auth.ts";
import { LazyHeaders } from "../server/lazy-headers.ts";
import type { Transport } from "@connectrpc/connect";
import { createAsyncIterable, createUniversalHandlerClient, readAllBytes } from "@connectrpc/connect/protocol";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { createTransport, errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";

/** Calls RPCs of the server's router in process. */
export interface InProcessCaller {
  /**
   * Calls a unary RPC; rejects with the ConnectError the handler answered (details included).
   * `checkedKey`: the name of the key the caller's Authorization header carries, already checked.
   */
  unary(
    method: DescMethodUnary,
    input: Message,
    header: Headers,
    signal: AbortSignal,
    checkedKey?: string,
  ): Promise<Message>;
  /** A Connect transport over the same handlers, for streaming calls. */
  readonly transport: Transport;
}

/** Builds the caller over `handlers` (`router.handlers`, interceptors included) and, for unary calls, `invokeUnary`. */
export function createInProcessCaller(
  handlers: readonly UniversalHandler[],
  invokeUnary?: UnaryInvoker,
): InProcessCaller {
  const byMethod = new Map(handlers.map((h) => [h.method, h]));
  const transport = createTransport({
    httpClient: createUniversalHandlerClient([...handlers]),
    baseUrl: "http://in-process",
    useBinaryFormat: true,
    interceptors: [],
    acceptCompression: [],
    sendCompression: null,
    compressMinBytes: Number.MAX_SAFE_INTEGER,
    // The server's handlers enforce their own read limit; the REST layer caps bodies before this.
    readMaxBytes: Number.MAX_SAFE_INTEGER,
    writeMaxBytes: Number.MAX_SAFE_INTEGER,
  });
  return {
    transport,
    async unary(method, input, header, signal, checkedKey) {
      if (invokeUnary?.serves(method)) {
        const values = checkedKey === undefined ? undefined : createContextValues().set(CHECKED_KEY, checkedKey);
        return invokeUnary.invoke(method, input, header, signal, values);
      }
      const handler = byMethod.get(method);
      if (handler === undefined)
        throw new ConnectError(`${method.parent.typeName}/${method.name} is not served`, Code.Unimplemented);
      header.set("content-type", "application/proto");
      const response = await handler({
        httpVersion: "2.0",
        method: "POST",
        url: `http://in-process${handler.requestPath}`,
        header,
        body: createAsyncIterable([toBinary(method.input, input)]),
        signal,
      });
      const bytes =
        response.body === undefined ? new Uint8Array(0) : await readAllBytes(response.body, Number.MAX_SAFE_INTEGER);
      if (response.status === 200) return fromBinary(method.output, bytes);
      // A Connect unary error: JSON with the code, message and details (ErrorInfo, RetryInfo).
      throw errorFromJsonBytes(
        bytes,
        response.header,
        new ConnectError(`HTTP ${response.status} from ${handler.requestPath}`, Code.Unknown),
      );
    },
  };
}

/** Request headers passed through to the RPC: the key (auth runs in the interceptor) and the request id. */
export function forwardedHeaders(headers: Record<string, string | string[] | undefined>): Headers {
  return new ForwardedHeaders(headers);
}

const FORWARDED = ["authorization", "x-request-id", "user-agent"] as const;

/** The forwarded headers, copied from the Node request on first use (see lazy-headers.ts). */
class ForwardedHeaders extends LazyHeaders {
  constructor(from: Record<string, string | string[] | undefined>) {
    super((target) => {
      for (const name of FORWARDED) {
        const value = from[name];
        if (typeof value === "string") target.set(name, value);
      }
      target.set(VIA_HEADER, "rest");
    });
  }
}
