/**
 * The HTTP handler chain in front of Connect, the same for HTTP/1.1 and HTTP/2:
 * request id -> CORS (preflights end here) -> pre-handlers in order (REST transcoder, static routes)
 * -> Connect (gRPC, gRPC-Web, Connect) -> 404.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { cors as connectCors } from "@connectrpc/connect";
import { assignRequestId, REQUEST_ID_HEADER } from "./request-id.ts";
import type { Logger } from "./logger.ts";

/** A Node request, HTTP/1.1 or HTTP/2. */
export type NodeRequest = IncomingMessage | Http2ServerRequest;
/** A Node response, HTTP/1.1 or HTTP/2. */
export type NodeResponse = ServerResponse | Http2ServerResponse;
/** A Node request handler. */
export type NodeHandler = (req: NodeRequest, res: NodeResponse) => void;

/**
 * A handler tried before Connect. Returns (or resolves) true when it took the request and answers
 * it, false to pass it on. The request id is in `req.headers["x-request-id"]` already.
 */
export type PreHandler = (req: NodeRequest, res: NodeResponse) => boolean | Promise<boolean>;

/** Which browser origins may call; `"*"` allows any (keys, not cookies, guard the API). */
export type CorsOrigins = "*" | readonly string[];

/** Headers browsers may send and see: Connect's own (the gRPC-Web status headers among them) plus ours, and Retry-After of 429/503 answers. */
export const CORS_ALLOWED_HEADERS = [...connectCors.allowedHeaders, "Authorization", "X-Request-Id"];
export const CORS_EXPOSED_HEADERS = [...connectCors.exposedHeaders, "X-Request-Id", "Retry-After"];
const CORS_ALLOWED_METHODS = [...new Set([...connectCors.allowedMethods, "GET", "POST", "OPTIONS"])];

/** Options of `createHttpHandler`. */
export interface HttpHandlerOptions {
  /** The Connect adapter; called last (its fallback should be `notFound`). */
  connect: NodeHandler;
  preHandlers?: readonly PreHandler[];
  corsOrigins?: CorsOrigins;
  logger: Logger;
}

/** Builds the chain. */
export function createHttpHandler(options: HttpHandlerOptions): NodeHandler {
  const preHandlers = options.preHandlers ?? [];
  const origins = options.corsOrigins ?? "*";
  const failed = (req: NodeRequest, res: NodeResponse, err: unknown) => {
    const requestId = req.headers[REQUEST_ID_HEADER];
    options.logger.error({ err, requestId, url: req.url }, "request handler failed");
    if (!res.headersSent) {
      send(res, 500, { code: "internal", message: "internal error", requestId });
    } else {
      res.destroy();
    }
  };
  // Pre-handlers that answer at once (false: not mine) are called without awaiting their answer: a
  // request reaches the one that takes it in the same tick, and no promise is made unless one returns one.
  const from = (req: NodeRequest, res: NodeResponse, first: number): void => {
    for (let i = first; i < preHandlers.length; i++) {
      const taken = preHandlers[i](req, res);
      if (taken === true) return;
      if (taken === false) continue;
      taken
        .then((yes) => {
          if (!yes) from(req, res, i + 1);
        })
        .catch((err: unknown) => failed(req, res, err));
      return;
    }
    options.connect(req, res);
  };
  return (req, res) => {
    assignRequestId(req, res);
    if (applyCors(req, res, origins)) return;
    try {
      from(req, res, 0);
    } catch (err) {
      failed(req, res, err);
    }
  };
}

/** Adds CORS headers for allowed origins; answers preflights itself (returns true then). */
function applyCors(req: NodeRequest, res: NodeResponse, origins: CorsOrigins): boolean {
  const origin = req.headers.origin;
  if (typeof origin !== "string") return false;
  const allowed = origins === "*" || origins.includes(origin);
  const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
  if (allowed) {
    res.setHeader("Access-Control-Allow-Origin", origins === "*" ? "*" : origin);
    if (origins !== "*") res.setHeader("Vary", "Origin");
    res.setHeader("Access-Control-Expose-Headers", CORS_EXPOSED_HEADERS.join(", "));
  }
  if (!preflight) return false;
  if (allowed) {
    res.setHeader("Access-Control-Allow-Methods", CORS_ALLOWED_METHODS.join(", "));
    res.setHeader("Access-Control-Allow-Headers", CORS_ALLOWED_HEADERS.join(", "));
    res.setHeader("Access-Control-Max-Age", "7200");
  }
  (res as ServerResponse).writeHead(allowed ? 204 : 403).end();
  return true;
}

/**
 * Answers a path no handler took: 404 `not_found` in JSON, except for an RPC (a `/package.Service/Method`
 * path with a gRPC or Connect content type), which gets UNIMPLEMENTED in its own protocol's shape, as gRPC
 * and Connect clients expect of an unknown procedure (the Connect conformance suite checks it).
 */
export function notFound(req: NodeRequest, res: NodeResponse): void {
  if (res.headersSent) return;
  const path = (req.url ?? "").split("?")[0];
  const type = req.headers["content-type"] ?? "";
  if (RPC_PATH.test(path) && RPC_CONTENT_TYPE.test(type)) {
    const message = `${path.slice(1)} is not implemented`;
    if (type.startsWith("application/grpc")) {
      // Trailers-only: the status in the one HEADERS frame (gRPC-Web reads it from the headers too).
      const status = { "content-type": type, "grpc-status": "12", "grpc-message": encodeURIComponent(message) };
      if ("stream" in req && req.httpVersionMajor === 2)
        req.stream.respond({ ":status": 200, ...status }, { endStream: true });
      else (res as ServerResponse).writeHead(200, status).end();
      return;
    }
    send(res, 404, { code: "unimplemented", message });
    return;
  }
  send(res, 404, { code: "not_found", message: `no route for ${req.method} ${path}` });
}

/** `/package.Service/Method`: the path of a gRPC or Connect call. */
const RPC_PATH = /^\/[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+\/[A-Za-z_][\w]*$/;
/** gRPC, gRPC-Web and Connect (unary and streaming) request content types. */
const RPC_CONTENT_TYPE = /^application\/(?:grpc(?:-web)?(?:-text)?(?:\+\w+)?|connect\+\w+|proto|json)(?:;.*)?$/i;

/** Writes a small JSON answer (both Node response types take the same calls at run time). */
export function send(res: NodeResponse, status: number, body: unknown): void {
  (res as ServerResponse).writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

export { REQUEST_ID_HEADER };
