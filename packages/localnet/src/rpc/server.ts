/**
 * HTTP + JSON-RPC 2.0 framing as an agave node does it: single calls and batches, notifications,
 * -32700 / -32600 / -32601 / -32602 / -32603, `GET /health`, a 50 kB body limit, plus the fault
 * layer (never applied when every call of a request is a control method).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { Faults } from "../faults.ts";
import { settleZstdFrames } from "../accounts/zstd-frame.ts";
import { parseJson, stringifyJson } from "./json.ts";
import { JsonRpcError, RpcErrorCode, acceptsNamedParams, type MethodContext, type MethodTable } from "./protocol.ts";

/** What the server needs. */
export interface RpcServerOptions {
  /** All public methods (core, accounts, extra tables), merged. */
  methods: MethodTable;
  /** Control methods (`localnet_*`): never subject to faults. */
  controlMethods: MethodTable;
  /** Builds the context each call sees (the lag fault lives there). */
  context: () => MethodContext;
  faults: Faults;
  /** Bytes; agave's MAX_REQUEST_BODY_SIZE is 50 kB. */
  maxBodyBytes?: number;
  /** WebSocket upgrades (PubSub) on the same port. */
  onUpgrade?: (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Where unexpected handler errors go (they become -32603). */
  onInternalError?: (err: unknown) => void;
  /** Other paths served on the same port (the block engine's `/api/v1/...`); every other path is JSON-RPC. */
  routes?: Readonly<Record<string, Route>>;
}

/** A path served beside the JSON-RPC root (the fault layer applies to it too). */
export interface Route {
  /** Answers a POST body (JSON-RPC framing is the route's own). */
  post?: (body: string, query: URLSearchParams) => Promise<{ body: string | null; headers?: Record<string, string> }>;
  /** Answers a GET with a JSON value. */
  get?: (query: URLSearchParams) => unknown;
}

/** A listening JSON-RPC server. */
export interface RpcServer {
  listen(port: number, host: string): Promise<number>;
  /** Handles one request body (as the HTTP path does, minus faults); null for "no response". */
  handleBody(body: string): Promise<string | null>;
  close(): Promise<void>;
}

type Id = string | number | null;

interface ErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

const errorResponse = (id: Id, error: ErrorObject) => ({ jsonrpc: "2.0", error, id });

function isValidId(id: unknown): id is Id {
  return (
    id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) || typeof id === "bigint"
  );
}

/** Creates the server (not yet listening). */
export function createRpcServer(options: RpcServerOptions): RpcServer {
  const maxBodyBytes = options.maxBodyBytes ?? 50 * 1024;
  const stalled = new Set<http.ServerResponse>();

  async function call(request: unknown): Promise<object | null> {
    if (request === null || typeof request !== "object" || Array.isArray(request)) {
      return errorResponse(null, { code: RpcErrorCode.INVALID_REQUEST, message: "Invalid request" });
    }
    const { jsonrpc, method, params, id } = request as Record<string, unknown>;
    const isNotification = !("id" in request);
    if (jsonrpc !== "2.0" || typeof method !== "string" || (!isNotification && !isValidId(id))) {
      return errorResponse(null, { code: RpcErrorCode.INVALID_REQUEST, message: "Invalid request" });
    }
    const replyId = (isNotification ? null : id) as Id;
    if (params !== undefined && (params === null || typeof params !== "object")) {
      return isNotification
        ? null
        : errorResponse(replyId, { code: RpcErrorCode.INVALID_REQUEST, message: "Invalid request" });
    }
    const handler = Object.hasOwn(options.controlMethods, method)
      ? options.controlMethods[method]
      : Object.hasOwn(options.methods, method)
        ? options.methods[method]
        : undefined;
    if (handler === undefined) {
      return isNotification
        ? null
        : errorResponse(replyId, { code: RpcErrorCode.METHOD_NOT_FOUND, message: "Method not found" });
    }
    let result: unknown;
    try {
      let positional = (params as unknown[] | undefined) ?? [];
      if (params !== undefined && !Array.isArray(params)) {
        if (!acceptsNamedParams(handler)) {
          throw new JsonRpcError(RpcErrorCode.INVALID_PARAMS, "Invalid params: invalid type: map, expected a tuple.");
        }
        positional = [params];
      }
      result = await handler(positional, options.context());
      const frames = settleZstdFrames();
      if (frames !== null) await frames;
    } catch (err) {
      if (isNotification) return null;
      if (err instanceof JsonRpcError) {
        const error: ErrorObject = { code: err.code, message: err.message };
        if (err.data !== undefined) error.data = err.data;
        return errorResponse(replyId, error);
      }
      options.onInternalError?.(err);
      return errorResponse(replyId, { code: RpcErrorCode.INTERNAL_ERROR, message: "Internal error" });
    }
    return isNotification ? null : { jsonrpc: "2.0", result: result === undefined ? null : result, id: replyId };
  }

  async function handleParsed(parsed: unknown): Promise<string | null> {
    if (Array.isArray(parsed)) {
      if (parsed.length === 0)
        return stringifyJson(errorResponse(null, { code: RpcErrorCode.INVALID_REQUEST, message: "Invalid request" }));
      const responses: object[] = [];
      // Calls run in order: a batch that sends then queries sees its own send.
      for (const request of parsed) {
        const response = await call(request);
        if (response !== null) responses.push(response);
      }
      return responses.length === 0 ? null : stringifyJson(responses);
    }
    const response = await call(parsed);
    return response === null ? null : stringifyJson(response);
  }

  function parse(body: string): { ok: true; value: unknown } | { ok: false } {
    try {
      return { ok: true, value: parseJson(body) };
    } catch {
      return { ok: false };
    }
  }

  const PARSE_ERROR = stringifyJson(errorResponse(null, { code: RpcErrorCode.PARSE_ERROR, message: "Parse error" }));

  async function handleBody(body: string): Promise<string | null> {
    const parsed = parse(body);
    return parsed.ok ? handleParsed(parsed.value) : PARSE_ERROR;
  }

  function isControlOnly(parsed: { ok: true; value: unknown } | { ok: false }): boolean {
    if (!parsed.ok) return false;
    const calls = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
    return (
      calls.length > 0 &&
      calls.every(
        (c) =>
          c !== null &&
          typeof c === "object" &&
          Object.hasOwn(options.controlMethods, String((c as { method?: unknown }).method)),
      )
    );
  }

  function send(res: http.ServerResponse, status: number, body: string | null, headers: Record<string, string> = {}) {
    if (res.destroyed) return;
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
    res.end(body ?? "");
  }

  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/health") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return;
    }
    const url = options.routes === undefined ? null : new URL(req.url ?? "/", "http://localhost");
    const route =
      url === null || !Object.hasOwn(options.routes!, url.pathname) ? undefined : options.routes![url.pathname];
    if (req.method === "GET" && route?.get !== undefined) {
      send(res, 200, stringifyJson(route.get(url!.searchParams)));
      return;
    }
    if (req.method !== "POST" || (route !== undefined && route.post === undefined)) {
      res.writeHead(405, { allow: route === undefined ? "POST" : "GET" }).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        if (!tooLarge) {
          tooLarge = true;
          res.writeHead(413, { connection: "close" }).end();
          req.destroy();
        }
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (tooLarge) return;
      const body = Buffer.concat(chunks).toString("utf8");
      void respond(body, res, route?.post === undefined ? undefined : () => route.post!(body, url!.searchParams));
    });
    req.on("error", () => res.destroy());
  });

  async function respond(
    body: string,
    res: http.ServerResponse,
    routed?: () => Promise<{ body: string | null; headers?: Record<string, string> }>,
  ) {
    const parsed = parse(body);
    if (routed !== undefined || !isControlOnly(parsed)) {
      const fault = options.faults.forRequest();
      if (fault.kind === "stall") {
        // Never answered: held until the client gives up or the server closes.
        stalled.add(res);
        res.on("close", () => stalled.delete(res));
        return;
      }
      if (fault.kind === "status") {
        const message = fault.status === 429 ? "Too Many Requests" : "Service Unavailable";
        send(
          res,
          fault.status,
          stringifyJson(errorResponse(null, { code: fault.status, message })),
          fault.status === 429 ? { "retry-after": "1" } : {},
        );
        return;
      }
      if (fault.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    }
    try {
      if (routed !== undefined) {
        const out = await routed();
        send(res, 200, out.body, out.headers);
        return;
      }
      const out = parsed.ok ? await handleParsed(parsed.value) : PARSE_ERROR;
      send(res, 200, out);
    } catch (err) {
      options.onInternalError?.(err);
      send(res, 500, null);
    }
  }

  if (options.onUpgrade) server.on("upgrade", options.onUpgrade);
  server.keepAliveTimeout = 65_000;

  return {
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve((server.address() as AddressInfo).port);
        });
      });
    },
    handleBody,
    close() {
      for (const res of stalled) res.destroy();
      stalled.clear();
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
