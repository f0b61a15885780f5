/**
 * Every Connect error answer over JSON carries a `code`, on every path a Connect request can take: the lean
 * unary path, the router behind the request gate, the 404/405/415 answers for RPC paths, bodies over the
 * limit, bodies that do not decompress, missing keys, bad timeouts, deadlines. Each request is a real
 * HTTP/1.1 or HTTP/2 exchange with a real server on port 0 that has an asynchronous pre-handler in front
 * of Connect, as the gateway has (the demo page's), since that changes when an HTTP/2 body is read.
 * The cases are enumerated (every combination below), not sampled.
 */
import http from "node:http";
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDemoHandler } from "../../src/demo/demo-handler.ts";
import { API_KEY, startTestServer, SLOW_PROGRAM, TOKEN_PROGRAM } from "./helpers.ts";
import type { TestServer } from "./helpers.ts";

const LIMIT = 64 * 1024;
const CONNECT_TYPE = /^application\/(?:json|proto|connect\+(?:json|proto))\s*(?:;.*)?$/i;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ readMaxBytes: LIMIT, preHandlers: [createDemoHandler({ path: "/demo" })] });
});
afterAll(async () => {
  await server.listening.close({ timeoutMs: 100 });
});

interface Case {
  http2: boolean;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
}

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/** Sends one case; resolves with the answer, or with status -1 if none came within `ms`. */
function send(c: Case, ms = 5000): Promise<Answer> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (answer: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const timer = setTimeout(() => {
      done({ status: -1, contentType: "", body: "(no answer)" });
      cleanup();
    }, ms);
    let cleanup = () => {};
    if (c.http2) {
      const session = http2.connect(server.url);
      cleanup = () => session.destroy();
      session.on("error", () => done({ status: 0, contentType: "", body: "(session error)" }));
      // (Node's client ends a DELETE at once unless told a body follows.)
      const req = session.request(
        { ":method": c.method, ":path": c.path, ...c.headers },
        { endStream: c.body === undefined },
      );
      const chunks: Buffer[] = [];
      let headers: http2.IncomingHttpHeaders = {};
      req.on("response", (h) => (headers = h));
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        done({
          status: Number(headers[":status"]),
          contentType: String(headers["content-type"] ?? ""),
          body: Buffer.concat(chunks).toString(),
        });
        session.close();
      });
      req.on("error", () => done({ status: 0, contentType: "", body: "(stream error)" }));
      // A body of "" is sent as its own empty DATA frame ending the stream, as Node's client does.
      if (c.body === undefined) req.end();
      else req.end(c.body);
    } else {
      // With its length: Node's client frames no body of a DELETE by itself.
      const headers =
        c.body === undefined ? c.headers : { ...c.headers, "content-length": String(Buffer.byteLength(c.body)) };
      const req = http.request(
        { host: "127.0.0.1", port: server.port, method: c.method, path: c.path, headers, agent: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () =>
            done({
              status: res.statusCode ?? 0,
              contentType: String(res.headers["content-type"] ?? ""),
              body: Buffer.concat(chunks).toString(),
            }),
          );
        },
      );
      cleanup = () => req.destroy();
      req.on("error", () => done({ status: 0, contentType: "", body: "(connection error)" }));
      req.end(c.body);
    }
  });
}

const UNARY = "/solgate.v1.ProgramService/ListProgramAccounts";
const STREAM = "/solgate.v1.TransactionService/WatchStatus";
const VALID = JSON.stringify({ programId: TOKEN_PROGRAM });

/** Connect requests: JSON content types (and none, for GET), every way a request can go wrong at the HTTP level. */
function cases(): Case[] {
  const out: Case[] = [];
  const auth = { authorization: `Bearer ${API_KEY}` };
  const json = { "content-type": "application/json" };
  for (const h2 of [false, true]) {
    const add = (method: string, path: string, headers: Record<string, string>, body?: string | Buffer) =>
      out.push({ http2: h2, method, path, headers, body });
    for (const withKey of [true, false]) {
      const key = withKey ? auth : {};
      // Connect GET: without its query, with a broken one, with an unknown encoding, on a method that is not side-effect free.
      add("GET", UNARY, key);
      add("GET", `${UNARY}?connect=v1&encoding=json&message=%7B`, key);
      add("GET", `${UNARY}?connect=v1&encoding=xml&message=%7B%7D`, key);
      add("GET", `${UNARY}?connect=v1&encoding=json&message=%7B%7D&compression=gzip`, key);
      add("GET", `/grpc.health.v1.Health/Check?connect=v1&encoding=json&message=%7B%7D`, key);
      for (const method of ["PUT", "DELETE", "PATCH"]) add(method, UNARY, { ...key, ...json }, VALID);
      // Content types Connect does not take for this method, or spells differently.
      for (const type of ["application/json; charset=latin1", "application/json;charset=utf-16", "text/json"])
        add("POST", UNARY, { ...key, "content-type": type }, VALID);
      add("POST", UNARY, key, VALID);
      // Compressed bodies: empty, not compressed at all, an unknown compression.
      for (const encoding of ["gzip", "br", "zstd", "identity"])
        for (const body of ["", "{}", "not compressed"])
          add("POST", UNARY, { ...key, ...json, "content-encoding": encoding }, body);
      // Bodies: empty, not JSON, the wrong shape, over the read limit.
      for (const body of ["", "{", "[]", "null", '{"programId":5}', '{"nope":1}', "x".repeat(LIMIT + 10)])
        add("POST", UNARY, { ...key, ...json }, body);
      // Protocol headers.
      add("POST", UNARY, { ...key, ...json, "connect-protocol-version": "2" }, VALID);
      for (const timeout of ["abc", "-1", "99999999999", "0"])
        add("POST", UNARY, { ...key, ...json, "connect-timeout-ms": timeout }, VALID);
      // A deadline that passes while the call runs.
      add(
        "POST",
        UNARY,
        { ...key, ...json, "connect-timeout-ms": "50" },
        JSON.stringify({ programId: SLOW_PROGRAM, cursor: "400" }),
      );
      // Paths: an unknown method, an unknown service, a server stream called as unary JSON.
      add("POST", "/solgate.v1.ProgramService/Nope", { ...key, ...json }, VALID);
      add("POST", "/solgate.v1.Nope/ListProgramAccounts", { ...key, ...json }, VALID);
      add("POST", STREAM, { ...key, ...json }, "{}");
    }
  }
  return out;
}

describe("Connect JSON errors", () => {
  it("every error answer to a Connect JSON request comes, is not a 500, and has a code", async () => {
    const all = cases();
    const problems: string[] = [];
    let errors = 0;
    for (let i = 0; i < all.length; i += 8) {
      const batch = all.slice(i, i + 8);
      const answers = await Promise.all(batch.map((c) => send(c)));
      answers.forEach((a, j) => {
        const c = batch[j];
        const what = `${c.http2 ? "h2" : "h1"} ${c.method} ${c.path.slice(0, 70)} ${JSON.stringify(c.headers).replace(API_KEY, "KEY")} body ${JSON.stringify(String(c.body ?? "").slice(0, 20))}`;
        if (a.status === -1 || a.status === 0) return problems.push(`${what}: ${a.body}`);
        if (a.status >= 500 && a.status !== 503 && a.status !== 501) return problems.push(`${what}: HTTP ${a.status}`);
        if (a.status === 200) return;
        errors++;
        let code: unknown;
        try {
          code = (JSON.parse(a.body) as { code?: unknown }).code;
        } catch {
          code = undefined;
        }
        // A content type that is not Connect's gets the router's bare status (gRPC clients and the Connect spec read it).
        const type = c.headers["content-type"] ?? "";
        if (a.body === "" && (a.status === 415 || a.status === 405) && type !== "" && !CONNECT_TYPE.test(type)) return;
        if (!a.contentType.startsWith("application/json") || typeof code !== "string" || code === "")
          problems.push(`${what}: HTTP ${a.status} ${a.contentType || "(no content type)"} ${JSON.stringify(a.body)}`);
      });
    }
    expect(errors).toBeGreaterThan(100);
    expect(problems).toEqual([]);
  }, 120_000);
});
