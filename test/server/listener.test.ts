/**
 * The one-port listener against hostile connections, over real sockets: caps per client address and
 * in all, HTTP/2 sessions that PING but never open a stream, and the stream bound per session.
 * 127.0.0.1 and 127.0.0.2 are different client addresses on loopback.
 */
import http2 from "node:http2";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { listen } from "../../src/server/listener.ts";
import type { ListenerOptions, RunningListener } from "../../src/server/listener.ts";

const FLOODER = "127.0.0.2";

let listener: RunningListener | undefined;
const clients: http2.ClientHttp2Session[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await listener?.close({ deadline: Date.now() });
  listener = undefined;
});

async function start(options: Partial<ListenerOptions>): Promise<string> {
  listener = await listen(
    {
      handler: (_req, res) => res.end("ok"),
      socketTimeoutMs: 5000,
      idleTimeoutMs: 60_000,
      maxConnectionsPerIp: 1000,
      maxConnections: 1000,
      maxStreamsPerSession: 1000,
      ...options,
    },
    0,
    "0.0.0.0",
  );
  return `http://127.0.0.1:${listener.port}`;
}

/** An HTTP/2 session from `localAddress` that PINGs every 100 ms and never opens a stream. */
function pinger(url: string, localAddress: string): http2.ClientHttp2Session {
  const session = http2.connect(url, { localAddress } as http2.SecureClientSessionOptions);
  clients.push(session);
  session.on("error", () => {});
  const timer = setInterval(() => {
    if (!session.closed && !session.destroyed) session.ping(() => {});
  }, 100);
  session.once("close", () => clearInterval(timer));
  return session;
}

function connected(session: http2.ClientHttp2Session): Promise<void> {
  return new Promise((resolve, reject) => {
    session.once("remoteSettings", () => resolve());
    session.once("close", () => reject(new Error("session closed before SETTINGS")));
  });
}

/** Resolves with true if `session` closes within `ms`. */
function closesWithin(session: http2.ClientHttp2Session, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (session.closed || session.destroyed) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    session.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** One HTTP/2 GET from `localAddress`; resolves with the status. */
async function get(url: string, localAddress: string): Promise<number> {
  const session = http2.connect(url, { localAddress } as http2.SecureClientSessionOptions);
  clients.push(session);
  return new Promise((resolve, reject) => {
    session.on("error", reject);
    const req = session.request({ ":path": "/" });
    req.on("response", (headers) => resolve(Number(headers[":status"])));
    req.on("error", reject);
    req.resume();
    req.end();
  });
}

describe("connection hygiene", () => {
  it("closes an HTTP/2 session without streams after the idle timeout even though it PINGs", async () => {
    const url = await start({ idleTimeoutMs: 500 });
    const session = pinger(url, FLOODER);
    await connected(session);
    expect(await closesWithin(session, 4000)).toBe(true);
  });

  it("keeps a session with an open stream past the idle timeout, and closes it once idle", async () => {
    let finish = () => {};
    listener = await listen(
      {
        handler: (_req, res) => {
          (res as http2.Http2ServerResponse).writeHead(200);
          (res as http2.Http2ServerResponse).write("started");
          finish = () => res.end();
        },
        socketTimeoutMs: 5000,
        idleTimeoutMs: 300,
        maxConnectionsPerIp: 10,
        maxConnections: 10,
        maxStreamsPerSession: 10,
      },
      0,
      "127.0.0.1",
    );
    const session = http2.connect(`http://127.0.0.1:${listener.port}`);
    clients.push(session);
    session.on("error", () => {});
    const req = session.request({ ":path": "/" });
    req.resume();
    await new Promise((resolve) => req.once("response", resolve));
    expect(await closesWithin(session, 1000)).toBe(false);
    finish();
    expect(await closesWithin(session, 4000)).toBe(true);
  });

  it("refuses connections past the per-address cap and keeps serving other addresses", async () => {
    const url = await start({ maxConnectionsPerIp: 5 });
    const flood = Array.from({ length: 5 }, () => pinger(url, FLOODER));
    await Promise.all(flood.map(connected));
    const extra = pinger(url, FLOODER);
    expect(await closesWithin(extra, 2000)).toBe(true);
    expect(flood.every((s) => !s.closed && !s.destroyed)).toBe(true);
    expect(await get(url, "127.0.0.1")).toBe(200);
    // A slot freed by the flooder is its own again.
    flood[0].destroy();
    await new Promise((r) => setTimeout(r, 200));
    expect(await get(url, FLOODER)).toBe(200);
  });

  it("refuses connections past the total cap, HTTP/1.1 and silent ones included", async () => {
    const url = await start({ maxConnections: 3 });
    const port = Number(new URL(url).port);
    const held = Array.from({ length: 3 }, () => net.connect(port, "127.0.0.1"));
    for (const s of held) s.on("error", () => {});
    await Promise.all(held.map((s) => new Promise((r) => s.once("connect", r))));
    await new Promise((r) => setTimeout(r, 100));
    const refused = await fetch(url).then(
      () => "served",
      () => "refused",
    );
    expect(refused).toBe("refused");
    for (const s of held) s.destroy();
    await new Promise((r) => setTimeout(r, 200));
    expect((await fetch(url)).status).toBe(200);
  });

  it("announces the stream bound per session and refuses streams past it", async () => {
    const hold: (() => void)[] = [];
    listener = await listen(
      {
        handler: (_req, res) => {
          (res as http2.Http2ServerResponse).writeHead(200);
          (res as http2.Http2ServerResponse).write("x");
          hold.push(() => res.end());
        },
        socketTimeoutMs: 5000,
        idleTimeoutMs: 60_000,
        maxConnectionsPerIp: 10,
        maxConnections: 10,
        maxStreamsPerSession: 2,
      },
      0,
      "127.0.0.1",
    );
    const session = http2.connect(`http://127.0.0.1:${listener.port}`);
    clients.push(session);
    session.on("error", () => {});
    await connected(session);
    expect(session.remoteSettings.maxConcurrentStreams).toBe(2);
    for (let i = 0; i < 2; i++) {
      const req = session.request({ ":path": "/" });
      req.resume();
      await new Promise((resolve) => req.once("response", resolve));
    }
    // The client queues a third stream until one ends rather than sending it.
    const third = session.request({ ":path": "/" });
    third.resume();
    let answered = false;
    third.once("response", () => (answered = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(answered).toBe(false);
    hold.shift()?.();
    await new Promise((resolve) => third.once("response", resolve));
    for (const end of hold) end();
  });
});
