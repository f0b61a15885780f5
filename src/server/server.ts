/**
 * Builds the gateway server: Connect routes (the application's, plus health and reflection) behind
 * the interceptors and the HTTP handler chain, on the one-port listener. `createServer` builds,
 * `listen` binds; tests use the handler or listen on port 0.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import type { DescMethodUnary, DescService, JsonReadOptions, JsonWriteOptions } from "@bufbuild/protobuf";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import { Code, ConnectError, createConnectRouter } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import { createUnaryInvoker, recordingRouter } from "./unary-invoker.ts";
import type { UnaryInvoker } from "./unary-invoker.ts";
import { universalRequestOf } from "./universal-request.ts";
import { createGateInterceptor, gateHandler } from "./request-gate.ts";
import { createValidationInterceptor } from "./request-validation.ts";
import { createAuthInterceptor } from "./auth.ts";
import type { ApiKeyChecker } from "./auth.ts";
import type { RateLimiter } from "./rate-limit.ts";
import { createHealthServiceImpl, createHealthState, Health, ServingStatus } from "./health.ts";
import type { HealthState } from "./health.ts";
import { createHttpHandler, notFound } from "./http-handler.ts";
import type { CorsOrigins, NodeHandler, NodeRequest, NodeResponse, PreHandler } from "./http-handler.ts";
import { createUnaryPath } from "./unary-path.ts";
import { createTurnWriter } from "./turn-writer.ts";
import { compatOf, H2Request } from "./h2-exchange.ts";
import type { DirectStreams, H2Response } from "./h2-exchange.ts";
import { REQUEST_ID_HEADER } from "./request-id.ts";
import type { TurnWriter } from "./turn-writer.ts";
import {
  createDeadlineInterceptor,
  createDrainInterceptor,
  createErrorInterceptor,
  createObserveInterceptor,
} from "./interceptors.ts";
import { listen as listenOnPort } from "./listener.ts";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";
import { registerReflection } from "./reflection.ts";
import { withRouterErrorBody } from "./router-errors.ts";
import { createGrpcStreamPath, type StreamRoute } from "./grpc-stream-path.ts";
import type { Tracing } from "./tracing.ts";
import { sleep } from "../sleep.ts";

/** Options of `createServer`. */
export interface ServerOptions {
  /** Registers the application's services (`router.service(ProgramService, impl)`). */
  routes: (router: ConnectRouter) => void;
  /** Checks API keys for every service but health and reflection. */
  auth: ApiKeyChecker;
  /** Per-key rate limits (none without it). */
  rateLimiter?: RateLimiter;
  logger: Logger;
  metrics?: Metrics;
  /** OpenTelemetry spans for every RPC; absent when tracing is off (then nothing of it runs). */
  tracing?: Tracing;
  /**
   * Server-streaming methods served on the lean gRPC path (binary gRPC only; see grpc-stream-path.ts),
   * for streams that stay open by the thousand. Their other protocols go through the router.
   */
  streamRoutes?: readonly StreamRoute[];
  /** Tried in order before Connect (REST transcoder, `/demo`, `/openapi.json`, ...). */
  preHandlers?: readonly PreHandler[];
  /**
   * Builds pre-handlers that call the application's RPCs in process through the router's own
   * handlers, interceptors included (the REST transcoder). Tried before `preHandlers`.
   */
  inProcessHandlers?: (context: InProcessContext) => readonly PreHandler[];
  /** Browser origins allowed by CORS; default any. */
  corsOrigins?: CorsOrigins;
  /** Silent or slow-header sockets are dropped after this; default 10 s. */
  socketTimeoutMs?: number;
  /** Idle keep-alive connections are closed after this; default 60 s. */
  idleTimeoutMs?: number;
  /** Open connections allowed from one client (an IPv4 address or an IPv6 /64); default 1,000. */
  maxConnectionsPerIp?: number;
  /** Open connections allowed in all (past it the longest-idle one is closed to make room); default 10,000. */
  maxConnections?: number;
  /** Streams one HTTP/2 connection may have open at once; default 1,000. */
  maxStreamsPerConnection?: number;
  /** How long `close()` waits for in-flight RPCs by default; default 10 s. */
  shutdownTimeoutMs?: number;
  /** Largest request message accepted, in bytes; default 4 MiB. */
  readMaxBytes?: number;
  /**
   * Serve plain unary gRPC, gRPC-Web and Connect calls on the lean unary path (unary-path.ts); default
   * true. Off, the router serves every call (the path's tests compare the two).
   */
  unaryPath?: boolean;
  /**
   * HTTP/2 GETs answered without Node's compatibility layer, besides the lean path's unary calls (the REST
   * reads: `RestHandler.answersInOneWrite`; h2-exchange.ts).
   */
  directGets?: (path: string) => boolean;
  /** Whether HTTP/2 exchanges are used at all; default true. Off, every HTTP/2 request takes Node's compatibility layer. */
  h2Exchanges?: boolean;
  /** JSON options of every protocol (a type registry for `Any` fields); none by default. */
  jsonOptions?: Partial<JsonReadOptions & JsonWriteOptions>;
}

/** What `inProcessHandlers` gets: the router's handlers (health and reflection included) and the key checker. */
export interface InProcessContext {
  readonly handlers: readonly UniversalHandler[];
  /** Calls a unary method's implementation through the router's interceptors, without a protocol in between. */
  readonly invokeUnary: UnaryInvoker;
  readonly auth: ApiKeyChecker;
  readonly logger: Logger;
  readonly tracing?: Tracing;
  /** Writes answers at the end of the turn, with the others of that turn (turn-writer.ts). */
  readonly writer: TurnWriter;
}

/** A built server, not yet bound. */
export interface SolgateServer {
  /** The whole HTTP handler chain, for HTTP/1.1 and HTTP/2 Node servers. */
  readonly handler: NodeHandler;
  /** Serving status, by service; `close()` turns everything NOT_SERVING. */
  readonly health: HealthState;
  /** Whether a listener of this server has begun to drain (`close()` was called). */
  readonly draining: boolean;
  /** The services registered, health and reflection included. */
  readonly services: readonly string[];
  /** Binds `port` (0 = ephemeral) on `host` (default all interfaces). */
  listen(port: number, host?: string): Promise<ListeningServer>;
}

/** A bound server. */
export interface ListeningServer {
  readonly port: number;
  /** The address bound (`0.0.0.0` or `::` for every interface). */
  readonly host: string;
  /**
   * Drains and stops: health goes NOT_SERVING, new connections are refused, streams end with
   * UNAVAILABLE, unary calls in flight get until the deadline, then all is cut.
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

/**
 * Builds the server.
 *
 * Long (~190 lines) because it is assembly: listener, routes, interceptors, health and the drain share the
 * two abort controllers of shutdown; each part is built in its own file.
 */
export function createServer(options: ServerOptions): SolgateServer {
  const { logger } = options;
  const drain = new AbortController();
  const shutdown = new AbortController();
  const health = createHealthState();
  let draining = false;
  const services: DescService[] = [];
  let routerHandlers: readonly UniversalHandler[] = [];

  const readMaxBytes = options.readMaxBytes ?? 4 * 1024 * 1024;
  // Outermost first: observe sees the final code of everything, drain ends streams, a unary call is answered at
  // its deadline, errors are
  // mapped before anything else sees them, auth runs before the handler, and the request gate's
  // verdict on an undecodable body only after auth; then the contract's validation rules.
  const interceptors = [
    // The span encloses everything else, so it carries the final code and covers auth too.
    ...(options.tracing === undefined ? [] : [options.tracing.interceptor]),
    createObserveInterceptor({ logger, metrics: options.metrics }),
    createDrainInterceptor(drain.signal),
    createDeadlineInterceptor(),
    createErrorInterceptor(logger),
    createAuthInterceptor(options.auth, options.rateLimiter),
    createGateInterceptor(),
    createValidationInterceptor(),
  ];
  const compressions = [compressionGzip, compressionBrotli];
  const router = createConnectRouter({
    interceptors,
    shutdownSignal: shutdown.signal,
    readMaxBytes,
    acceptCompression: compressions,
    ...(options.jsonOptions === undefined ? {} : { jsonOptions: options.jsonOptions }),
  });
  // The implementations are recorded as they are registered, for in-process unary calls (REST).
  const recorded = recordingRouter(router);
  options.routes(recorded.router);
  const invokeUnary = createUnaryInvoker({ impls: recorded.impls, interceptors });
  for (const h of router.handlers) if (!services.includes(h.service)) services.push(h.service);
  for (const s of services) health.set(s.typeName, ServingStatus.SERVING);
  router.service(Health, createHealthServiceImpl(health));
  services.push(Health);
  registerReflection(router, services);
  routerHandlers = router.handlers;
  // connect-node's adapter, with each handler behind the request gate (auth before the body is read).
  const byPath = new Map(
    router.handlers.map((h) => [h.requestPath, gateHandler(h, options.auth, readMaxBytes, compressions)]),
  );
  const writer = createTurnWriter((err, res) =>
    logger.error({ err, requestId: res.getHeader(REQUEST_ID_HEADER) }, "writing an answer failed; response reset"),
  );
  // `body`: the bytes a pre-handler (the unary path) already read from the request.
  const connect = (req: NodeRequest, res: NodeResponse, body?: Uint8Array): void => {
    // An exchange that ends up here is the router's: it gets Node's compatibility pair (h2-exchange.ts).
    const exchange: unknown = req;
    if (exchange instanceof H2Request) ({ req, res } = compatOf(exchange, res as unknown as H2Response));
    const uHandler = byPath.get((req.url ?? "").split("?", 2)[0]);
    if (uHandler === undefined) {
      notFound(req, res);
      return;
    }
    const request = universalRequestOf(req, res);
    uHandler(body === undefined ? request : { ...request, body: createAsyncIterable([body]) })
      .then((uRes) =>
        universalResponseToNodeResponse(
          withRouterErrorBody(uRes, request, uHandler, options.jsonOptions),
          res as never,
        ),
      )
      .catch((reason: unknown) => {
        if (ConnectError.from(reason).code === Code.Aborted) return;
        logger.error(
          { err: reason, procedure: `${uHandler.service.typeName}/${uHandler.method.name}` },
          "handler failed",
        );
        // Nothing will answer it now: reset it rather than leave the client waiting for ever.
        if (!res.writableEnded) res.destroy();
      });
  };

  const unaryPath =
    options.unaryPath === false
      ? undefined
      : createUnaryPath({
          methods: [...recorded.impls.keys()].filter((m): m is DescMethodUnary => m.methodKind === "unary"),
          invoker: invokeUnary,
          auth: options.auth,
          fallback: connect,
          readMaxBytes,
          compressions,
          writer,
          ...(options.jsonOptions === undefined ? {} : { jsonOptions: options.jsonOptions }),
        });
  const handler = createHttpHandler({
    connect,
    preHandlers: [
      ...(unaryPath === undefined ? [] : [unaryPath.handle]),
      ...(options.streamRoutes === undefined || options.streamRoutes.length === 0
        ? []
        : [
            createGrpcStreamPath({
              routes: options.streamRoutes,
              auth: options.auth,
              ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
              logger,
              metrics: options.metrics,
              ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
              drain: drain.signal,
              readMaxBytes,
            }),
          ]),
      ...(options.inProcessHandlers?.({
        handlers: routerHandlers,
        invokeUnary,
        auth: options.auth,
        logger,
        writer,
        ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
      }) ?? []),
      ...(options.preHandlers ?? []),
    ],
    corsOrigins: options.corsOrigins,
    logger,
  });

  // HTTP/2 streams taken as exchanges: the lean path's unary calls, and the GETs the options name.
  const direct: DirectStreams = (headers) => {
    const path = headers[":path"];
    if (path === undefined || headers.expect !== undefined) return false;
    if (headers[":method"] === "GET") return options.directGets?.(path) === true;
    return unaryPath?.takes(headers) === true;
  };

  const serviceNames = [
    ...services.map((s) => s.typeName),
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
  ];

  return {
    handler,
    health,
    get draining() {
      return draining;
    },
    services: serviceNames,
    async listen(port, host) {
      const listener = await listenOnPort(
        {
          handler,
          socketTimeoutMs: options.socketTimeoutMs ?? 10_000,
          idleTimeoutMs: options.idleTimeoutMs ?? 60_000,
          maxConnectionsPerIp: options.maxConnectionsPerIp ?? 1000,
          maxConnections: options.maxConnections ?? 10_000,
          maxStreamsPerSession: options.maxStreamsPerConnection ?? 1000,
          onRefused: refusedLog(logger),
          onEvicted: evictedLog(logger),
          ...(options.h2Exchanges === false ? {} : { direct }),
        },
        port,
        host,
      );
      let closing: Promise<void> | undefined;
      return {
        port: listener.port,
        host: listener.host,
        close(closeOptions = {}) {
          closing ??= (async () => {
            const timeoutMs = closeOptions.timeoutMs ?? options.shutdownTimeoutMs ?? 10_000;
            logger.info({ inFlight: listener.inFlight(), timeoutMs }, "draining");
            draining = true;
            health.setAll(ServingStatus.NOT_SERVING);
            // A moment for health watchers to receive NOT_SERVING before their streams end.
            await sleep(50);
            drain.abort();
            await listener.close({
              deadline: Date.now() + timeoutMs,
              onDeadline: () => {
                logger.warn({ inFlight: listener.inFlight() }, "shutdown deadline reached; aborting RPCs in flight");
                shutdown.abort();
              },
            });
            logger.info("server closed");
          })();
          return closing;
        },
      };
    },
  };
}

/** Logs refused connections at most once a second per cap, with how many were refused meanwhile. */
function refusedLog(logger: Logger): (reason: "per-ip" | "total", address: string) => void {
  const last = new Map<string, { at: number; count: number }>();
  return (reason, address) => {
    const seen = last.get(reason) ?? { at: 0, count: 0 };
    seen.count++;
    const now = Date.now();
    if (now - seen.at >= 1000) {
      logger.warn({ reason, address, refused: seen.count }, "connection refused: too many connections");
      seen.at = now;
      seen.count = 0;
    }
    last.set(reason, seen);
  };
}

/** Logs connections closed to make room at the total cap, at most once a second, with how many meanwhile. */
function evictedLog(logger: Logger): (address: string) => void {
  let at = 0;
  let count = 0;
  return (address) => {
    count++;
    const now = Date.now();
    if (now - at < 1000) return;
    logger.warn({ address, evicted: count }, "connection limit reached: closed the longest-idle connection");
    at = now;
    count = 0;
  };
}
