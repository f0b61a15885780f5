/**
 * The node's gossip, TVU, QUIC TPU, QUIC TPU-forwards, TPU-vote and serve-repair sockets, as agave's
 * `Node` binds them and getClusterNodes lists them. The localnet serves none of those protocols; it
 * binds one UDP socket per role on the listen host (a free port each) so the ports it names are
 * really its own and no other process takes them, and reads nothing from them.
 */
import { createSocket, type Socket } from "node:dgram";

/** The roles getClusterNodes names, in agave's field names. */
export const NODE_SOCKET_ROLES = ["gossip", "tvu", "tpuQuic", "tpuForwardsQuic", "tpuVote", "serveRepair"] as const;
export type NodeSocketRole = (typeof NODE_SOCKET_ROLES)[number];

export interface NodeSockets {
  /** `host:port` of each role. */
  readonly addresses: Readonly<Record<NodeSocketRole, string>>;
  close(): Promise<void>;
}

function bind(host: string): Promise<Socket> {
  const socket = createSocket(host.includes(":") ? "udp6" : "udp4");
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(0, host, () => {
      socket.off("error", reject);
      // Datagrams sent to a role are dropped: nothing here speaks gossip, turbine or QUIC.
      socket.on("message", () => {});
      socket.on("error", () => {});
      resolve(socket);
    });
  });
}

/** Binds the six sockets on `host` (0.0.0.0 and :: are advertised as 127.0.0.1, as agave's test validator does). */
export async function reserveNodeSockets(host: string): Promise<NodeSockets> {
  const bindHost = host;
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  const sockets = await Promise.all(NODE_SOCKET_ROLES.map(() => bind(bindHost)));
  const addresses = Object.fromEntries(
    NODE_SOCKET_ROLES.map((role, i) => [role, `${shown}:${sockets[i]!.address().port}`]),
  ) as Record<NodeSocketRole, string>;
  return {
    addresses,
    close: () =>
      Promise.all(sockets.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))).then(() => {}),
  };
}
