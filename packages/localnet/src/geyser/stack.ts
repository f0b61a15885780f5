/**
 * What the Geyser server loads in the background (server.ts): the hub following the chain and the
 * Connect handler serving `geyser.Geyser` (gRPC only), behind the plugin's `x-token` check.
 */
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { Geyser } from "../../gen/geyser_pb.js";
import type { Chain } from "../chain/chain.ts";
import type { GeyserConfig } from "./geyser-options.ts";
import { createGeyserHub, type GeyserHub } from "./hub.ts";
import { createGeyserService } from "./service.ts";

export interface GeyserStack {
  hub: GeyserHub;
  handler(request: Http2ServerRequest, response: Http2ServerResponse): void;
}

/** The plugin's auth layer: a missing or wrong `x-token` is Unauthenticated. */
function tokenCheck(token: string): Interceptor {
  return (next) => async (request) => {
    if (request.header.get("x-token") !== token) {
      throw new ConnectError("No valid auth token", Code.Unauthenticated);
    }
    return next(request);
  };
}

export function createGeyserStack(chain: Chain, config: GeyserConfig): GeyserStack {
  const hub = createGeyserHub({ chain, replaySlots: config.replaySlots });
  const handler = connectNodeAdapter({
    grpc: true,
    grpcWeb: false,
    connect: false,
    interceptors: config.token === null ? [] : [tokenCheck(config.token)],
    routes(router) {
      router.service(Geyser, createGeyserService({ chain, hub, queueLimit: config.queueLimit, pingMs: config.pingMs }));
    },
  });
  return { hub, handler };
}
