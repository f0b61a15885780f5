/**
 * The composition root: configuration -> logger and metrics -> one upstream and its cores per
 * chain -> the server on its port, metrics on theirs. With no remote chain configured, the
 * embedded localnet is started first and served as chain `localnet`. SIGTERM/SIGINT drain and exit.
 */
import { randomBytes } from "node:crypto";
import { Registry } from "prom-client";
import { createChainRegistry } from "./chains.ts";
import type { ChainContext } from "./chains.ts";
import { loadConfig, LOCALNET_CHAIN } from "./config.ts";
import type { ChainConfig, Config } from "./config.ts";
import { createProgramAccounts } from "./programs/program-accounts.ts";
import { createFeeMarket } from "./fees/fee-market.ts";
import { createCollections } from "./collections/collections.ts";
import { createMarketFromConfig } from "./collections/market/market-config.ts";
import { createOffchainJson } from "./collections/offchain-json.ts";
import { createApiKeyChecker } from "./server/auth.ts";
import { createLogger } from "./server/logger.ts";
import type { Logger } from "./server/logger.ts";
import { createMetrics, startMetricsServer } from "./server/metrics.ts";
import { createRoutes, createStreamRoutes } from "./server/routes.ts";
import { createServer } from "./server/server.ts";
import { createDemoHandler } from "./demo/demo-handler.ts";
import { createRestHandler } from "./rest/rest-handler.ts";
import { createUpstream } from "./upstream/upstream.ts";
import { createTransactionService } from "./transactions/transaction-service.ts";

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

/** Starts everything `config` describes. */
export async function startGateway(config: Config, logger: Logger): Promise<Gateway> {
  const metrics = createMetrics(new Registry());
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch((err: unknown) => logger.error({ err }, "cleanup failed"));
  };
  try {
    let chainConfigs: ChainConfig[] = config.chains;
    let localnetUrl: string | undefined;
    let localnetPid: number | undefined;
    let localnetExited: Promise<unknown> = new Promise(() => {});
    if (config.localnet.enabled) {
      // Loaded only when used: a deployment on remote chains never loads the localnet's code.
      const { startLocalnet } = await import("./localnet/launcher.ts");
      const localnet = await startLocalnet({
        ...(config.localnet.port === undefined ? {} : { port: config.localnet.port }),
        logLevel: config.logLevel,
        env: { LOCALNET_WORLD: config.localnet.world ? "1" : "0", LOCALNET_TRAFFIC: config.localnet.traffic ? "1" : "0" },
        // Seeding the default world (10,000 NFTs, 100,000 token holders) takes tens of seconds on 2 cores.
        startTimeoutMs: config.localnet.world ? 180_000 : 30_000,
        // The localnet prints what it seeded and where its manifest and demo keypair are: pass that on.
        onStderr: (text) => process.stderr.write(text),
      });
      cleanups.push(async () => {
        await localnet.stop();
      });
      localnetUrl = localnet.rpcUrl;
      localnetPid = localnet.pid;
      // Only a death nobody asked for is reported; stop() during shutdown is expected.
      localnetExited = localnet.exited.then((how) => (how.expected ? new Promise(() => {}) : how));
      chainConfigs = [{ name: LOCALNET_CHAIN, rpcUrls: [localnet.rpcUrl], wsUrl: localnet.wsUrl }];
    }

    // Shared by all chains: one floor-price cache and rate limit per marketplace, one metadata-JSON cache.
    const market = createMarketFromConfig(config.market, (err, ref) => logger.debug({ err, ...ref }, "floor price: marketplace call failed"));
    const offchain = createOffchainJson();
    const contexts: ChainContext[] = chainConfigs.map((chain) => {
      const upstream = createUpstream({
        chain: chain.name,
        rpcUrls: chain.rpcUrls,
        ...(chain.dasUrl === undefined ? {} : { dasUrl: chain.dasUrl }),
        ...(chain.wsUrl === undefined ? {} : { wsUrl: chain.wsUrl }),
        ...config.upstream,
        // The message only: a provider's WebSocket URL carries its API key, and errors may quote it.
        onFeedError: (err) =>
          logger.warn({ chain: chain.name, reason: err instanceof Error ? err.message : String(err) }, "signature notifications unavailable; polling alone for a while"),
        metrics: metrics.upstreamFor(chain.name),
      });
      cleanups.push(() => upstream.close());
      const fees = createFeeMarket({
        upstream,
        ...config.fees,
        onError: (err, during) => logger.debug({ err, chain: chain.name, during }, "fee market: upstream read failed"),
      });
      fees.start();
      cleanups.push(() => fees.stop());
      const transactions = createTransactionService({
        upstream,
        fees,
        ...config.transactions,
        onError: (err) => logger.warn({ err, chain: chain.name }, "transaction tracking failed"),
      });
      transactions.start();
      cleanups.push(() => transactions.stop());
      const collections = createCollections({ upstream, market, offchain });
      return { name: chain.name, upstream, programs: createProgramAccounts({ upstream }), fees, transactions, collections };
    });
    const chains = createChainRegistry(contexts, config.defaultChain);

    const apiKeys = config.apiKeys.length > 0 ? config.apiKeys : [`dev-${randomBytes(18).toString("base64url")}`];
    const server = createServer({
      routes: createRoutes({ chains }),
      streamRoutes: createStreamRoutes({ chains }),
      auth: createApiKeyChecker(apiKeys),
      logger,
      metrics,
      corsOrigins: config.server.corsOrigins,
      socketTimeoutMs: config.server.socketTimeoutMs,
      idleTimeoutMs: config.server.idleTimeoutMs,
      maxConnectionsPerIp: config.server.maxConnectionsPerIp,
      maxConnections: config.server.maxConnections,
      maxStreamsPerConnection: config.server.maxStreamsPerConnection,
      shutdownTimeoutMs: config.server.shutdownTimeoutMs,
      readMaxBytes: config.server.maxRequestBytes,
      preHandlers: config.demo ? [createDemoHandler()] : [],
      // REST paths from the contract's google.api.http annotations, the SSE watch and /openapi.json.
      inProcessHandlers: (context) => [createRestHandler(context).handle],
    });
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

/** What a developer needs to try the gateway on the localnet. */
function banner(gateway: Gateway, keyGenerated: boolean): string {
  const everywhere = gateway.host === "0.0.0.0" || gateway.host === "::";
  const hostInUrl = everywhere ? "127.0.0.1" : gateway.host.includes(":") ? `[${gateway.host}]` : gateway.host;
  const url = `http://${hostInUrl}:${gateway.port}`;
  const bound = everywhere ? `every interface (${gateway.host}), port ${gateway.port}` : url;
  const key = gateway.apiKeys[0];
  return [
    "",
    `Solgate is listening on ${bound} (gRPC, gRPC-Web, Connect, REST); metrics on 127.0.0.1:${gateway.metricsPort}/metrics`,
    ...(everywhere ? ["WARNING: the port is reachable from other machines, and the API key below is printed; set HOST=127.0.0.1 to keep it local"] : []),
    `Chain "localnet" is the embedded localnet at ${gateway.localnetUrl}`,
    `API key${keyGenerated ? " (generated for this run; set SOLGATE_API_KEYS to choose one)" : ""}: ${key}`,
    "Try:",
    `  npx buf curl --http2-prior-knowledge --list-services ${url}`,
    `  npx buf curl --protocol grpc --http2-prior-knowledge -H "Authorization: Bearer ${key}" \\`,
    `    ${url}/solgate.v1.FeeService/GetFees`,
    `  curl -H "Authorization: Bearer ${key}" ${url}/v1/localnet/network/fees`,
    ...(gateway.demo ? [`  open ${url}/demo/ for a live view of fees and transactions`] : []),
    "",
  ].join("\n");
}

/** The longest shutdown waits for its log lines to be written out. */
const LOG_FLUSH_TIMEOUT_MS = 3000;

/** Runs the gateway as a process: exits 0 after a clean drain, 1 on a start failure or a dead localnet. */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(2);
  }
  const logger = createLogger({ level: config.logLevel });
  let gateway: Gateway;
  try {
    gateway = await startGateway(config, logger);
  } catch (err) {
    logger.fatal({ err }, "solgate failed to start");
    process.exit(1);
  }
  if (config.localnet.enabled) process.stderr.write(banner(gateway, config.apiKeys.length === 0));

  let stopping = false;
  const stop = async (reason: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, "shutting down");
    await gateway.close();
    // Written out while the event loop can still wait for a slow reader; what is left goes in the exit
    // hook's synchronous flush (see createStdoutDestination).
    await new Promise<void>((resolve) => {
      setTimeout(resolve, LOG_FLUSH_TIMEOUT_MS).unref();
      logger.flush(() => resolve());
    });
    process.exit(exitCode);
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      // A second signal means "now".
      if (stopping) process.exit(1);
      void stop(signal, 0);
    });
  }
  void gateway.localnetExited.then((how) => {
    if (stopping) return;
    logger.fatal({ exit: how }, "the localnet exited; the gateway cannot serve chain localnet");
    void stop("localnet exited", 1);
  });
}

if (import.meta.main) await main();
