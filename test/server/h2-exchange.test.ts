/**
 * HTTP/2 exchanges (src/server/h2-exchange.ts) answer as Node's compatibility layer does. Two test servers
 * with REST, one taking REST reads as exchanges and one with exchanges off, get the same GETs over h2c, and
 * each answer — status, headers, body — must be the same. A probe route says which kind of request served
 * it, so the comparison is known to cover exchanges. The lean path's gRPC calls over exchanges are compared
 * with the router in unary-path.test.ts; the Connect conformance suite runs over them too.
 */
import type { ServerResponse } from "node:http";
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRestHandler } from "../../src/rest/rest-handler.ts";
import type { RestHandler } from "../../src/rest/rest-handler.ts";
import { H2Request } from "../../src/server/h2-exchange.ts";
import type { PreHandler } from "../../src/server/http-handler.ts";
import { API_KEY, BAD_PROGRAM, BUG_PROGRAM, startTestServer, TOKEN_PROGRAM, UPSTREAM_PROGRAM } from "./helpers.ts";
import type { TestServer } from "./helpers.ts";

/** Answers GET /probe, and any request marked `x-probe`, with the kind of request it was given. */
const probe: PreHandler = (req, res) => {
  if (req.url !== "/probe" && req.headers["x-probe"] === undefined) return false;
  const kind = (req as unknown) instanceof H2Request ? "exchange" : req.constructor.name;
  (res as ServerResponse).writeHead(200, { "content-type": "text/plain" }).end(kind);
  return true;
};

async function restServer(exchanges: boolean): Promise<TestServer> {
  let rest: RestHandler | undefined;
  return startTestServer({
    inProcessHandlers: (context) => [(rest = createRestHandler({ ...context, openapi: "{}" })).handle],
    preHandlers: [probe],
    directGets: (path) => path === "/probe" || rest?.answersInOneWrite(path) === true,
    h2Exchanges: exchanges,
  });
}

let direct: TestServer;
let compat: TestServer;
beforeAll(async () => {
  [direct, compat] = await Promise.all([restServer(true), restServer(false)]);
});
afterAll(async () => {
  await Promise.all([direct.listening.close({ timeoutMs: 1000 }), compat.listening.close({ timeoutMs: 1000 })]);
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function get(port: number, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({ ":method": "GET", ":path": path, ...headers });
    const chunks: Buffer[] = [];
    let status = 0;
    const seen: Record<string, string> = {};
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      for (const [name, value] of Object.entries(h))
        if (!name.startsWith(":") && value !== undefined) seen[name] = name === "date" ? "(a date)" : String(value);
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      session.close();
      resolve({ status, headers: seen, body: Buffer.concat(chunks).toString() });
    });
    stream.on("error", reject);
    stream.end();
  });
}

const auth = { authorization: `Bearer ${API_KEY}` };
const accounts = (program: string, query = "") => `/v1/localnet/programs/${program}/accounts${query}`;
const CASES: [string, string, Record<string, string>][] = [
  ["an answer", accounts(TOKEN_PROGRAM), auth],
  ["an answer to a query", accounts(TOKEN_PROGRAM, "?limit=1&dataSize=165"), auth],
  ["a Solgate error with details", accounts(BAD_PROGRAM), auth],
  ["a retryable error (Retry-After)", accounts(UPSTREAM_PROGRAM), auth],
  ["an unexpected error", accounts(BUG_PROGRAM), auth],
  ["an invalid query", accounts(TOKEN_PROGRAM, "?limit=abc"), auth],
  ["no key", accounts(TOKEN_PROGRAM), {}],
  ["a wrong key", accounts(TOKEN_PROGRAM), { authorization: "Bearer wrong" }],
  ["an unknown REST path", "/v1/localnet/nothing/here", auth],
  ["a method REST does not take on a path", "/v1/localnet/transactions", auth],
  ["an unimplemented service", "/v1/localnet/network/fees", auth],
  ["a browser's call (CORS)", accounts(TOKEN_PROGRAM), { ...auth, origin: "https://app.example" }],
  ["a watch-shaped path that does not decode", "/v1/localnet/transactions/%zz/events", auth],
  ["a path that does not decode", "/v1/localnet/programs/%zz/accounts", auth],
];

describe("HTTP/2 exchanges", () => {
  it("take the GETs the server names, and only those", async () => {
    expect((await get(direct.port, "/probe", {})).body).toBe("exchange");
    expect((await get(compat.port, "/probe", {})).body).toBe("Http2ServerRequest");
  });

  it("take the lean path's unary calls (one without a key passes the lean path by, to the probe)", async () => {
    const call = (port: number, contentType: string) =>
      new Promise<string>((resolve, reject) => {
        const session = http2.connect(`http://127.0.0.1:${port}`);
        session.on("error", reject);
        const path = "/solgate.v1.ProgramService/ListProgramAccounts";
        const stream = session.request({
          ":method": "POST",
          ":path": path,
          "content-type": contentType,
          "x-probe": "1",
        });
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          session.close();
          resolve(Buffer.concat(chunks).toString());
        });
        stream.on("error", reject);
        stream.end(Buffer.alloc(5));
      });
    expect(await call(direct.port, "application/grpc")).toBe("exchange");
    expect(await call(compat.port, "application/grpc")).toBe("Http2ServerRequest");
    // A content type the lean path does not take stays with the compatibility layer.
    expect(await call(direct.port, "application/grpc+json")).toBe("Http2ServerRequest");
  });

  for (const [name, path, headers] of CASES) {
    it(`answer ${name} as Node's compatibility layer does`, async () => {
      const id = { "x-request-id": `same-${name.replaceAll(/\W+/g, "-")}` };
      const onDirect = await get(direct.port, path, { ...headers, ...id });
      const onCompat = await get(compat.port, path, { ...headers, ...id });
      expect(onDirect).toEqual(onCompat);
      expect(onDirect.headers.date).toBe("(a date)");
    });
  }

  it("survive a client that resets its stream before the answer", async () => {
    const session = http2.connect(`http://127.0.0.1:${direct.port}`);
    const stream = session.request({ ":method": "GET", ":path": accounts(TOKEN_PROGRAM), ...auth });
    stream.close(http2.constants.NGHTTP2_CANCEL);
    await new Promise((r) => stream.once("close", r));
    session.close();
    expect((await get(direct.port, accounts(TOKEN_PROGRAM), auth)).status).toBe(200);
  });

  it("leave nothing in flight once answered: the server closes at once", async () => {
    const server = await restServer(true);
    for (const [, path, headers] of CASES) await get(server.port, path, headers);
    const started = Date.now();
    await server.listening.close({ timeoutMs: 5000 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(JSON.stringify(server.logs)).not.toContain("shutdown deadline reached");
  });
});
