/**
 * One TCP port for every protocol. Without TLS there is no ALPN, so each connection's first bytes
 * decide: the HTTP/2 connection preface goes to an http2 server (gRPC, and HTTP/2 Connect/gRPC-Web),
 * anything else to an HTTP/1.1 server (gRPC-Web, Connect, REST, browsers). Sockets that say nothing
 * are dropped; closing drains: no new connections, HTTP/2 GOAWAY, idle HTTP/1.1 sockets closed,
 * in-flight requests given until a deadline, then everything is cut.
 *
 * Connections are capped per client address and in all, so one client cannot take every file
 * descriptor: past a cap a new connection is closed as soon as it is accepted. An HTTP/2 session
 * with no open stream is closed after the idle timeout even if its client keeps sending PINGs
 * (Node's own session timeout counts any frame, PINGs included, as activity).
 */
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { AddressInfo } from "node:net";
import type { NodeHandler, NodeRequest, NodeResponse } from "./http-handler.ts";
import { routeStreams } from "./h2-exchange.ts";
import type { DirectStreams } from "./h2-exchange.ts";

/** How long connections get to end by themselves once nothing is in flight. */
const FLUSH_GRACE_MS = 1000;

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** Options of `createListener`. */
export interface ListenerOptions {
  handler: NodeHandler;
  /** A new connection that sends nothing, or an HTTP/1.1 client slower than this to send its headers, is dropped. */
  socketTimeoutMs: number;
  /** Idle connections (no request in flight) are closed after this. */
  idleTimeoutMs: number;
  /** Open connections allowed from one client address; past it new ones are closed at once. */
  maxConnectionsPerIp: number;
  /** Open connections allowed in all; past it new ones are closed at once. */
  maxConnections: number;
  /** Streams one HTTP/2 session may have open at once (its SETTINGS_MAX_CONCURRENT_STREAMS). */
  maxStreamsPerSession: number;
  /** Called when a connection is refused by a cap (for a log line or a metric). */
  onRefused?: (reason: "per-ip" | "total", address: string) => void;
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
  /**
   * Drains: stops accepting, lets requests in flight finish until `deadline` (epoch ms), calls
   * `onDeadline` if some are still running then, and cuts every connection shortly after.
   */
  close(options: { deadline: number; onDeadline?: () => void }): Promise<void>;
}

/** Binds the listener; resolves once it accepts connections. */
export async function listen(options: ListenerOptions, port: number, host?: string): Promise<RunningListener> {
  const sockets = new Set<net.Socket>();
  const inFlight = new Set<NodeResponse>();
  const sessions = new Set<http2.Http2Session>();
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
  const perAddress = new Map<string, number>();

  // One listener for every response (a response closes once): no closure or once-wrapper per request.
  function onResponseClose(this: NodeResponse) {
    inFlight.delete(this);
    if (draining) {
      // The connection turns idle just after its response closes.
      setImmediate(() => h1.closeIdleConnections());
      onIdle();
    }
  }
  const handle = (req: NodeRequest, res: NodeResponse) => {
    inFlight.add(res);
    res.on("close", onResponseClose);
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

  h2.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    if (draining) session.close();
    // An idle session (no open stream) is closed after the idle timeout, whatever frames (PINGs,
    // SETTINGS) it sends; a long, quiet stream keeps its session alive. The timer counts open streams,
    // not frames, so what keeps a session is a call in progress and nothing else.
    let open = 0;
    let idle: NodeJS.Timeout | undefined;
    const armIdle = () => {
      idle = setTimeout(() => session.close(), options.idleTimeoutMs);
    };
    // One function per session, not a closure per stream (a stream closes once).
    const onStreamClose = () => {
      if (--open === 0 && !session.closed) armIdle();
    };
    session.on("stream", (stream) => {
      open++;
      clearTimeout(idle);
      stream.on("close", onStreamClose);
    });
    session.once("close", () => clearTimeout(idle));
    armIdle();
    session.on("error", () => {});
  });
  // As http.createServer does: no Nagle delay for the small writes of request-response traffic.
  const server = net.createServer({ noDelay: true }, (socket) => {
    socket.on("error", () => {});
    const address = socket.remoteAddress ?? "";
    const fromAddress = perAddress.get(address) ?? 0;
    if (draining || sockets.size >= options.maxConnections || fromAddress >= options.maxConnectionsPerIp) {
      // Closed before a byte is read: the refused connection costs its descriptor for a moment only.
      socket.destroy();
      if (!draining) options.onRefused?.(fromAddress >= options.maxConnectionsPerIp ? "per-ip" : "total", address);
      return;
    }
    sockets.add(socket);
    perAddress.set(address, fromAddress + 1);
    socket.once("close", () => {
      sockets.delete(socket);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
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
        h2.emit("connection", socket);
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
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
      if (inFlight.size > 0) await new Promise((r) => setTimeout(r, 100));
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
