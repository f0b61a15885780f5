/**
 * @solgate/client for Node: typed clients for every Solgate service over gRPC (HTTP/2), gRPC-Web or
 * Connect, through @connectrpc/connect-node. Browsers import `@solgate/client/web` instead.
 */
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import type { Transport } from "@connectrpc/connect";
import { createServiceClients, interceptorsFor } from "./solgate-clients.ts";
import type { SolgateClient, SolgateClientOptionsBase } from "./solgate-clients.ts";

export * from "./messages.ts";
export { errorReason } from "./solgate-clients.ts";
export type { SolgateClient, SolgateClientOptionsBase } from "./solgate-clients.ts";

/** Node options: the protocol (default `grpc`) and, for gRPC-Web and Connect, the HTTP version. */
export interface SolgateClientOptions extends SolgateClientOptionsBase {
  protocol?: "grpc" | "grpc-web" | "connect";
  /** gRPC-Web and Connect only (gRPC is always HTTP/2); default `"2"` (h2c on `http://`). */
  httpVersion?: "1.1" | "2";
}

/** The transport `options` describe. */
export function createSolgateTransport(options: SolgateClientOptions): Transport {
  const { baseUrl } = options;
  const interceptors = interceptorsFor(options);
  const httpVersion = options.httpVersion ?? "2";
  switch (options.protocol ?? "grpc") {
    case "grpc":
      return createGrpcTransport({ baseUrl, interceptors });
    case "grpc-web":
      return createGrpcWebTransport({ baseUrl, interceptors, httpVersion });
    case "connect":
      return createConnectTransport({ baseUrl, interceptors, httpVersion });
    default:
      throw new Error(`unknown protocol ${JSON.stringify(options.protocol)}: use grpc, grpc-web or connect`);
  }
}

/** Clients for all eight services of the gateway at `baseUrl`. */
export function createSolgateClient(options: SolgateClientOptions): SolgateClient {
  return createServiceClients(createSolgateTransport(options));
}
