/**
 * A local HTTP server that answers JSON-RPC with recorded node output and can misbehave on cue
 * (429 with Retry-After, 503, a stall, a connection reset). Faults a real node cannot be made to
 * produce on demand, which is why the upstream tests use it.
 */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";

const FIXTURES = new URL("../fixtures/solana/rpc/", import.meta.url);

/** The raw text of a recorded response (kept as text: its integers exceed 2^53). */
export function fixtureText(name: string): string {
  return readFileSync(new URL(name, FIXTURES), "utf8");
}

/** What the server does with one request. */
export type Behaviour =
  | { kind: "fixture"; name: string; delayMs?: number; chunkBytes?: number }
  | { kind: "json"; body: string; delayMs?: number; chunkBytes?: number }
  | { kind: "status"; status: number; headers?: Record<string, string>; body?: string }
  | { kind: "stall" }
  | { kind: "reset" };

export interface SeenRequest {
  method: string;
  at: number;
  path: string;
}

export interface FaultServer {
  url: string;
  /** Behaviours for the next requests, consumed in order; when empty, `fallback` answers. */
  queue: Behaviour[];
  fallback: Behaviour;
  seen: SeenRequest[];
  /** Most requests in flight at once. */
  maxInFlight: number;
  /** Sees each request body. */
  onBody?: (body: string) => void;
  close(): Promise<void>;
}

export async function startFaultServer(
  fallback: Behaviour = { kind: "fixture", name: "getEpochInfo.json" },
): Promise<FaultServer> {
  let inFlight = 0;
  const stalled = new Set<ServerResponse>();
  const state: FaultServer = {
    url: "",
    queue: [],
    fallback,
    seen: [],
    maxInFlight: 0,
    close: async () => {
      for (const res of stalled) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    res.on("close", () => inFlight--);
    const body = await readBody(req);
    state.onBody?.(body);
    let method = "unknown";
    let id: unknown = 1;
    try {
      const parsed = JSON.parse(body) as { method?: string; id?: unknown };
      method = parsed.method ?? "unknown";
      id = parsed.id;
    } catch {
      // not JSON: recorded as "unknown"
    }
    state.seen.push({ method, at: performance.now(), path: req.url ?? "/" });
    const behaviour = state.queue.shift() ?? state.fallback;
    switch (behaviour.kind) {
      case "stall":
        stalled.add(res);
        return; // never answers
      case "reset":
        req.socket.destroy();
        return;
      case "status":
        res.writeHead(behaviour.status, { "content-type": "text/plain", ...behaviour.headers });
        res.end(behaviour.body ?? "");
        return;
      case "fixture":
      case "json": {
        if (behaviour.delayMs) await new Promise((r) => setTimeout(r, behaviour.delayMs));
        const text = behaviour.kind === "fixture" ? fixtureText(behaviour.name) : behaviour.body;
        // Echo the request id, as a node does; the recorded id is someone else's.
        const answer = text.replace(/"id":\s*[0-9]+/, `"id": ${JSON.stringify(id)}`);
        res.writeHead(200, { "content-type": "application/json" });
        if (!behaviour.chunkBytes) {
          res.end(answer);
          return;
        }
        // Small writes, each flushed on its own, so the client sees many chunks with split tokens.
        const bytes = Buffer.from(answer);
        for (let i = 0; i < bytes.length; i += behaviour.chunkBytes) {
          res.write(bytes.subarray(i, i + behaviour.chunkBytes));
          await new Promise((r) => setImmediate(r));
        }
        res.end();
        return;
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/secret-api-key-path?api-key=hunter2`;
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
