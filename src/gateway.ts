/**
 * The composition root: configuration -> logger and metrics -> one upstream and its cores per
 * chain (chain-assembly.ts) -> the server on its port, metrics on theirs. With no remote chain configured, the
 * embedded localnet is started first (or taken as already starting, see {@link GatewayExtras}) and
 * served as chain `localnet`. The process around it (signals, banner) is main.ts.
 */
import { randomBytes } from "node:crypto";
import { Counter, Registry } from "prom-client";
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { LocalnetHandle } from "@solgate/localnet";
import { assembleChain, openChainFleet } from "./chain-assembly.ts";
import { createChainRegistry } from "./chains.ts";
import type { ChainContext } from "./chains.ts";
import { LOCALNET_CHAIN } from "./config.ts";
import type { ChainConfig, Config } from "./config.ts";
import { createMarketFromConfig, withLocalMarketplace } from "./collections/market/market-config.ts";
import { createSharedMarketBudget } from "./collections/market/market-budget.ts";
import { createOffchainJson } from "./collections/offchain-json.ts";
import type { FeeMarketOptions } from "./fees/fee-market.ts";
import { createApiKeyChecker } from "./server/auth.ts";
import { createRateLimiter } from "./server/rate-limit.ts";
import type { Logger } from "./server/logger.ts";
import { createMetrics, startMetricsServer } from "./server/metrics.ts";
import type { ChainGauges } from "./server/metrics.ts";
import { createRoutes, createStreamRoutes } from "./server/routes.ts";
import { createServer } from "./server/server.ts";
import { followReadiness } from "./server/health.ts";
import { createProbeHandler } from "./server/probes.ts";
import type { ReadinessCheck } from "./server/probes.ts";
import { createTracing } from "./server/tracing.ts";
import type { Tracing } from "./server/tracing.ts";
import { createDemoHandler } from "./demo/demo-handler.ts";
import { createRestHandler } from "./rest/rest-handler.ts";
import type { RestHandler } from "./rest/rest-handler.ts";
import { redactUrl } from "./upstream/metrics.ts";
import { startConfiguredLocalnet } from "./embedded-localnet.ts";
import { connectRedis, describeTopology } from "./store/redis.ts";
import type { Redis, RedisTopology } from "./store/redis.ts";
import { sleep } from "./sleep.ts";

/** A started gateway. */
export interface Gateway {
  readonly port: number;
  /** The address the public port is bound to (`0.0.0.0` or `::` for every interface). */
  readonly host: string;
  readonly metricsPort: number;
  /** The localnet's JSON-RPC URL, when it runs. */
  readonly localnetUrl: string | undefined;
  /** Whether the live demo page is served at `/demo/`. */
  readonly demo: boolean;
  /** The API keys accepted (a generated dev key with the localnet and no configured keys). */
  readonly apiKeys: readonly string[];
  /** Drains the server, then stops metrics, upstreams and the localnet. */
  close(): Promise<void>;
  /** Settles if the localnet dies on its own (never settles otherwise). */
  readonly localnetExited: Promise<unknown>;
}

/** What tests may add to a gateway beyond its configuration. */
export interface GatewayExtras {
  /** Finished spans go here instead of OTLP; turns tracing on whatever the configuration says. */
  spanProcessor?: SpanProcessor;
  /**
   * The embedded localnet, already starting (embedded-localnet.ts): main.ts starts it before
   * it loads this module, so the localnet's start-up and this module's loading overlap.
   */
  localnet?: Promise<LocalnetHandle>;
  /**
   * Fee-market options no configuration sets: the calibration bench varies the odds' margin here
   * (test/bench/calibration-gateway.ts); users have no setting for it.
   */
  feeMarket?: Pick<FeeMarketOptions, "oddsConfidence">;
}

/** Starts everything `config` describes. */
export async function startGateway(config: Config, logger: Logger, extras: GatewayExtras = {}): Promise<Gateway> {
  const metrics = createMetrics(new Registry());
  const cleanups: Stop[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse())
      await Promise.resolve(fn()).catch((err: unknown) => logger.error({ err }, "cleanup failed"));
  };
  try {
    const tracing = startTracing(config, extras, logger, cleanups);
    const localnet = config.localnet.enabled ? await startLocalnet(config, extras, cleanups) : undefined;
    // A fleet's shared store: every replica records, follows and answers for the same sends.
    const redis = config.redis === undefined ? undefined : await connectSharedStore(config.redis, logger, cleanups);
    // Shared by all chains: one floor-price cache and rate limit per marketplace, one metadata-JSON cache.
    const offchain = createOffchainJson();
    const market = createMarketFromConfig(
      // On the embedded localnet, its own marketplace answers for its collections (market-config.ts).
      withLocalMarketplace(config.market, localnet?.marketplace),
      (err, ref) => logger.debug({ err, ...ref }, "floor price: marketplace call failed"),
      // The marketplaces' budgets hold per deployment: with Redis, the fleet shares them (2 calls/s, bursts of 4).
      redis === undefined ? undefined : createSharedMarketBudget(redis),
    );
    const webhookAttempts = new Counter({
      name: "solgate_webhook_attempts_total",
      help: "Webhook delivery attempts by outcome (delivered, failed and retried, gone: 410 disabled it, given-up).",
      labelNames: ["chain", "outcome"] as const,
      registers: [metrics.registry],
    });
    const contexts: ChainContext[] = await Promise.all(
      (localnet === undefined ? config.chains : [localnet.chain]).map(async (chain) =>
        assembleChain({
          chain,
          config,
          logger,
          metrics,
          ...(tracing === undefined ? {} : { tracing }),
          ...(redis === undefined ? {} : { fleet: await openChainFleet(redis, chain.name, config, logger) }),
          ...(localnet?.blockEngineUrl === undefined ? {} : { defaultBlockEngineUrl: localnet.blockEngineUrl }),
          market,
          offchain,
          webhookAttempts,
          ...(extras.feeMarket === undefined ? {} : { feeMarket: extras.feeMarket }),
          onStop: (stop) => cleanups.push(stop),
        }),
      ),
    );
    const chains = createChainRegistry(contexts, config.defaultChain);

    let serving: ReadinessCheck = () => true;
    const readiness = readinessChecks(contexts, { serving: () => serving(), redis, localnet });
    metrics.observeChains(contexts.map((c) => chainGauges(c, readiness[`chain:${c.name}`])));

    const { keys, limits, limited } = apiKeysOf(config);
    let rest: RestHandler | undefined;
    const server = createServer({
      routes: createRoutes({ chains }),
      streamRoutes: createStreamRoutes({ chains }),
      auth: createApiKeyChecker(keys),
      ...(limited
        ? {
            rateLimiter: createRateLimiter({
              limits,
              ...(config.rateLimit === undefined ? {} : { defaultLimit: config.rateLimit }),
              ...(redis === undefined ? {} : { redis }),
            }),
          }
        : {}),
      logger,
      metrics,
      ...(tracing === undefined ? {} : { tracing }),
      corsOrigins: config.server.corsOrigins,
      socketTimeoutMs: config.server.socketTimeoutMs,
      idleTimeoutMs: config.server.idleTimeoutMs,
      maxConnectionsPerIp: config.server.maxConnectionsPerIp,
      maxConnections: config.server.maxConnections,
      maxStreamsPerConnection: config.server.maxStreamsPerConnection,
      shutdownTimeoutMs: config.server.shutdownTimeoutMs,
      readMaxBytes: config.server.maxRequestBytes,
      preHandlers: [createProbeHandler({ checks: readiness }), ...(config.demo ? [createDemoHandler()] : [])],
      // REST paths from the contract's google.api.http annotations, the SSE watch and /openapi.json.
      inProcessHandlers: (context) => [(rest = createRestHandler(context)).handle],
      // REST reads over HTTP/2 skip Node's compatibility layer (src/server/h2-exchange.ts).
      directGets: (path) => rest?.answersInOneWrite(path) === true,
    });
    serving = () => !server.draining;
    // Each service's grpc.health status follows readiness, as /readyz does; "" stays the process's own.
    cleanups.push(
      followReadiness(server.health, () => Object.values(readiness).every((check) => check()), READINESS_SYNC_MS),
    );
    // On the embedded localnet, the port opens once the fee window has levels, so the first fees answer
    // a developer sees has them (its traffic gives levels within a few slots); bounded, then served anyway.
    if (localnet !== undefined) await firstFeeLevels(contexts, LOCALNET_LEVELS_WAIT_MS);
    const metricsServer = await startMetricsServer({ registry: metrics.registry, ...config.metrics });
    cleanups.push(() => metricsServer.close());
    const listening = await server.listen(config.port, config.host);
    cleanups.push(() => listening.close());
    logger.info(
      {
        port: listening.port,
        host: listening.host,
        metricsPort: metricsServer.port,
        chains: chains.names,
        defaultChain: chains.defaultChain,
        localnetUrl: localnet?.url,
        localnetPid: localnet?.pid,
      },
      "solgate listening",
    );
    let closing: Promise<void> | undefined;
    return {
      port: listening.port,
      host: listening.host,
      metricsPort: metricsServer.port,
      localnetUrl: localnet?.url,
      demo: config.demo,
      apiKeys: keys.map((k) => k.key),
      localnetExited: localnet?.exited ?? new Promise(() => {}),
      close: () => (closing ??= cleanup()),
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** One part's stop, run in reverse order of start on close. */
type Stop = () => Promise<void> | void;

/** Tracing, when configured or asked for by a test; undefined otherwise. */
function startTracing(config: Config, extras: GatewayExtras, logger: Logger, cleanups: Stop[]): Tracing | undefined {
  if (config.tracing === undefined && extras.spanProcessor === undefined) return undefined;
  const tracing = createTracing({
    serviceName: config.tracing?.serviceName ?? "solgate",
    ...(config.tracing === undefined
      ? {}
      : { tracesUrl: config.tracing.tracesUrl, sampleRatio: config.tracing.sampleRatio }),
    ...(extras.spanProcessor === undefined ? {} : { spanProcessor: extras.spanProcessor }),
  });
  // Pushed first, so it runs last: the spans of the drain itself are exported too.
  cleanups.push(() => tracing.shutdown());
  logger.info(
    { traces: config.tracing?.tracesUrl === undefined ? "in process" : redactUrl(config.tracing.tracesUrl) },
    "tracing on",
  );
  return tracing;
}

/** The embedded localnet as the gateway serves it. */
interface EmbeddedLocalnet {
  /** Chain `localnet`, on the localnet's own endpoints. */
  readonly chain: ChainConfig;
  readonly url: string;
  /** Its own block engine: bundles go there when no SOLGATE_JITO_URL names another. */
  readonly blockEngineUrl: string | undefined;
  readonly pid: number | undefined;
  /** Settles if it dies on its own; stop() during shutdown is expected and never settles it. */
  readonly exited: Promise<unknown>;
  /**
   * Whether its world is fully written: it answers before then (calls that could see it wait there), readiness
   * waits for the whole world.
   */
  loaded(): boolean;
  /** Its marketplace (Magic Eden's stats API), when its collection traffic runs. */
  readonly marketplace?: { url: string; collections: Readonly<Record<string, string>> };
}

/** Starts the embedded localnet (or takes it as already starting); stopped on any failure, whoever started it. */
async function startLocalnet(config: Config, extras: GatewayExtras, cleanups: Stop[]): Promise<EmbeddedLocalnet> {
  const starting = extras.localnet ?? startConfiguredLocalnet(config);
  cleanups.push(async () => {
    await (await starting.catch(() => undefined))?.stop();
  });
  const localnet = await starting;
  let loaded = false;
  void localnet.loaded.then(() => {
    loaded = true;
  });
  return {
    chain: {
      name: LOCALNET_CHAIN,
      rpcUrls: [localnet.rpcUrl],
      wsUrls: [localnet.wsUrl],
      ...config.localnet.sendPaths,
      // The localnet serves Geyser by default: the gateway runs on the stream, polling as the fallback.
      ...(localnet.geyserUrl === undefined || !config.localnet.geyser ? {} : { geyserUrl: localnet.geyserUrl }),
    },
    url: localnet.rpcUrl,
    blockEngineUrl: localnet.blockEngineUrl,
    pid: localnet.pid,
    exited: localnet.exited.then((how) => (how.expected ? new Promise(() => {}) : how)),
    loaded: () => loaded,
    ...(localnet.marketplace === undefined ? {} : { marketplace: localnet.marketplace }),
  };
}

/** Connects to the fleet's Redis, closed on shutdown. */
async function connectSharedStore(topology: RedisTopology, logger: Logger, cleanups: Stop[]): Promise<Redis> {
  const where = describeTopology(topology);
  const redis = await connectRedis({
    topology,
    onError: (err) =>
      logger.warn({ redis: where, reason: err instanceof Error ? err.message : String(err) }, "redis connection error"),
  });
  cleanups.push(() => redis.close());
  logger.info({ redis: where }, "shared store: redis");
  return redis;
}

/**
 * Readiness: not draining, the shared store reachable, the localnet's world written, and every chain's fee window
 * fed and some node of its upstream not behind an open circuit breaker (its upstream answers).
 */
function readinessChecks(
  contexts: readonly ChainContext[],
  parts: { serving: ReadinessCheck; redis: Redis | undefined; localnet: EmbeddedLocalnet | undefined },
): Record<string, ReadinessCheck> {
  const { redis, localnet } = parts;
  const readiness: Record<string, ReadinessCheck> = { serving: parts.serving };
  if (redis !== undefined) readiness.redis = () => redis.isReady();
  if (localnet !== undefined) readiness["localnet:world"] = () => localnet.loaded();
  for (const c of contexts) {
    readiness[`chain:${c.name}`] = () => {
      const { source, window, follower } = c.fees.status();
      return (
        (source !== "none" || window.blocks > 0) &&
        follower.consecutiveFailures < READY_AFTER_FAILURES &&
        c.upstream.reachable()
      );
    };
  }
  return readiness;
}

/** What the per-chain gauges read at scrape time. */
function chainGauges(c: ChainContext, upstreamHealthy: ReadinessCheck): ChainGauges {
  const geyser = c.upstream.geyser;
  const blocks = c.upstream.geyserBlocks;
  return {
    name: c.name,
    trackedSends: () => c.transactions.stats().inFlightByState,
    ladders: () => c.transactions.ladders.stats(),
    feeWindowMovedAt: () => {
      const { follower, fallbackAt } = c.fees.status();
      const moved = Math.max(follower.lastMoveAt ?? -1, fallbackAt ?? -1);
      return moved < 0 ? undefined : moved;
    },
    upstreamHealthy,
    ...(geyser === undefined
      ? {}
      : {
          geyserStatuses: () => {
            const { streamStatuses, nodeStatuses } = c.transactions.stats();
            return { subscriptions: geyser.stats().subscriptions, streamStatuses, nodeStatuses };
          },
          geyser: () => {
            const { reconnects, fallbacks, delivered } = geyser.stats();
            return { healthy: geyser.healthy(), lagSlots: geyser.lagSlots(), reconnects, fallbacks, delivered };
          },
        }),
    ...(blocks === undefined
      ? {}
      : {
          geyserBlocks: () => {
            const { reconnects, fallbacks, blocks: count } = blocks.stats();
            return { healthy: blocks.healthy(), reconnects, fallbacks, blocks: count };
          },
        }),
  };
}

/** The API keys accepted (a generated dev key when none is configured) and their own rate limits. */
function apiKeysOf(config: Config) {
  const keys =
    config.keys.length > 0 ? config.keys : [{ name: "dev", key: `dev-${randomBytes(18).toString("base64url")}` }];
  const limits = new Map(keys.filter((k) => k.rateLimit !== undefined).map((k) => [k.name, k.rateLimit ?? null]));
  const limited = config.rateLimit !== undefined || [...limits.values()].some((l) => l !== null);
  return { keys, limits, limited };
}

/** How often grpc.health's per-service statuses are brought in step with readiness. */
const READINESS_SYNC_MS = 500;

/** Block reads in a row that may fail before a chain (and so the gateway) is no longer ready. */
const READY_AFTER_FAILURES = 5;

/** How long the embedded localnet's gateway waits for fee levels before opening its port anyway. */
const LOCALNET_LEVELS_WAIT_MS = 15_000;

/** How often the fee windows are read while the port waits for their first levels. */
const FIRST_LEVELS_POLL_MS = 50;

/**
 * Resolves when every chain's fee window has levels, or after `timeoutMs`. Until then the windows are read
 * every {@link FIRST_LEVELS_POLL_MS} rather than at their poll interval (400 ms), so the first priced block is
 * seen as soon as it is confirmed.
 */
async function firstFeeLevels(contexts: readonly ChainContext[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const waiting = contexts.filter((c) => c.fees.global().priority === undefined);
    if (waiting.length === 0 || Date.now() >= deadline) return;
    // A read that hangs (an upstream that does not answer) does not hold the port past the deadline.
    const pastDeadline = new AbortController();
    await Promise.race([
      Promise.all([...waiting.map((c) => c.fees.refresh().catch(() => undefined)), sleep(FIRST_LEVELS_POLL_MS)]),
      sleep(Math.max(0, deadline - Date.now()), pastDeadline.signal),
    ]);
    pastDeadline.abort();
  }
}
