/**
 * The REST transcoder: a pre-handler that answers `/v1/...` paths from the `google.api.http`
 * annotations of the services the server registers, the SSE watch, and `/openapi.json`. A request
 * is matched to a route, authenticated, decoded into the RPC's request message, and sent in process
 * to the server's own Connect handlers (so interceptors apply as on every protocol); the response
 * is rendered in the seed's JSON form. Every failure is a seed-style JSON error, never a 500 unless
 * Solgate itself is broken.
 */
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { create } from "@bufbuild/protobuf";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { SolgateError } from "../errors.ts";
import { assertExplicitValues } from "../request-validation.ts";
import type { ApiKeyChecker } from "../server/auth.ts";
import type { NodeRequest, NodeResponse, PreHandler } from "../server/http-handler.ts";
import type { Logger } from "../server/logger.ts";
import type { HttpSpan, Tracing } from "../server/tracing.ts";
import type { UnaryInvoker } from "../server/unary-invoker.ts";
import { DEFAULT_MAX_BODY_BYTES, readJsonBody } from "./body-reader.ts";
import { restRoutesOf } from "./http-rules.ts";
import type { RestRoute } from "./http-rules.ts";
import { createInProcessCaller, forwardedHeaders } from "./in-process.ts";
import { PathDecodeError } from "./path-template.ts";
import type { PathTemplate } from "./path-template.ts";
import { decodeRequest } from "./request-decoder.ts";
import { restErrorOf } from "./rest-errors.ts";
import type { RestError } from "./rest-errors.ts";
import { renderField, renderMessage } from "./rest-json.ts";
import { isSharedResponse } from "../services/shared-response.ts";
import { serveWatchEvents, SSE_WATCHES } from "./sse-watch.ts";
import type { SseWatch } from "./sse-watch.ts";
import { writeNow } from "../server/turn-writer.ts";
import type { TurnWriter } from "../server/turn-writer.ts";

/** Where the generated OpenAPI document is committed. */
export const OPENAPI_PATH = new URL("../../gen/openapi/solgate.openapi.json", import.meta.url);

/** Options of `createRestHandler`. */
export interface RestHandlerOptions {
  /** The server's Connect handlers (`router.handlers`), interceptors included. */
  handlers: readonly UniversalHandler[];
  /** Unary calls straight to the implementations, through the same interceptors (see in-process.ts). */
  invokeUnary?: UnaryInvoker;
  /** Checked before a request is decoded, so a caller without a key learns nothing else first. */
  auth: ApiKeyChecker;
  logger: Logger;
  /** Largest JSON body accepted; default 64 KiB. */
  maxBodyBytes?: number;
  /** Spans for REST requests (HTTP conventions), parents of their RPC spans; absent when tracing is off. */
  tracing?: Tracing;
  /** The document served at `/openapi.json`; default the committed gen/openapi/solgate.openapi.json. */
  openapi?: string;
  /** Writes each answer; default at once. The server's writes them at the end of the turn (turn-writer.ts). */
  writer?: TurnWriter;
}

/** What `createRestHandler` returns: the pre-handler, and the routes it serves (for docs and tests). */
export interface RestHandler {
  readonly handle: PreHandler;
  /** Whether a GET of `path` is answered in one write (every /v1/ GET but the SSE watch): an HTTP/2 exchange may take it. */
  answersInOneWrite(path: string): boolean;
  readonly routes: readonly RestRoute[];
}

type Match =
  | { kind: "rpc"; route: RestRoute; variables: Record<string, string> }
  | { kind: "watch"; watch: SseWatch; variables: Record<string, string> };

/** Builds the transcoder over the server's handlers. Throws at start for an annotation it cannot serve. */
export function createRestHandler(options: RestHandlerOptions): RestHandler {
  const { logger } = options;
  const routes = restRoutesOf(options.handlers.map((h) => h.method));
  const caller = createInProcessCaller(options.handlers, options.invokeUnary);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const openapi = options.openapi ?? readFileSync(OPENAPI_PATH, "utf8");
  // The SSE routes whose stream the server serves.
  const watches = SSE_WATCHES.filter((w) => options.handlers.some((h) => h.method === w.method));
  const writer = options.writer ?? writeNow;
  const onUnexpected = (err: unknown) => logger.error({ err }, "REST request failed unexpectedly; answered INTERNAL");

  // Requests refused before reaching an RPC get one log line here; the rest are logged by the interceptors.
  const reject = (req: NodeRequest, error: RestError) =>
    logger.info(
      {
        requestId: req.headers["x-request-id"],
        method: req.method,
        path: pathOf(req),
        status: error.status,
        code: error.body.code,
      },
      "rest request refused",
    );

  const handle: PreHandler = (req, res) => {
    const path = pathOf(req);
    if (path === "/openapi.json") {
      if (req.method !== "GET" && req.method !== "HEAD") return false;
      (res as ServerResponse)
        .writeHead(200, { "content-type": "application/json", "cache-control": "public, max-age=300" })
        .end(openapi);
      return true;
    }
    if (!path.startsWith("/v1/") && path !== "/v1") return false;
    const { tracing } = options;
    if (tracing === undefined) return serve(req, res, path, undefined);
    const span = tracing.startHttp(req, res as ServerResponse);
    return span.run(() => serve(req, res, path, span));
  };

  async function serve(
    req: NodeRequest,
    res: NodeResponse,
    path: string,
    span: HttpSpan | undefined,
  ): Promise<boolean> {
    let called = false;
    try {
      const match = matchRoute(req.method ?? "GET", path);
      span?.route(match.kind === "rpc" ? match.route.template.source : match.watch.template.source);
      const keyName = options.auth.assertAuthorized(req.headers.authorization);
      const headers = forwardedHeaders(req.headers);
      if (match.kind === "watch") {
        called = true;
        await serveWatchEvents({
          watch: match.watch,
          transport: caller.transport,
          req,
          res,
          variables: match.variables,
          headers,
          sendError: (error) => writeJson(res, error.status, error.body, error.headers),
          onUnexpected,
        });
        return true;
      }
      const { route } = match;
      const body = route.body === undefined ? undefined : await readJsonBody(req, maxBodyBytes);
      const queryText = queryOf(req);
      const query = queryText === "" ? NO_QUERY : new URLSearchParams(queryText);
      const init = decodeRequest(route, match.variables, query, body);
      // Values given explicitly are held to their documented range even where proto3 reads zero as unset.
      assertExplicitValues(route.method.input, init);
      const input = create(route.method.input, init);
      const abort = new AbortController();
      const onClose = () => abort.abort();
      res.once("close", onClose);
      called = true;
      try {
        const message = (await caller.unary(route.method, input, headers, abort.signal, keyName)) as unknown as Record<
          string,
          unknown
        >;
        const bytes = renderedOf(route, message);
        writer(res, () => writeJsonBytes(res, 200, bytes));
      } finally {
        res.off("close", onClose);
      }
    } catch (e) {
      if (res.headersSent) {
        res.destroy();
        return true;
      }
      if (res.destroyed) return true;
      const error = restErrorOf(e, onUnexpected);
      if (!called) reject(req, error);
      writer(res, () => writeJson(res, error.status, error.body, error.headers));
    }
    return true;
  }

  // The routes a path could fit, by its segment count (a template matches paths of its own count only),
  // in their order: a request tries a few templates, not all of them.
  // Most literal segments first: a path that fits a template's literals (`/transactions/ladder/prepare`) is that
  // resource alone, never also one whose variable happens to take the literal's word (`/transactions/ladder/{id}`).
  const bySegmentCount = new Map<number, RestRoute[]>();
  for (const route of routes) {
    const count = route.template.segmentCount;
    bySegmentCount.set(count, [...(bySegmentCount.get(count) ?? []), route]);
  }
  for (const list of bySegmentCount.values()) list.sort((a, b) => literalsOf(b.template) - literalsOf(a.template));
  const NO_ROUTES: readonly RestRoute[] = [];

  function matchRoute(method: string, path: string): Match {
    const count = segmentCountOf(path);
    const allowed = new Set<string>();
    // The literal count of the first template the path fits: templates with fewer are other resources.
    let fitted = -1;
    for (const route of bySegmentCount.get(count) ?? NO_ROUTES) {
      if (fitted >= 0 && literalsOf(route.template) < fitted) break;
      const variables = matchPath(route.template, path);
      if (variables === undefined) continue;
      if (route.httpMethod === method) return { kind: "rpc", route, variables };
      fitted = literalsOf(route.template);
      allowed.add(route.httpMethod);
    }
    for (const watch of watches) {
      if (count === watch.template.segmentCount && !(fitted >= 0 && literalsOf(watch.template) < fitted)) {
        const variables = matchPath(watch.template, path);
        if (variables === undefined) continue;
        if (method === "GET") return { kind: "watch", watch, variables };
        allowed.add("GET");
      }
    }
    if (allowed.size > 0) {
      const list = [...allowed].sort();
      throw new SolgateError("METHOD_NOT_ALLOWED", `${method} is not allowed on ${path}; use ${list.join(" or ")}`, {
        allowed: list,
      });
    }
    throw new SolgateError("NOT_FOUND", `no REST route for ${method} ${path}`, { path });
  }

  // Asked for every HTTP/2 GET before it is handled: cheap, and it never throws.
  const answersInOneWrite = (url: string) => {
    if (!url.startsWith("/v1/")) return false;
    if (watches.length === 0) return true;
    const path = pathOfUrl(url);
    const count = segmentCountOf(path);
    try {
      return watches.every((w) => count !== w.template.segmentCount || w.template.match(path) === undefined);
    } catch {
      return true; // a path that does not decode: REST answers it with one write (400)
    }
  };
  return { routes, handle, answersInOneWrite };
}

const literalCounts = new WeakMap<PathTemplate, number>();

/** How many of a template's segments are literals (`/v1/{chain}/network/fees`: 3). */
function literalsOf(template: PathTemplate): number {
  let count = literalCounts.get(template);
  if (count === undefined) {
    count = template.source.split("/").filter((segment) => segment !== "" && !segment.includes("{")).length;
    literalCounts.set(template, count);
  }
  return count;
}

function matchPath(template: RestRoute["template"], path: string): Record<string, string> | undefined {
  try {
    return template.match(path);
  } catch (e) {
    if (e instanceof PathDecodeError) {
      throw new SolgateError("INVALID_PARAMETER", e.message, { field: e.fieldPath });
    }
    throw e;
  }
}

/** The number of segments of `path.slice(1).split("/")`, without splitting. */
function segmentCountOf(path: string): number {
  let count = 1;
  for (let i = 1; i < path.length; i++) if (path.charCodeAt(i) === 47 /* "/" */) count++;
  return count;
}

function pathOf(req: NodeRequest): string {
  return pathOfUrl(req.url ?? "/");
}

function pathOfUrl(url: string): string {
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** The query of a URL without one; only read (decodeRequest never changes its query). */
const NO_QUERY: Readonly<URLSearchParams> = new URLSearchParams();

function queryOf(req: NodeRequest): string {
  const url = req.url ?? "";
  const q = url.indexOf("?");
  return q === -1 ? "" : url.slice(q + 1);
}

// A shared response (a cached read) is rendered once per route, not once per request, as the bytes sent.
const renderedShared = new WeakMap<RestRoute, WeakMap<object, Buffer>>();

/** The REST JSON of `message`, the answer of `route`, as UTF-8 bytes. */
function renderedOf(route: RestRoute, message: Record<string, unknown>): Buffer {
  const shared = isSharedResponse(message);
  let byMessage = shared ? renderedShared.get(route) : undefined;
  const cached = byMessage?.get(message);
  if (cached !== undefined) return cached;
  const bytes = Buffer.from(
    JSON.stringify(
      route.responseBody === undefined
        ? renderMessage(route.method.output, message)
        : renderField(route.responseBody, message[route.responseBody.localName]),
    ),
  );
  if (shared) {
    if (byMessage === undefined) renderedShared.set(route, (byMessage = new WeakMap()));
    byMessage.set(message, bytes);
  }
  return bytes;
}

function writeJson(res: NodeResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  writeJsonBytes(res, status, Buffer.from(JSON.stringify(body)), headers);
}

/** With its length: without one, HTTP/1.1 answers go out chunked, in more writes and more bytes. */
function writeJsonBytes(res: NodeResponse, status: number, bytes: Buffer, headers?: Record<string, string>): void {
  (res as ServerResponse)
    .writeHead(status, { "content-type": "application/json", "content-length": String(bytes.length), ...headers })
    .end(bytes);
}
