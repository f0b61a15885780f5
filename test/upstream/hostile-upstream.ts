/**
 * A hostile Solana node: a real HTTP and WebSocket server in front of a real one (the localnet), that
 * passes each JSON-RPC call on and then spoils the answer the way providers do, one mode at a time.
 * Used by test/upstream/hostile-upstream.test.ts and by abuse-bench's hostile-upstream section.
 *
 * Modes:
 * - `honest`: the real node's answer, untouched.
 * - `wrong-types`: every `result` of the wrong type (a string for an object, a number for a string).
 * - `missing-fields`: the first field of the result (and of each item of a list) removed.
 * - `past-u64`: every integer of the result 18446744073709551616999 (past 2^64), every other one negative.
 * - `huge`: a 2 GB answer streamed without Content-Length, made on the fly (never held in memory).
 * - `truncated`: the real answer cut in the middle (the connection then ends cleanly).
 * - `trickle`: one byte a second.
 * - `deep-nesting`: a result of 200,000 nested arrays.
 * - `html`: a 200 with an HTML error page.
 * - `lying`: slots going back by 1,000 every other answer, statuses for slots the node has not reached
 *   (a signature nobody sent reported finalized), and a made-up blockhash valid far in the future.
 *
 * The WebSocket side passes PubSub on in `honest` mode and answers every message with a spoilt one
 * otherwise (a 32 MB notification in `huge`).
 */
import { createServer, request as httpRequest } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import bs58 from "bs58";
import WebSocket, { WebSocketServer } from "ws";

export const HOSTILE_MODES = [
  "honest",
  "wrong-types",
  "missing-fields",
  "past-u64",
  "huge",
  "truncated",
  "trickle",
  "deep-nesting",
  "html",
  "lying",
] as const;
export type HostileMode = (typeof HOSTILE_MODES)[number];

/** How big the `huge` answer is: 2 GB. */
export const HUGE_BYTES = 2 * 1024 ** 3;
const PAST_U64 = "18446744073709551616999";

/** A running hostile node. */
export interface HostileUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `ws://127.0.0.1:<port>` */
  readonly wsUrl: string;
  mode: HostileMode;
  /** Methods seen since the last `reset()`. */
  readonly seen: string[];
  /** Bytes of `huge` answers written so far (to see the gateway hang up long before 2 GB). */
  hugeBytesSent(): number;
  reset(): void;
  close(): Promise<void>;
}

/** Starts a hostile node in front of `realRpcUrl` (and `realWsUrl` for PubSub). */
export async function startHostileUpstream(
  realRpcUrl: string,
  realWsUrl: string,
  mode: HostileMode = "honest",
): Promise<HostileUpstream> {
  const real = new URL(realRpcUrl);
  let hugeSent = 0;
  let answered = 0;
  const seen: string[] = [];
  const sockets = new Set<import("node:net").Socket>();

  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const method = methodOf(body);
    seen.push(method);
    const current = state.mode;
    try {
      if (current === "huge") return streamHuge(res);
      if (current === "html") {
        res.writeHead(200, { "content-type": "text/html" });
        res.end("<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>");
        return;
      }
      if (current === "deep-nesting") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(`{"jsonrpc":"2.0","id":${idOf(body)},"result":${"[".repeat(200_000)}${"]".repeat(200_000)}}`);
        return;
      }
      const text = await forward(real, body);
      if (current === "trickle") return trickle(res, text);
      res.writeHead(200, { "content-type": "application/json" });
      if (current === "truncated") {
        res.end(text.slice(0, Math.max(1, Math.floor(text.length / 2))));
        return;
      }
      res.end(current === "honest" ? text : spoil(text, current, method, answered++));
    } catch {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    }
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  /** 2 GB of a valid-looking list, written as the socket drains, until it is all sent or the peer leaves. */
  function streamHuge(res: ServerResponse): void {
    res.writeHead(200, { "content-type": "application/json" }); // no Content-Length: chunked
    const item = `"${"A".repeat(1018)}",`; // 1 KiB a piece
    const chunk = Buffer.from(item.repeat(64)); // 64 KiB a write
    let written = 0;
    res.write('{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":1},"value":[');
    const pump = () => {
      while (written < HUGE_BYTES) {
        if (res.destroyed) return;
        written += chunk.length;
        hugeSent += chunk.length;
        if (!res.write(chunk)) {
          res.once("drain", pump);
          return;
        }
      }
      res.end('""]}}');
    };
    res.on("close", () => res.removeAllListeners("drain"));
    pump();
  }

  function trickle(res: ServerResponse, text: string): void {
    res.writeHead(200, { "content-type": "application/json" });
    let i = 0;
    const timer = setInterval(() => {
      if (res.destroyed || i >= text.length) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write(text[i++]);
    }, 1000);
    res.on("close", () => clearInterval(timer));
  }

  // PubSub: passed through when honest; spoilt answers otherwise.
  const wss = new WebSocketServer({ server });
  wss.on("connection", (client) => {
    if (state.mode === "honest") {
      const upstream = new WebSocket(realWsUrl);
      const pending: WebSocket.RawData[] = [];
      upstream.on("open", () => {
        for (const m of pending.splice(0)) upstream.send(m.toString());
      });
      upstream.on("message", (m) => client.readyState === WebSocket.OPEN && client.send(m.toString()));
      client.on("message", (m) =>
        upstream.readyState === WebSocket.OPEN ? upstream.send(m.toString()) : pending.push(m),
      );
      const end = () => {
        upstream.terminate();
        client.terminate();
      };
      upstream.on("close", end);
      upstream.on("error", end);
      client.on("close", end);
      return;
    }
    client.on("message", (m) => {
      const id = idOf(m.toString());
      if (state.mode === "huge") {
        client.send(`{"jsonrpc":"2.0","id":${id},"result":"${"A".repeat(32 * 1024 * 1024)}"}`);
        return;
      }
      // A subscription id of the wrong type, then a notification with the wrong shape.
      client.send(`{"jsonrpc":"2.0","id":${id},"result":"not-a-subscription"}`);
      client.send('{"jsonrpc":"2.0","method":"signatureNotification","params":{"result":"x","subscription":"y"}}');
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const state: HostileUpstream = {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    mode,
    seen,
    hugeBytesSent: () => hugeSent,
    reset() {
      seen.length = 0;
      hugeSent = 0;
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return state;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function forward(real: URL, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: real.hostname,
        port: real.port,
        path: real.pathname,
        method: "POST",
        headers: { "content-type": "application/json" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function methodOf(body: string): string {
  return /"method"\s*:\s*"([A-Za-z]+)"/.exec(body)?.[1] ?? "unknown";
}

function idOf(body: string): string {
  return /"id"\s*:\s*("[^"]*"|\d+)/.exec(body)?.[1] ?? "1";
}

/** The answer, spoilt as `mode` says. Works on the text: its integers may exceed 2^53. */
function spoil(text: string, mode: HostileMode, method: string, n: number): string {
  const at = text.indexOf('"result":');
  if (at < 0) return text; // the node's own error: passed on
  const head = text.slice(0, at + '"result":'.length);
  const [result, tail] = splitResult(text.slice(head.length));
  switch (mode) {
    case "wrong-types":
      return head + (result.startsWith('"') ? "12345" : '"a string instead"') + tail;
    case "missing-fields":
      return head + dropFirstFields(result) + tail;
    case "past-u64": {
      let i = 0;
      const spoilt = result.replace(/(?<=[:[,]\s*)-?\d+(?=\s*[,\]}])/g, () => (i++ % 2 === 0 ? PAST_U64 : "-5"));
      // A bare integer result (getSlot) has no delimiter before it.
      return head + (/^\d+$/.test(result.trim()) ? PAST_U64 : spoilt) + tail;
    }
    case "lying":
      return head + lie(result, method, n) + tail;
    default:
      return text;
  }
}

/** The result's JSON text and what follows it (`,"id":1}`), found by matching brackets. */
function splitResult(rest: string): [string, string] {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (depth === 0) return [rest.slice(0, i), rest.slice(i)];
      depth--;
    } else if (c === "," && depth === 0) return [rest.slice(0, i), rest.slice(i)];
  }
  return [rest, ""];
}

function dropFirstFields(result: string): string {
  const value = JSON.parse(result.replace(/(?<=[:[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '"$1"')) as unknown;
  const drop = (o: unknown): unknown => {
    if (Array.isArray(o)) return o.map((item) => (item !== null && typeof item === "object" ? drop(item) : item));
    if (o === null || typeof o !== "object") return undefined;
    const entries = Object.entries(o as Record<string, unknown>);
    // `{context, value}`: keep the context, spoil the value's items.
    if ("context" in (o as object) && "value" in (o as object)) {
      const inner = (o as { value: unknown }).value;
      return { context: (o as { context: unknown }).context, value: inner === null ? null : drop(inner) };
    }
    return Object.fromEntries(entries.slice(1));
  };
  const dropped = drop(value);
  return dropped === undefined ? "{}" : JSON.stringify(dropped);
}

/** A lying node: slots back by 1,000 on every other answer, statuses and blockhashes from the future. */
function lie(result: string, method: string, n: number): string {
  const back = (slot: string) => String(BigInt(slot) > 1000n ? BigInt(slot) - 1000n : 0n);
  if (method === "getSlot" || method === "getBlockHeight") return n % 2 === 1 ? back(result.trim()) : result;
  const slot = /"context":\{[^}]*"slot":(\d+)/.exec(result)?.[1];
  if (slot === undefined) return result;
  const future = String(BigInt(slot) + 1000n);
  if (method === "getSignatureStatuses") {
    // Every unknown signature reported finalized, at a slot the node has not reached.
    return result.replace(
      /(?<=[[,])null(?=[,\]])/g,
      `{"slot":${future},"confirmations":null,"err":null,"status":{"Ok":null},"confirmationStatus":"finalized"}`,
    );
  }
  if (method === "getLatestBlockhash") {
    const blockhash = bs58.encode(randomBytes(32));
    return result
      .replace(/"blockhash":"[1-9A-HJ-NP-Za-km-z]+"/, `"blockhash":"${blockhash}"`)
      .replace(/"lastValidBlockHeight":\d+/, `"lastValidBlockHeight":${String(BigInt(slot) + 100_000n)}`);
  }
  return n % 2 === 1 ? result.replace(`"slot":${slot}`, `"slot":${back(slot)}`) : result;
}
