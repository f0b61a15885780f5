/**
 * A TCP relay for tests of a stream's breaks: it forwards to `target` until taken down (open connections cut,
 * new ones refused), and again once brought back up.
 */
import { createServer, connect } from "node:net";
import type { AddressInfo, Server, Socket } from "node:net";

/** A running relay. */
export interface TcpRelay {
  /** `http://127.0.0.1:<port>` of the relay. */
  readonly url: string;
  down(): void;
  up(): void;
  close(): Promise<void>;
}

/** A TCP relay to `target` that can be taken down (open connections cut, new ones refused) and back up. */
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
  return {
    url: `http://127.0.0.1:${port}`,
    down() {
      up = false;
      for (const s of sockets) s.destroy();
    },
    up() {
      up = true;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
