/**
 * The one-port listener against hostile connections, over real sockets: caps per client address and
 * in all (the longest-idle connection closed to make room), HTTP/2 sessions that PING but never open a
 * stream, idle HTTP/1.1 keep-alive connections, and the stream bound per session.
 * 127.0.0.1 and 127.0.0.2 are different client addresses on loopback.
 */
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { listen } from "../../src/server/listener.ts";
import type { ListenerOptions, RunningListener } from "../../src/server/listener.ts";

const FLOODER = "127.0.0.2";

let listener: RunningListener | undefined;
const clients: { destroy(): void }[] = [];
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

/** An HTTP/2 session from `localAddress` that PINGs every `everyMs` and never opens a stream. */
function pinger(url: string, localAddress: string, everyMs = 100): http2.ClientHttp2Session {
  const session = http2.connect(url, { localAddress } as http2.SecureClientSessionOptions);
  clients.push(session);
  session.on("error", () => {});
  const timer = setInterval(() => {
    if (!session.closed && !session.destroyed) session.ping(() => {});
  }, everyMs);
  session.once("close", () => clearInterval(timer));
  return session;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
/** A SETTINGS frame (empty), and a PING frame (8 bytes of payload), on stream 0. */
const SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
const PING = Buffer.from([0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);

/**
 * A hostile HTTP/2 client on a raw socket: the preface, then a PING every `everyMs` for ever. It never
 * reads what the server sends (so it never sees a GOAWAY, and the server's replies pile up unread) and
 * never closes by itself; whether the server let go of it is for the server's side to tell.
 */
function rawPinger(port: number, localAddress: string, everyMs: number): net.Socket {
  const socket = net.connect({ port, host: "127.0.0.1", localAddress });
  clients.push(socket);
  socket.on("error", () => {});
  socket.write(Buffer.concat([PREFACE, SETTINGS]));
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write(PING);
  }, everyMs);
  socket.once("close", () => clearInterval(timer));
  return socket;
}

/** Resolves once `condition` holds, checking every 25 ms; false if it still does not after `ms`. */
async function within(ms: number, condition: () => boolean): Promise<boolean> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
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
  const status = await new Promise<number>((resolve, reject) => {
    session.on("error", reject);
    // Let go without an answer (refused at a cap): -1, so a test sees it rather than hangs.
    session.once("close", () => resolve(-1));
    const req = session.request({ ":path": "/" });
    req.on("response", (headers) => resolve(Number(headers[":status"])));
    req.on("error", reject);
    req.resume();
    req.end();
  });
  session.close();
  return status;
}

describe("connection hygiene", () => {
  it("closes an HTTP/2 session without streams after the idle timeout even though it PINGs", async () => {
    const url = await start({ idleTimeoutMs: 500 });
    const session = pinger(url, FLOODER);
    await connected(session);
    expect(await closesWithin(session, 4000)).toBe(true);
  });

  it("lets go of 20 pinging HTTP/2 sessions without streams within twice the idle timeout, GOAWAY-deaf ones included", async () => {
    const idleTimeoutMs = 2000;
    const url = await start({ idleTimeoutMs });
    const port = Number(new URL(url).port);
    // Ten Node clients (they close when told GOAWAY) and ten raw sockets that never read and never close.
    const polite = Array.from({ length: 10 }, () => pinger(url, FLOODER, 500));
    const deaf = Array.from({ length: 10 }, () => rawPinger(port, FLOODER, 500));
    await Promise.all(polite.map(connected));
    expect(await within(1000, () => listener!.connections() === 20)).toBe(true);
    const goaways = polite.map((s) => new Promise((resolve) => s.once("goaway", resolve)));
    // The server's side: every connection gone within 2 x the idle timeout of the last one opening.
    expect(await within(2 * idleTimeoutMs, () => listener!.connections() === 0)).toBe(true);
    await Promise.all(goaways);
    expect(polite.every((s) => s.closed || s.destroyed)).toBe(true);
    expect(deaf.length).toBe(10);
  });

  it("closes an idle HTTP/1.1 keep-alive connection after the idle timeout", async () => {
    const url = await start({ idleTimeoutMs: 500 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    clients.push(agent);
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const req = http.get(url, { agent }, (res) => {
        res.resume();
        res.once("end", () => resolve(req.socket as net.Socket));
      });
      req.on("error", reject);
    });
    expect(listener!.connections()).toBe(1);
    expect(await within(1000, () => socket.destroyed || socket.readableEnded)).toBe(true);
    expect(await within(500, () => listener!.connections() === 0)).toBe(true);
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

  it("counts a session's idle time from its last stream: one that was busy again since is kept for the rest", async () => {
    // One idle timer per session, left running while streams come and go: when it fires it must wait out the
    // rest of a session that turned idle again after it was armed, not reap it then.
    listener = await listen(
      {
        handler: (_req, res) => res.end("ok"),
        socketTimeoutMs: 10_000,
        idleTimeoutMs: 3000,
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
    const call = () =>
      new Promise<void>((resolve, reject) => {
        const req = session.request({ ":path": "/" });
        req.on("error", reject);
        req.resume();
        req.on("close", resolve);
      });
    await call(); // idle from here: the timer is armed for 3 s
    await new Promise((r) => setTimeout(r, 1000));
    await call(); // idle again from here: 3 s more, past the first timer's end
    expect(await closesWithin(session, 2000)).toBe(false);
    expect(await closesWithin(session, 5000)).toBe(true);
  }, 20_000);

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

  it("counts IPv4 clients of a dual-stack listener per IPv4 address, not as one IPv6 /64", async () => {
    listener = await listen(
      {
        handler: (_req, res) => res.end("ok"),
        socketTimeoutMs: 5000,
        idleTimeoutMs: 60_000,
        maxConnectionsPerIp: 2,
        maxConnections: 100,
        maxStreamsPerSession: 10,
      },
      0,
      "::",
    );
    // Accepted on "::", these arrive as ::ffff:127.0.0.x, all in the same /64 (::ffff:0:0/96).
    const url = `http://127.0.0.1:${listener.port}`;
    const flood = [pinger(url, FLOODER), pinger(url, FLOODER)];
    await Promise.all(flood.map(connected));
    const extra = pinger(url, FLOODER);
    expect(await closesWithin(extra, 2000)).toBe(true);
    expect(await get(url, "127.0.0.3")).toBe(200);
    expect(await get(url, "127.0.0.1")).toBe(200);
  });

  it("makes room at the total cap by closing the longest-idle connection, and serves the newcomer", async () => {
    const evicted: string[] = [];
    const url = await start({ maxConnections: 5, onEvicted: (address) => evicted.push(address) });
    const port = Number(new URL(url).port);
    // Opened one after another, so the first is the one idle the longest.
    const flood: http2.ClientHttp2Session[] = [];
    for (let i = 0; i < 4; i++) {
      flood.push(pinger(url, FLOODER));
      await connected(flood[i]);
    }
    // A silent socket is idle too (it has asked for nothing), and the newest of all.
    const silent = net.connect({ port, host: "127.0.0.1", localAddress: FLOODER });
    clients.push(silent);
    silent.on("error", () => {});
    expect(await within(1000, () => listener!.connections() === 5)).toBe(true);
    expect(await get(url, "127.0.0.1")).toBe(200);
    expect(await closesWithin(flood[0], 2000)).toBe(true);
    expect(evicted).toEqual([FLOODER]);
    expect(flood.slice(1).every((s) => !s.closed && !s.destroyed)).toBe(true);
    expect(silent.destroyed).toBe(false);
    expect(listener!.connections()).toBeLessThanOrEqual(5);
  });

  it("refuses a newcomer at the total cap when no connection is idle (every one has a call in progress)", async () => {
    const refused: string[] = [];
    const finish: (() => void)[] = [];
    listener = await listen(
      {
        handler: (_req, res) => {
          (res as http2.Http2ServerResponse).writeHead(200);
          (res as http2.Http2ServerResponse).write("started");
          finish.push(() => res.end());
        },
        socketTimeoutMs: 5000,
        idleTimeoutMs: 60_000,
        maxConnectionsPerIp: 10,
        maxConnections: 3,
        maxStreamsPerSession: 10,
        onRefused: (reason) => refused.push(reason),
      },
      0,
      "127.0.0.1",
    );
    const url = `http://127.0.0.1:${listener.port}`;
    const busy: http2.ClientHttp2Session[] = [];
    for (let i = 0; i < 3; i++) {
      const session = http2.connect(url);
      clients.push(session);
      session.on("error", () => {});
      const req = session.request({ ":path": "/" });
      req.resume();
      await new Promise((resolve) => req.once("response", resolve));
      busy.push(session);
    }
    const outcome = await fetch(url).then(
      () => "served",
      () => "refused",
    );
    expect(outcome).toBe("refused");
    expect(refused).toEqual(["total"]);
    expect(busy.every((s) => !s.closed && !s.destroyed)).toBe(true);
    // One call ends: its session is idle now, and makes room for the next newcomer.
    finish.shift()!();
    expect(await within(1000, () => listener!.inFlight() === 2)).toBe(true);
    const next = http2.connect(url);
    clients.push(next);
    next.on("error", () => {});
    const req = next.request({ ":path": "/" });
    req.resume();
    const status = await new Promise((resolve) => req.once("response", (h) => resolve(h[":status"])));
    expect(status).toBe(200);
    expect(await closesWithin(busy[0], 2000)).toBe(true);
    expect(busy.slice(1).every((s) => !s.closed && !s.destroyed)).toBe(true);
    for (const end of finish) end();
  });

  it("serves a client from another address throughout a flood of idle, pinging sessions that fills the total cap", async () => {
    const url = await start({ maxConnections: 40, idleTimeoutMs: 2000 });
    const port = Number(new URL(url).port);
    let stop = false;
    let opened = 0;
    // The flood: as many pinging sessions as the flooder can open, a new one as soon as one is let go.
    const flooders = Array.from({ length: 60 }, async (_, i) => {
      while (!stop) {
        const session = i % 2 === 0 ? pinger(url, FLOODER, 200) : rawPinger(port, FLOODER, 200);
        opened++;
        await new Promise<void>((resolve) => {
          session.once("close", () => resolve());
          const check = setInterval(() => {
            if (stop) {
              clearInterval(check);
              session.destroy();
            }
          }, 50);
          session.once("close", () => clearInterval(check));
        });
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    expect(await within(3000, () => listener!.connections() === 40)).toBe(true);
    const statuses: number[] = [];
    const until = Date.now() + 3000;
    while (Date.now() < until) statuses.push(await get(url, "127.0.0.1"));
    stop = true;
    await Promise.all(flooders);
    expect(opened).toBeGreaterThan(60);
    expect(statuses.length).toBeGreaterThan(5);
    expect(statuses.every((s) => s === 200)).toBe(true);
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
