/**
 * The localnet's Geyser server: yellowstone-grpc's `geyser.Geyser` over h2c gRPC (Connect's Node
 * adapter on `http2.createServer`), with the optional `x-token` check. Loaded lazily by localnet.ts,
 * so a localnet that does not serve Geyser never loads Connect.
 */
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Geyser } from "../../gen/geyser_pb.js";
import type { Chain } from "../chain/chain.ts";
import type { GeyserConfig } from "./geyser-options.ts";
import { createGeyserHub, type GeyserHub } from "./hub.ts";
import { createGeyserService } from "./service.ts";

export interface GeyserServer {
  port: number;
  hub: GeyserHub;
  close(): Promise<void>;
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

/** Starts the server on `config.port` (0: a free port) and resolves once it listens. */
export async function startGeyserServer(chain: Chain, config: GeyserConfig, host: string): Promise<GeyserServer> {
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
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    hub,
    async close() {
      hub.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const session of sessions) session.destroy();
      await closed;
    },
  };
}
