/**
 * The baseline of hot-path-bench.ts, run as its own process: bare `node:http` (HTTP/1.1) and
 * `node:http2` (h2c) servers that answer recorded responses — the exact status, headers, body and
 * (for gRPC over HTTP/2) trailers the gateway answered — after the same Bearer check the gateway makes
 * (the gateway's own key checker: SHA-256 and timingSafeEqual), with a fresh request id as the gateway
 * sends. Nothing else: what it costs is what the runtime costs to read a request and write those bytes.
 *
 *   npx node test/bench/bare-server.ts <routes.json>     (prints {"h1":port,"h2":port} on stdout)
 *
 * routes.json: { "key": "...", "requestId"?: false, "routes": [{ "method", "path", "contentType", "status",
 * "headers", "body" (base64), "trailers"? }] }: a route is chosen by method, path and request content-type (gRPC,
 * gRPC-Web and Connect share a path). The request body is read (and dropped) before answering, as a server must.
 * `requestId: false` sends no `x-request-id` (the baseline that sends only what HTTP needs).
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { createApiKeyChecker } from "../../src/server/auth.ts";

interface RecordedRoute {
  method: string;
  path: string;
  contentType: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  trailers?: Record<string, string>;
}

const file = process.argv[2];
if (file === undefined) throw new Error("usage: bare-server.ts <routes.json>");
const spec = JSON.parse(readFileSync(file, "utf8")) as { key: string; requestId?: boolean; routes: RecordedRoute[] };
const withRequestId = spec.requestId !== false;
const checker = createApiKeyChecker([spec.key]);
const routes = new Map(
  spec.routes.map((r) => [`${r.method} ${r.path} ${r.contentType}`, { ...r, bytes: Buffer.from(r.body, "base64") }]),
);
const UNAUTHENTICATED = Buffer.from(JSON.stringify({ code: "unauthenticated", message: "invalid API key" }));

const h1 = http.createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    const route = routes.get(`${req.method} ${req.url} ${req.headers["content-type"] ?? ""}`);
    if (route === undefined) {
      res.writeHead(404).end();
      return;
    }
    if (!checker.isAuthorized(req.headers.authorization)) {
      res.writeHead(401, { "content-type": "application/json" }).end(UNAUTHENTICATED);
      return;
    }
    res
      .writeHead(route.status, {
        ...route.headers,
        ...(withRequestId ? { "x-request-id": randomUUID() } : {}),
        "content-length": route.bytes.length,
      })
      .end(route.bytes);
  });
});
h1.keepAliveTimeout = 60_000;

const h2 = http2.createServer();
h2.on("stream", (stream, headers) => {
  stream.on("data", () => {});
  stream.on("end", () => {
    const route = routes.get(`${headers[":method"]} ${headers[":path"]} ${headers["content-type"] ?? ""}`);
    if (route === undefined) {
      stream.respond({ ":status": 404 }, { endStream: true });
      return;
    }
    if (!checker.isAuthorized(headers.authorization as string | undefined)) {
      stream.respond({ ":status": 401, "content-type": "application/json" });
      stream.end(UNAUTHENTICATED);
      return;
    }
    const trailers = route.trailers;
    stream.respond(
      { ":status": route.status, ...route.headers, ...(withRequestId ? { "x-request-id": randomUUID() } : {}) },
      trailers === undefined ? {} : { waitForTrailers: true },
    );
    if (trailers !== undefined) stream.on("wantTrailers", () => stream.sendTrailers(trailers));
    stream.end(route.bytes);
  });
});

await Promise.all([h1, h2].map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))));
process.stdout.write(
  `${JSON.stringify({ h1: (h1.address() as AddressInfo).port, h2: (h2.address() as AddressInfo).port, pid: process.pid })}\n`,
);
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
