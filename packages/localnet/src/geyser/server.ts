/**
 * The localnet's Geyser server: yellowstone-grpc's `geyser.Geyser` over h2c gRPC, on Connect's Node
 * adapter (stack.ts), with the optional `x-token` check.
 *
 * Start-up stays fast: this module needs only `node:http2`. The port listens at once (so the ready
 * line can name it); Connect, protobuf-es and the generated code load in the background, and a call
 * that arrives before they have is answered once they are.
 */
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { Chain } from "../chain/chain.ts";
import type { GeyserConfig } from "./geyser-options.ts";
import type { GeyserStack } from "./stack.ts";

export interface GeyserServer {
  port: number;
  /** Settles once the service is loaded and following the chain. */
  ready: Promise<GeyserStack>;
  close(): Promise<void>;
}

/** Starts the server on `config.port` (0: a free port) and resolves once it listens. */
export async function startGeyserServer(chain: Chain, config: GeyserConfig, host: string): Promise<GeyserServer> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  let load: () => void = () => {};
  // Loaded after the caller has gone on (and printed its ready line): a macrotask later, not now.
  const ready = new Promise<void>((resolve) => {
    load = resolve;
  })
    .then(() => import("./stack.ts"))
    .then(({ createGeyserStack }) => createGeyserStack(chain, config));
  server.on("request", (request, response) => {
    ready.then(
      (stack) => stack.handler(request, response),
      () => response.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  setImmediate(load);
  return {
    port: (server.address() as AddressInfo).port,
    ready,
    async close() {
      (await ready.catch(() => undefined))?.hub.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const session of sessions) session.destroy();
      await closed;
    },
  };
}
