/**
 * A port that serves PubSub alone, as agave's does (the RPC port + 1, 8900 by default). The RPC port
 * keeps serving WebSocket upgrades too; this listener hands its upgrades to the same handler and
 * answers anything else with 426 Upgrade Required.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";

/** A listening PubSub-only port. */
export interface PubsubPort {
  listen(port: number, host: string): Promise<number>;
  close(): Promise<void>;
}

/** Creates the listener (not yet listening). */
export function createPubsubPort(
  onUpgrade: (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void,
): PubsubPort {
  const server = http.createServer((_req, res) => {
    res.writeHead(426, { upgrade: "websocket", connection: "Upgrade" }).end();
  });
  server.on("upgrade", onUpgrade);
  return {
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve((server.address() as AddressInfo).port);
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
