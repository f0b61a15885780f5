/**
 * The composition root: configuration -> logger and metrics -> one upstream and its cores per
 * chain -> the server on its port, metrics on theirs. With no remote chain configured, the
 * embedded localnet is started first (or taken as already starting, see {@link GatewayExtras}) and
 * served as chain `localnet`. The process around it (signals, banner) is main.ts.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { Registry } from "prom-client";
import { createChainRegistry } from "./chains.ts";
import type { ChainContext } from "./chains.ts";
import { LOCALNET_CHAIN } from "./config.ts";
import type { ChainConfig, Config } from "./config.ts";
import { createProgramAccounts } from "./programs/program-accounts.ts";
import { createFeeMarket } from "./fees/fee-market.ts";
import { createEngineTipLevels, createObservedTipLevels } from "./fees/tip-levels.ts";
import { createCollections } from "./collections/collections.ts";
import { createMarketFromConfig } from "./collections/market/market-config.ts";
import { createSharedMarketBudget } from "./collections/market/market-budget.ts";
import { createOffchainJson } from "./collections/offchain-json.ts";
import { createCollectionFeed } from "./collections/feed/collection-feed.ts";
import { createMemoryEventLog } from "./collections/feed/event-log.ts";
import { createWebhooks } from "./collections/feed/webhooks.ts";
import { Counter } from "prom-client";
import { createApiKeyChecker } from "./server/auth.ts";
import { createRateLimiter } from "./server/rate-limit.ts";
import type { Logger } from "./server/logger.ts";
import { createMetrics, startMetricsServer } from "./server/metrics.ts";
import { createRoutes, createStreamRoutes } from "./server/routes.ts";
import { createServer } from "./server/server.ts";
import { followReadiness } from "./server/health.ts";
import { createProbeHandler } from "./server/probes.ts";
import { createTracing } from "./server/tracing.ts";
import type { Tracing } from "./server/tracing.ts";
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { ReadinessCheck } from "./server/probes.ts";
import { createDemoHandler } from "./demo/demo-handler.ts";
import { createRestHandler } from "./rest/rest-handler.ts";
import type { RestHandler } from "./rest/rest-handler.ts";
import { createUpstream } from "./upstream/upstream.ts";
import { createSendPaths } from "./upstream/send-paths.ts";
import { createBlockEngine } from "./upstream/block-engine.ts";
import type { SendPathConfig } from "./upstream/send-paths.ts";
import { redactUrl } from "./upstream/metrics.ts";
import { createTransactions } from "./transactions/transactions.ts";
import type { LocalnetHandle } from "@solgate/localnet";
import { startConfiguredLocalnet } from "./embedded-localnet.ts";
import { createAccounts } from "./accounts/accounts.ts";
import { createWallets } from "./wallets/wallets.ts";
import { createTokenHolders } from "./tokens/token-holders.ts";
import { createRedisTransactionStore } from "./transactions/redis-transaction-store.ts";
import { createRedisLadderStore } from "./transactions/ladder/redis-ladder-store.ts";
import { createRedisBundleStore } from "./transactions/redis-bundle-store.ts";
import { chainKeyPrefix, connectRedis, describeTopology } from "./store/redis.ts";
import type { Redis } from "./store/redis.ts";
import { createRedisLease } from "./store/lease.ts";
import type { Lease } from "./store/lease.ts";
import { createRedisWindowLog } from "./fees/window-log.ts";
import { createRedisValues } from "./store/shared-values.ts";

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
}

/** Starts everything `config` describes. */
export async function startGateway(config: Config, logger: Logger, extras: GatewayExtras = {}): Promise<Gateway> {
  const metrics = createMetrics(new Registry());
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse())
      await Promise.resolve(fn()).catch((err: unknown) => logger.error({ err }, "cleanup failed"));
  };
  try {
    let tracing: Tracing | undefined;
    if (config.tracing !== undefined || extras.spanProcessor !== undefined) {
      tracing = createTracing({
        serviceName: config.tracing?.serviceName ?? "solgate",
        ...(config.tracing === undefined
          ? {}
          : { tracesUrl: config.tracing.tracesUrl, sampleRatio: config.tracing.sampleRatio }),
        ...(extras.spanProcessor === undefined ? {} : { spanProcessor: extras.spanProcessor }),
      });
      const provider = tracing;
      // Pushed first, so it runs last: the spans of the drain itself are exported too.
      cleanups.push(() => provider.shutdown());
      logger.info(
        { traces: config.tracing?.tracesUrl === undefined ? "in process" : redactUrl(config.tracing.tracesUrl) },
        "tracing on",
      );
    }
    let chainConfigs: ChainConfig[] = config.chains;
    let localnetUrl: string | undefined;
    // The embedded localnet's own block engine: bundles go there when no SOLGATE_JITO_URL names another.
    let localnetBlockEngineUrl: string | undefined;
    let localnetPid: number | undefined;
    let localnetExited: Promise<unknown> = new Promise(() => {});
    // The embedded localnet answers before its world is fully written (calls that could see it wait there);
    // readiness waits for the whole world.
    let localnetLoaded = true;
    if (config.localnet.enabled) {
      // Stopped on any failure, whoever started it.
      const starting = extras.localnet ?? startConfiguredLocalnet(config);
      cleanups.push(async () => {
        await (await starting.catch(() => undefined))?.stop();
      });
      const localnet = await starting;
      localnetUrl = localnet.rpcUrl;
      localnetBlockEngineUrl = localnet.blockEngineUrl;
      localnetPid = localnet.pid;
      localnetLoaded = false;
      void localnet.loaded.then(() => {
        localnetLoaded = true;
      });
      // Only a death nobody asked for is reported; stop() during shutdown is expected.
      localnetExited = localnet.exited.then((how) => (how.expected ? new Promise(() => {}) : how));
      chainConfigs = [
        {
          name: LOCALNET_CHAIN,
          rpcUrls: [localnet.rpcUrl],
          wsUrls: [localnet.wsUrl],
          ...config.localnet.sendPaths,
          // The localnet serves Geyser by default: the gateway runs on the stream, polling as the fallback.
          ...(localnet.geyserUrl === undefined || !config.localnet.geyser ? {} : { geyserUrl: localnet.geyserUrl }),
        },
      ];
    }

    // Shared by all chains: one floor-price cache and rate limit per marketplace, one metadata-JSON cache.
    const offchain = createOffchainJson();
    // A fleet's shared store: every replica records, follows and answers for the same sends.
    let redis: Redis | undefined;
    if (config.redis !== undefined) {
      const where = describeTopology(config.redis);
      redis = await connectRedis({
        topology: config.redis,
        onError: (err) =>
          logger.warn(
            { redis: where, reason: err instanceof Error ? err.message : String(err) },
            "redis connection error",
          ),
      });
      const connection = redis;
      cleanups.push(() => connection.close());
      logger.info({ redis: where }, "shared store: redis");
    }
    // The marketplaces' budgets hold per deployment: with Redis, the fleet shares them (2 calls/s, bursts of 4).
    const budget = redis === undefined ? undefined : createSharedMarketBudget(redis);
    const market = createMarketFromConfig(
      config.market,
      (err, ref) => logger.debug({ err, ...ref }, "floor price: marketplace call failed"),
      budget,
    );
    const webhookAttempts = new Counter({
      name: "solgate_webhook_attempts_total",
      help: "Webhook delivery attempts by outcome (delivered, failed and retried, gone: 410 disabled it, given-up).",
      labelNames: ["chain", "outcome"],
      registers: [metrics.registry],
    });
    const contexts: ChainContext[] = await Promise.all(
      chainConfigs.map(async (chain) => {
        // In a fleet only the holder of the transaction store's lease (the replica doing the fleet-wide status
        // work) subscribes to Geyser; the store, made below, fills this in.
        let storeLease: Lease | undefined;
        // ...and only the fee lease's holder (whose blocks reach every replica through the Redis log) follows
        // Geyser's blocks.
        const feeLease =
          redis === undefined
            ? undefined
            : createRedisLease({ redis, key: `${chainKeyPrefix(chain.name)}fee-lease`, holder: randomUUID() });
        const upstream = createUpstream({
          chain: chain.name,
          rpcUrls: chain.rpcUrls,
          ...(chain.dasUrls === undefined ? {} : { dasUrl: chain.dasUrls }),
          ...(chain.wsUrls === undefined ? {} : { wsUrl: chain.wsUrls }),
          ...(chain.geyserUrl === undefined ? {} : { geyserUrl: chain.geyserUrl }),
          ...(chain.geyserToken === undefined ? {} : { geyserToken: chain.geyserToken }),
          ...(redis === undefined ? {} : { geyserLease: { hold: async () => (await storeLease?.hold()) ?? false } }),
          ...(feeLease === undefined ? {} : { geyserBlocksLease: feeLease }),
          onGeyserHealth: (healthy, reason) => {
            if (healthy)
              logger.info({ chain: chain.name, reason }, "geyser stream up: blocks and confirmations pushed");
            else logger.warn({ chain: chain.name, reason }, "geyser stream down: falling back to polling");
          },
          onGeyserBlocksHealth: (healthy, reason) => {
            if (healthy) logger.info({ chain: chain.name, reason }, "geyser block stream up: fee market fed from it");
            else
              logger.warn(
                { chain: chain.name, reason },
                "geyser block stream down: fee market reads blocks by polling",
              );
          },
          ...config.upstream,
          // The message only: a provider's WebSocket URL carries its API key, and errors may quote it.
          onFeedError: (err) =>
            logger.warn(
              { chain: chain.name, reason: err instanceof Error ? err.message : String(err) },
              "signature notifications unavailable; polling alone for a while",
            ),
          // Where the answer went wrong, never the answer: a provider's body may be huge or hostile.
          onRefused: (refused) => logger.warn({ chain: chain.name, ...refused }, "upstream answer refused"),
          metrics: metrics.upstreamFor(chain.name),
          ...(tracing === undefined ? {} : { tracer: tracing.upstreamFor(chain.name) }),
        });
        cleanups.push(() => upstream.close());
        const shared = redis;
        // Bundles and tips: the configured block engine, else the embedded localnet's own (not a send path then).
        const bundleEngineUrl =
          chain.jitoUrl ??
          (chain.name === LOCALNET_CHAIN && config.localnet.enabled ? localnetBlockEngineUrl : undefined);
        const blockEngine =
          bundleEngineUrl === undefined
            ? undefined
            : createBlockEngine({
                url: bundleEngineUrl,
                ...(chain.jitoAuth === undefined ? {} : { auth: chain.jitoAuth }),
              });
        // Tip levels: the block engine's tip floor when there is one, else the tips seen in the blocks read.
        const observedTips =
          blockEngine === undefined ? createObservedTipLevels({ windowSlots: config.fees.windowSlots }) : undefined;
        const tipLevels =
          observedTips ??
          createEngineTipLevels({
            engine: blockEngine!,
            onError: (err) => logger.debug({ err, chain: chain.name }, "tip floor: block engine read failed"),
          });
        tipLevels.start();
        cleanups.push(() => tipLevels.stop());
        const fees = createFeeMarket({
          upstream,
          ...config.fees,
          // Processed blocks with their transactions, straight into the window; getBlock polling is the fallback.
          ...(upstream.geyserBlocks === undefined ? {} : { stream: upstream.geyserBlocks }),
          ...(shared === undefined
            ? {}
            : {
                replication: {
                  lease: feeLease!,
                  log: createRedisWindowLog({
                    redis: shared,
                    key: `${chainKeyPrefix(chain.name)}fee-blocks`,
                    maxEntries: 2 * config.fees.windowSlots,
                  }),
                  reachable: () => shared.isReady(),
                },
              }),
          ...(observedTips === undefined ? {} : { observer: observedTips }),
          // The tip levels beside the priority levels in every estimate (GetFees, EstimateFees, WatchFees,
          // PrepareTransaction).
          tips: tipLevels,
          onError: (err, during) =>
            logger.debug({ err, chain: chain.name, during }, "fee market: upstream read failed"),
        });
        fees.start();
        // A new confirmed block on the Geyser stream: read it now rather than at the next poll (coalesced with a
        // tick in progress). While the block stream feeds the market this reads nothing (the market's tick only
        // checks every few seconds); it matters when that stream is down and the confirmed one is not.
        upstream.geyser?.watchTip(() => fees.status().follower.tipSlot);
        // A block that arrives while a read is in progress gets one more read after it, so it is not left
        // for the next poll.
        let reading = false;
        let again = false;
        const readNow = (): void => {
          if (reading) {
            again = true;
            return;
          }
          reading = true;
          again = false;
          void fees
            .refresh()
            .catch(() => {})
            .finally(() => {
              reading = false;
              if (again) readNow();
            });
        };
        const offBlock = upstream.geyser?.onBlock(readNow);
        cleanups.push(() => {
          offBlock?.();
          return fees.stop();
        });
        const store =
          redis === undefined
            ? undefined
            : await createRedisTransactionStore({
                redis,
                prefix: chainKeyPrefix(chain.name),
                maxActive: config.transactions.maxTracked,
                onError: (err) => logger.warn({ err, chain: chain.name }, "redis: unreadable status message"),
              });
        storeLease = store?.lease;
        const sendPathConfigs: SendPathConfig[] = [
          ...(chain.sendUrls ?? []).map((url) => ({ kind: "rpc" as const, url })),
          ...(chain.jitoUrl === undefined
            ? []
            : [
                {
                  kind: "jito" as const,
                  url: chain.jitoUrl,
                  ...(chain.jitoAuth === undefined ? {} : { auth: chain.jitoAuth }),
                },
              ]),
        ];
        const transactions = createTransactions({
          upstream,
          ...(blockEngine === undefined ? {} : { blockEngine }),
          tipLevels,
          ...(sendPathConfigs.length === 0
            ? {}
            : { sendPaths: createSendPaths({ paths: sendPathConfigs, metrics: metrics.sendPathsFor(chain.name) }) }),
          fees,
          ...(store === undefined ? {} : { store }),
          // Bundles in the fleet's Redis: any replica answers for a bundle any replica took.
          ...(redis === undefined
            ? {}
            : { bundleStore: createRedisBundleStore({ redis, prefix: chainKeyPrefix(chain.name) }) }),
          // Ladders in the fleet's Redis: any replica answers for any ladder, and the climb outlives its replica.
          ...(redis === undefined
            ? {}
            : {
                ladderStore: await createRedisLadderStore({
                  redis,
                  prefix: chainKeyPrefix(chain.name),
                  onError: (err) => logger.warn({ err, chain: chain.name }, "redis: unreadable ladder message"),
                }),
              }),
          ...config.transactions,
          onError: (err) => logger.warn({ err, chain: chain.name }, "transaction tracking failed"),
        });
        transactions.start();
        cleanups.push(() => transactions.stop());
        const collections = createCollections(
          { upstream, market, offchain },
          redis === undefined ? {} : { sharedCounts: createRedisValues(redis, `${chainKeyPrefix(chain.name)}count:`) },
        );
        // The change feed reads blocks only once a collection is watched. Its log is this process's own.
        const feedConfig = config.collectionFeed ?? DEFAULT_FEED;
        const collectionFeed = createCollectionFeed({
          upstream,
          collections,
          log: createMemoryEventLog({
            retentionMs: feedConfig.retentionMs,
            maxEventsPerCollection: feedConfig.maxEventsPerCollection,
          }),
          heartbeatMs: feedConfig.heartbeatMs,
          maxCollections: feedConfig.maxCollections,
          ...(Object.keys(config.market.floorSources).length === 0 ? {} : { market }),
          onError: (err, during) => logger.debug({ err, chain: chain.name, during }, "collection feed: read failed"),
        });
        cleanups.push(() => collectionFeed.stop());
        const webhooks = createWebhooks({
          feed: collectionFeed,
          retryPeriodMs: (config.webhooks ?? DEFAULT_WEBHOOKS).retryPeriodMs,
          allowPrivateUrls: (config.webhooks ?? DEFAULT_WEBHOOKS).allowPrivateUrls,
          onAttempt: (outcome) => webhookAttempts.inc({ chain: chain.name, outcome }),
        });
        cleanups.push(() => webhooks.stop());
        return {
          name: chain.name,
          upstream,
          programs: createProgramAccounts({ upstream }),
          fees,
          transactions,
          collections,
          collectionFeed,
          webhooks,
          accounts: createAccounts({ upstream }),
          wallets: createWallets({ upstream }),
          tokens: createTokenHolders({ upstream }),
        };
      }),
    );
    const chains = createChainRegistry(contexts, config.defaultChain);

    // Readiness: not draining, the shared store reachable, and every chain's fee window fed and some node of
    // its upstream not behind an open circuit breaker (its upstream answers).
    let serving: ReadinessCheck = () => true;
    const readiness: Record<string, ReadinessCheck> = { serving: () => serving() };
    if (redis !== undefined) readiness.redis = () => (redis as Redis).isReady();
    if (config.localnet.enabled) readiness["localnet:world"] = () => localnetLoaded;
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

    metrics.observeChains(
      contexts.map((c) => ({
        name: c.name,
        trackedSends: () => c.transactions.stats().inFlightByState,
        ladders: () => c.transactions.ladders.stats(),
        feeWindowMovedAt: () => {
          const { follower, fallbackAt } = c.fees.status();
          const moved = Math.max(follower.lastMoveAt ?? -1, fallbackAt ?? -1);
          return moved < 0 ? undefined : moved;
        },
        upstreamHealthy: readiness[`chain:${c.name}`],
        ...(c.upstream.geyser === undefined
          ? {}
          : {
              geyserStatuses: () => {
                const { streamStatuses, nodeStatuses } = c.transactions.stats();
                return { subscriptions: c.upstream.geyser!.stats().subscriptions, streamStatuses, nodeStatuses };
              },
            }),
        ...(c.upstream.geyser === undefined
          ? {}
          : {
              geyser: () => {
                const geyser = c.upstream.geyser!;
                const { reconnects, fallbacks, delivered } = geyser.stats();
                return { healthy: geyser.healthy(), lagSlots: geyser.lagSlots(), reconnects, fallbacks, delivered };
              },
            }),
        ...(c.upstream.geyserBlocks === undefined
          ? {}
          : {
              geyserBlocks: () => {
                const stream = c.upstream.geyserBlocks!;
                const { reconnects, fallbacks, blocks } = stream.stats();
                return { healthy: stream.healthy(), reconnects, fallbacks, blocks };
              },
            }),
      })),
    );

    const keys =
      config.keys.length > 0 ? config.keys : [{ name: "dev", key: `dev-${randomBytes(18).toString("base64url")}` }];
    const apiKeys = keys.map((k) => k.key);
    const limits = new Map(keys.filter((k) => k.rateLimit !== undefined).map((k) => [k.name, k.rateLimit ?? null]));
    const limited = config.rateLimit !== undefined || [...limits.values()].some((l) => l !== null);
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
    if (config.localnet.enabled) await firstFeeLevels(contexts, LOCALNET_LEVELS_WAIT_MS);
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
        localnetUrl,
        localnetPid,
      },
      "solgate listening",
    );
    let closing: Promise<void> | undefined;
    return {
      port: listening.port,
      host: listening.host,
      metricsPort: metricsServer.port,
      localnetUrl,
      demo: config.demo,
      apiKeys,
      localnetExited,
      close: () => (closing ??= cleanup()),
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** The collection feed's settings where the configuration has none (tests that build a Config by hand). */
const DEFAULT_FEED = {
  retentionMs: 24 * 3_600_000,
  maxEventsPerCollection: 100_000,
  heartbeatMs: 15_000,
  maxCollections: 1000,
};

/** The webhooks' settings where the configuration has none. */
const DEFAULT_WEBHOOKS = { retryPeriodMs: 24 * 3_600_000, allowPrivateUrls: false };

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
    let timer: NodeJS.Timeout | undefined;
    const pastDeadline = new Promise((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    });
    await Promise.race([
      Promise.all([
        ...waiting.map((c) => c.fees.refresh().catch(() => undefined)),
        new Promise((resolve) => setTimeout(resolve, FIRST_LEVELS_POLL_MS)),
      ]),
      pastDeadline,
    ]);
    clearTimeout(timer);
  }
}
