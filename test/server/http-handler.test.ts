/**
 * The HTTP handler chain (src/server/http-handler.ts) on a real node:http server (port 0): pre-handlers
 * are tried in order, whether they answer at once or later; the first that takes a request ends the
 * chain; Connect gets what none took; and a pre-handler that throws or rejects is logged and answered
 * with a JSON 500 carrying the request id, never a hang.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpHandler } from "../../src/server/http-handler.ts";
import type { PreHandler } from "../../src/server/http-handler.ts";
import { createLogger } from "../../src/server/logger.ts";

const logs: Record<string, unknown>[] = [];
const calls: string[] = [];
let server: http.Server;
let port: number;

/** Answers with its name when the path is /<name>; `later`: decides after a timer. */
function named(name: string, later: boolean): PreHandler {
  return (req, res) => {
    calls.push(name);
    const mine = req.url === `/${name}`;
    const answer = () => {
      if (mine) (res as http.ServerResponse).writeHead(200).end(name);
      return mine;
    };
    return later ? new Promise((resolve) => setTimeout(() => resolve(answer()), 5)) : answer();
  };
}

const throwsAtOnce: PreHandler = (req) => {
  if (req.url === "/throw") throw new Error("thrown at once");
  return false;
};
const rejectsLater: PreHandler = async (req) => {
  if (req.url === "/reject") throw new Error("rejected later");
  return false;
};

beforeAll(async () => {
  const logger = createLogger({
    level: "error",
    destination: { write: (line: string) => logs.push(JSON.parse(line)) },
  });
  const handler = createHttpHandler({
    preHandlers: [throwsAtOnce, named("a", false), named("b", true), rejectsLater, named("c", false)],
    connect: (_req, res) => (res as http.ServerResponse).writeHead(200).end("connect"),
    logger,
  });
  server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

async function get(path: string): Promise<{ status: number; body: string; id: string | undefined }> {
  calls.length = 0;
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers: { "x-request-id": `id${path.replace("/", "-")}` },
  });
  return { status: res.status, body: await res.text(), id: res.headers.get("x-request-id") ?? undefined };
}

describe("the HTTP handler chain", () => {
  it("stops at the first pre-handler that takes the request, at once or later", async () => {
    expect(await get("/a")).toMatchObject({ status: 200, body: "a" });
    expect(calls).toEqual(["a"]);
    expect(await get("/b")).toMatchObject({ status: 200, body: "b" });
    expect(calls).toEqual(["a", "b"]);
    expect(await get("/c")).toMatchObject({ status: 200, body: "c" });
    expect(calls).toEqual(["a", "b", "c"]);
  });

  it("hands Connect what no pre-handler took", async () => {
    expect(await get("/other")).toMatchObject({ status: 200, body: "connect", id: "id-other" });
    expect(calls).toEqual(["a", "b", "c"]);
  });

  it("answers a pre-handler that throws or rejects with a logged JSON 500", async () => {
    for (const path of ["/throw", "/reject"]) {
      const res = await get(path);
      expect(res.status, path).toBe(500);
      expect(JSON.parse(res.body)).toEqual({
        code: "internal",
        message: "internal error",
        requestId: `id-${path.slice(1)}`,
      });
      expect(logs.find((l) => l.requestId === `id-${path.slice(1)}`)).toMatchObject({
        msg: "request handler failed",
        url: path,
      });
    }
  });
});
