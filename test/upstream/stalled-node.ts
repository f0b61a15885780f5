/**
 * A TCP server on 127.0.0.1 that accepts connections and never answers a byte: a node that has stalled,
 * a fault a real node cannot be made to produce on demand. It counts the connections on which a request
 * arrived (Node's fetch may open a spare connection that never carries one), so a test can tell whether a
 * call touched it at all.
 */
import net from "node:net";
import type { AddressInfo } from "node:net";

export interface StalledNode {
  readonly url: string;
  /** Connections on which a request arrived, so far. */
  connections(): number;
  close(): Promise<void>;
}

export async function startStalledNode(): Promise<StalledNode> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    socket.once("data", () => accepted++);
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A port on 127.0.0.1 that refuses connections: bound, then closed. */
export async function refusingUrl(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}
