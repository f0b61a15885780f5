/**
 * @solgate/client for browsers: typed clients for every Solgate service over gRPC-Web or Connect,
 * through @connectrpc/connect-web (fetch). Nothing here imports Node's modules.
 */
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import type { Transport } from "@connectrpc/connect";
import { createServiceClients, interceptorsFor } from "./solgate-clients.ts";
import type { SolgateClient, SolgateClientOptionsBase } from "./solgate-clients.ts";

export * from "./messages.ts";
export { errorReason } from "./solgate-clients.ts";
export type { SolgateClient, SolgateClientOptionsBase } from "./solgate-clients.ts";

/** Browser options: the protocol, default `grpc-web`. */
export interface SolgateClientOptions extends SolgateClientOptionsBase {
  protocol?: "grpc-web" | "connect";
}

/** The transport `options` describe. */
export function createSolgateTransport(options: SolgateClientOptions): Transport {
  const { baseUrl } = options;
  const interceptors = interceptorsFor(options);
  switch (options.protocol ?? "grpc-web") {
    case "grpc-web":
      return createGrpcWebTransport({ baseUrl, interceptors });
    case "connect":
      return createConnectTransport({ baseUrl, interceptors });
    default:
      throw new Error(`unknown protocol ${JSON.stringify(options.protocol)}: use grpc-web or connect`);
  }
}

/** Clients for all eight services of the gateway at `baseUrl`. */
export function createSolgateClient(options: SolgateClientOptions): SolgateClient {
  return createServiceClients(createSolgateTransport(options));
}
