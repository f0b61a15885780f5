/**
 * One TCP port for every protocol. Without TLS there is no ALPN, so each connection's first bytes
 * decide: the HTTP/2 connection preface goes to an http2 server (gRPC, and HTTP/2 Connect/gRPC-Web),
 * anything else to an HTTP/1.1 server (gRPC-Web, Connect, REST, browsers). Sockets that say nothing
 * are dropped; closing drains: no new connections, HTTP/2 GOAWAY, idle HTTP/1.1 sockets closed,
 * in-flight requests given until a deadline, then everything is cut.
 *
 * Connections are capped per client (an IPv4 address or an IPv6 /64: client-address.ts) and in all, so
 * one client cannot take every file descriptor. Past the per-client cap a new connection is closed as
 * soon as it is accepted; at the total cap the connection idle the longest (no request in flight, no
 * open stream) is closed to make room, and only when none is idle is the newcomer refused.
 *
 * An HTTP/2 session with no open stream is sent a GOAWAY after the idle timeout, whatever frames (PINGs,
 * SETTINGS) its client keeps sending, and its socket is destroyed a short grace later if it has not
 * closed by then. `session.close()` alone is not enough: Node ends a closed session's socket with a
 * half-close (its FIN) and then waits for the client's; a client that never closes its side (and keeps
 * sending PINGs into the half-open connection) kept the socket, its descriptor and its place under the
 * caps for ever (test/server/listener.test.ts has such a client).
 */
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { AddressInfo } from "node:net";
import type { NodeHandler, NodeRequest, NodeResponse } from "./http-handler.ts";
import { addressGroup } from "./client-address.ts";
import { routeStreams } from "./h2-exchange.ts";
import type { DirectStreams } from "./h2-exchange.ts";
import { sleep } from "../sleep.ts";

/** How long connections get to end by themselves once nothing is in flight. */
const FLUSH_GRACE_MS = 1000;
/** How long an idle HTTP/2 session sent a GOAWAY gets to end by itself before its socket is destroyed. */
const IDLE_GRACE_MS = 1000;
/** The same for a session closed to make room at the total cap: short, since its descriptor is wanted. */
const EVICT_GRACE_MS = 100;

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** Options of `createListener`. */
export interface ListenerOptions {
  handler: NodeHandler;
  /** A new connection that sends nothing, or an HTTP/1.1 client slower than this to send its headers, is dropped. */
  socketTimeoutMs: number;
  /** Idle connections (no request in flight) are closed after this. */
  idleTimeoutMs: number;
  /** Open connections allowed from one client (an IPv4 address or an IPv6 /64); past it new ones are closed at once. */
  maxConnectionsPerIp: number;
  /** Open connections allowed in all; past it the longest-idle one is closed, or the newcomer if none is idle. */
  maxConnections: number;
  /** Streams one HTTP/2 session may have open at once (its SETTINGS_MAX_CONCURRENT_STREAMS). */
  maxStreamsPerSession: number;
  /** Called when a connection is refused by a cap (for a log line or a metric). */
  onRefused?: (reason: "per-ip" | "total", address: string) => void;
  /** Called when an idle connection is closed to make room at the total cap (`address`: its client's). */
  onEvicted?: (address: string) => void;
  /** HTTP/2 requests handed to `handler` as exchanges, not through Node's compatibility layer (h2-exchange.ts). */
  direct?: DirectStreams;
}

/** A listening server. */
export interface RunningListener {
  readonly port: number;
  /** The address bound (`0.0.0.0` or `::` for every interface). */
  readonly host: string;
  /** Requests being answered now. */
  inFlight(): number;
  /** Connections counted against the caps now (one closed to make room stops counting at once). */
  connections(): number;
  /**
   * Drains: stops accepting, lets requests in flight finish until `deadline` (epoch ms), calls
   * `onDeadline` if some are still running then, and cuts every connection shortly after.
   */
  close(options: { deadline: number; onDeadline?: () => void }): Promise<void>;
}

/** One accepted connection, as the caps and the idle order see it. */
interface Connection {
  readonly socket: net.Socket;
  /** Its client's group for the per-client cap. */
  readonly group: string;
  /** Requests in flight (HTTP/1.1) or open streams (HTTP/2); idle at 0. */
  busy: number;
  /** Set once it is HTTP/2. */
  session: http2.Http2Session | undefined;
  /** No longer counted against the caps (closed, or being closed to make room). */
  released: boolean;
}

/** Binds the listener; resolves once it accepts connections. */
export async function listen(options: ListenerOptions, port: number, host?: string): Promise<RunningListener> {
  const sockets = new Set<net.Socket>();
  const inFlight = new Set<NodeResponse>();
  const sessions = new Set<http2.Http2Session>();
  /** Connections counted against the caps. */
  let counted = 0;
  const perGroup = new Map<string, number>();
  /** Idle connections, the longest idle first (a Set keeps insertion order; turning idle re-inserts). */
  const idle = new Set<Connection>();
  const bySocket = new WeakMap<net.Socket, Connection>();
  let draining = false;
  let onIdle = () => {};
  let onSocketClosed = () => {};
  let closed = Promise.resolve();

  const h1 = http.createServer({
    // Streams over HTTP/1.1 (server streaming, Connect) may run for hours: no whole-request timeout.
    requestTimeout: 0,
    headersTimeout: options.socketTimeoutMs,
    keepAliveTimeout: options.idleTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(options.socketTimeoutMs / 4))),
  });
  const h2 = http2.createServer({ settings: { maxConcurrentStreams: options.maxStreamsPerSession } });

  /** Stops counting `conn` against the caps (once). */
  const release = (conn: Connection) => {
    if (conn.released) return;
    conn.released = true;
    idle.delete(conn);
    counted--;
    const left = (perGroup.get(conn.group) ?? 1) - 1;
    if (left === 0) perGroup.delete(conn.group);
    else perGroup.set(conn.group, left);
  };
  const busier = (conn: Connection | undefined) => {
    if (conn !== undefined && conn.busy++ === 0) idle.delete(conn);
  };
  const idler = (conn: Connection | undefined) => {
    if (conn === undefined || --conn.busy > 0 || conn.released) return;
    // Re-inserted: now the most recently idle.
    idle.delete(conn);
    idle.add(conn);
  };
  /** GOAWAY now (HTTP/2), the socket destroyed after `graceMs` if it has not ended by then. */
  const goAway = (conn: Connection, graceMs: number) => {
    conn.session?.close();
    const cut = setTimeout(() => {
      conn.session?.destroy();
      conn.socket.destroy();
    }, graceMs);
    conn.socket.once("close", () => clearTimeout(cut));
  };
  /** Closes the longest-idle connection to make room; false if none is idle. */
  const evictOne = (): boolean => {
    const victim = idle.values().next().value;
    if (victim === undefined) return false;
    release(victim);
    if (victim.session !== undefined) goAway(victim, EVICT_GRACE_MS);
    else victim.socket.destroy();
    options.onEvicted?.(victim.socket.remoteAddress ?? "");
    return true;
  };

  // One listener for every response (a response closes once): no closure or once-wrapper per request.
  function onResponseClose(this: NodeResponse) {
    inFlight.delete(this);
    // (A finished response has let go of its socket; its request has not.)
    if (!("stream" in this)) idler(bySocket.get((this as http.ServerResponse).req.socket as net.Socket));
    if (draining) {
      // The connection turns idle just after its response closes.
      setImmediate(() => h1.closeIdleConnections());
      onIdle();
    }
  }
  const handle = (req: NodeRequest, res: NodeResponse) => {
    inFlight.add(res);
    res.on("close", onResponseClose);
    // HTTP/1.1 requests count towards their connection's work here; HTTP/2 streams count in the session.
    if (!("stream" in req)) busier(bySocket.get(req.socket as net.Socket));
    if (draining) {
      if ("stream" in req) req.stream.session?.close();
      else if (!res.headersSent) res.setHeader("connection", "close");
    }
    options.handler(req, res);
  };
  h1.on("request", handle);
  h2.on("request", handle);
  if (options.direct !== undefined)
    routeStreams(h2, options.direct, (req, res) =>
      handle(req as unknown as NodeRequest, res as unknown as NodeResponse),
    );

  /** The connection whose socket is being handed to the http2 server (its "session" event comes at once). */
  let arriving: Connection | undefined;
  h2.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    const conn = arriving;
    arriving = undefined;
    if (conn !== undefined) conn.session = session;
    if (draining) session.close();
    // An idle session (no open stream) is sent a GOAWAY after the idle timeout, whatever frames (PINGs,
    // SETTINGS) it sends, and cut a grace later; a long, quiet stream keeps its session alive. The timer
    // counts open streams, not frames, so what keeps a session is a call in progress and nothing else.
    // One timer per session at most, left running while streams come and go: a client that opens one stream
    // at a time would otherwise cost a setTimeout and a clearTimeout per call. When it fires, it reaps a session
    // idle for the whole timeout, waits out the rest of one that turned idle since, and leaves a busy one (its
    // last stream's close arms it again).
    let open = 0;
    let idleSince = 0;
    let timer: NodeJS.Timeout | undefined;
    const check = () => {
      timer = undefined;
      if (open > 0 || session.closed) return;
      const left = idleSince + options.idleTimeoutMs - Date.now();
      if (left > 0) timer = setTimeout(check, left);
      else if (conn === undefined) session.close();
      else goAway(conn, Math.min(IDLE_GRACE_MS, options.idleTimeoutMs));
    };
    const armIdle = () => {
      idleSince = Date.now();
      timer ??= setTimeout(check, options.idleTimeoutMs);
    };
    // One function per session, not a closure per stream (a stream closes once).
    const onStreamClose = () => {
      idler(conn);
      if (--open === 0 && !session.closed) armIdle();
    };
    session.on("stream", (stream) => {
      open++;
      busier(conn);
      stream.on("close", onStreamClose);
    });
    session.once("close", () => clearTimeout(timer));
    armIdle();
    session.on("error", () => {});
  });
  // As http.createServer does: no Nagle delay for the small writes of request-response traffic.
  const server = net.createServer({ noDelay: true }, (socket) => {
    socket.on("error", () => {});
    const address = socket.remoteAddress ?? "";
    const group = addressGroup(address);
    const fromGroup = perGroup.get(group) ?? 0;
    const refusal = draining
      ? "draining"
      : fromGroup >= options.maxConnectionsPerIp
        ? "per-ip"
        : counted >= options.maxConnections && !evictOne()
          ? "total"
          : undefined;
    if (refusal !== undefined) {
      // Closed before a byte is read: the refused connection costs its descriptor for a moment only.
      socket.destroy();
      if (refusal !== "draining") options.onRefused?.(refusal, address);
      return;
    }
    // Idle (nothing asked yet) from the start: a connection that never sends a request is the first to go.
    const conn: Connection = { socket, group, busy: 0, session: undefined, released: false };
    bySocket.set(socket, conn);
    sockets.add(socket);
    counted++;
    perGroup.set(group, fromGroup + 1);
    idle.add(conn);
    socket.once("close", () => {
      sockets.delete(socket);
      release(conn);
      onSocketClosed();
    });
    const silent = setTimeout(() => socket.destroy(), options.socketTimeoutMs);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const n = Math.min(head.length, PREFACE.length);
      const isH2 = head.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (isH2 && head.length < PREFACE.length) return; // a preface split across packets: wait for the rest
      clearTimeout(silent);
      socket.off("data", onData);
      socket.pause();
      socket.unshift(head);
      if (isH2) {
        // The http2 session reads the socket itself; resuming here would lose the preface.
        arriving = conn;
        h2.emit("connection", socket);
        arriving = undefined;
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
    socket.once("close", () => clearTimeout(silent));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // The HTTP/1.1 server never listens itself, but its connection tracking (headersTimeout, idle
  // connection closing) starts on "listening": start it by hand, stop it with h1.close() below.
  h1.emit("listening");

  return {
    port: (server.address() as AddressInfo).port,
    host: (server.address() as AddressInfo).address,
    inFlight: () => inFlight.size,
    connections: () => counted,
    async close({ deadline, onDeadline }) {
      if (!draining) {
        draining = true;
        closed = new Promise<void>((resolve) => server.close(() => resolve()));
        h1.closeIdleConnections();
        // HTTP/2: GOAWAY; open streams may finish, no new ones start.
        for (const session of sessions) session.close();
      }
      if (inFlight.size > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(
            () => {
              onDeadline?.();
              resolve();
            },
            Math.max(0, deadline - Date.now()),
          );
          onIdle = () => {
            if (inFlight.size > 0) return;
            clearTimeout(timer);
            resolve();
          };
        });
      }
      // What onDeadline aborted gets a moment to write its trailers.
      if (inFlight.size > 0) await sleep(100);
      // Connections with nothing in flight end on their own (GOAWAY sent, idle HTTP/1.1 closed), which
      // flushes the last trailers; cutting them at once could lose those. Whatever lingers is cut.
      h1.closeIdleConnections();
      for (const session of sessions) session.close();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FLUSH_GRACE_MS);
        const check = () => {
          if (sockets.size > 0) return;
          clearTimeout(timer);
          resolve();
        };
        onSocketClosed = check;
        check();
      });
      for (const s of sockets) s.destroy();
      h1.close();
      await closed;
    },
  };
}
