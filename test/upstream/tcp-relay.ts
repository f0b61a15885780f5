/**
 * A TCP relay for tests of a stream's breaks, between a client and `target`: its open connections can be cut
 * (the client reconnects through it at once), frozen (bytes stop passing, the connection stays open), or the
 * relay taken down (open connections cut, new ones refused) and brought back up.
 */
import { createServer, connect } from "node:net";
import type { AddressInfo, Server, Socket } from "node:net";

/** A running relay. */
export interface TcpRelay {
  /** `http://127.0.0.1:<port>` of the relay. */
  readonly url: string;
  /** Cuts the open connections; new ones are taken. */
  cut(): void;
  /** Stops passing bytes on the open connections, leaving them open. */
  freeze(): void;
  /** Cuts the open connections and refuses new ones until `up`. */
  down(): void;
  up(): void;
  /** Cuts what is open and stops listening. */
  close(): Promise<void>;
}

/** Starts a relay to `target` on a free port. */
export async function startRelay(target: URL): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  let up = true;
  const server: Server = createServer((client) => {
    if (!up) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const cut = () => {
    for (const s of sockets) s.destroy();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    cut,
    freeze() {
      for (const s of sockets) {
        s.unpipe();
        s.pause();
      }
    },
    down() {
      up = false;
      cut();
    },
    up() {
      up = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}
