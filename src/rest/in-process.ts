/**
 * Calls the server's own Connect handlers in process. The REST transcoder holds no service code:
 * it speaks the Connect protocol (binary) to the same universal handlers the port serves, so auth,
 * request ids, logging, metrics, draining and error mapping run exactly as for gRPC and Connect.
 */
import { createUniversalHandlerClient } from "@connectrpc/connect/protocol";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";
import type { Transport } from "@connectrpc/connect";

/** A Connect transport over `handlers`, with no network, compression or size limit of its own. */
export function createInProcessTransport(handlers: readonly UniversalHandler[]): Transport {
  return createTransport({
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
}

/** Request headers passed through to the RPC: the key (auth runs in the interceptor) and the request id. */
export function forwardedHeaders(headers: Record<string, string | string[] | undefined>): Headers {
  const out = new Headers();
  for (const name of ["authorization", "x-request-id", "user-agent"]) {
    const value = headers[name];
    if (typeof value === "string") out.set(name, value);
  }
  return out;
}
