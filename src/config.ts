/**
 * Solgate's configuration, read once from the environment (and the files it names) into a typed,
 * validated object. Nothing else in the gateway reads `process.env`. Every problem is reported at
 * once, so a bad deployment is fixed in one round.
 */
import { readFileSync } from "node:fs";
import { LOG_LEVELS } from "./server/logger.ts";
import { parseMarketConfig } from "./collections/market/market-config.ts";
import type { MarketConfig } from "./collections/market/market-config.ts";
import type { LogLevel } from "./server/logger.ts";
import { defaultKeyName } from "./server/auth.ts";
import { parseRateLimit } from "./server/rate-limit.ts";
import type { RateLimit } from "./server/rate-limit.ts";
import type { RedisTopology } from "./store/redis.ts";

/** One remote chain and how to reach it. */
export interface ChainConfig {
  /** The name requests use (`mainnet`, `devnet`, ...): lower case, digits and dashes. */
  name: string;
  /** JSON-RPC URLs, in order of preference (failover). */
  rpcUrls: string[];
  /** The DAS endpoints, in order of preference (failover), if not the RPC URLs. */
  dasUrls?: string[];
  /**
   * The PubSub WebSockets for signature notifications, in order of preference (the feed moves on after a
   * failed connection); null for none; unset derives one from the first RPC URL.
   */
  wsUrls?: string[] | null;
  /** A Yellowstone Geyser gRPC endpoint (http: h2c or https:) pushing blocks and confirmations; unset: none. */
  geyserUrl?: string;
  /** Its `x-token` (`SOLGATE_GEYSER_TOKEN`, or `geyserToken` in the chains file). */
  geyserToken?: string;
  /** Send-only endpoints every send and rebroadcast also goes to, at once (docs/landing.md). */
  sendUrls?: string[];
  /** A Jito block engine's base URL that sends also go to. */
  jitoUrl?: string;
  /** The block engine's `x-jito-auth` UUID. */
  jitoAuth?: string;
}

/** The whole configuration. Later cores add their own sections. */
export interface Config {
  /**
   * The public port (gRPC, gRPC-Web, Connect, REST) and the interface it binds: by default loopback
   * with the embedded localnet (a dev setup with a printed key), every interface with a remote chain.
   */
  port: number;
  host: string;
  /** API keys; empty only with the embedded localnet, where `main` makes a dev key. */
  apiKeys: string[];
  /**
   * Every key with its name and limit: a key's limit is its own (null: unlimited) or, when it has none,
   * `rateLimit`. Names appear in logs and metrics; keys never do.
   */
  keys: ApiKeyPolicy[];
  /** The default per-key limit (`SOLGATE_RATE_LIMIT`); undefined: unlimited. */
  rateLimit?: RateLimit;
  /** Remote chains; empty when the embedded localnet serves chain `localnet`. */
  chains: ChainConfig[];
  /** The chain an empty `chain` field means. */
  defaultChain: string;
  upstream: {
    timeoutMs: number;
    maxRetries: number;
    maxConcurrency: number;
    /** The whole of one upstream call, retries and failover included. */
    budgetMs: number;
    /** Circuit breaker per upstream URL. */
    breaker: { consecutiveFailures: number; failureRatio: number; halfOpenAfterMs: number };
    /** The largest upstream answer read, in bytes (program-account scans have their own). */
    maxResponseBytes: number;
    /** The largest getProgramAccounts answer read by a scan (program accounts, token holders), in bytes. */
    maxScanResponseBytes: number;
    /** What the answers being read at once may hold between them, per chain, in bytes. */
    maxBufferedBytes: number;
    /** The largest PubSub (WebSocket) message taken, in bytes. */
    maxWsMessageBytes: number;
  };
  logLevel: LogLevel;
  /** Prometheus `/metrics`: its own port (0 = ephemeral) on its own interface (loopback by default). */
  metrics: { port: number; host: string };
  server: {
    /** Browser origins CORS allows, or `*`. */
    corsOrigins: "*" | string[];
    /** Sockets silent (or slow with HTTP/1.1 headers) for this long are dropped. */
    socketTimeoutMs: number;
    /** Idle keep-alive connections are closed after this. */
    idleTimeoutMs: number;
    /** On SIGTERM, how long RPCs in flight get before they are cut. */
    shutdownTimeoutMs: number;
    /** Largest request message, bytes. */
    maxRequestBytes: number;
    /** Open connections allowed from one client address. */
    maxConnectionsPerIp: number;
    /** Open connections allowed in all; by default half the process's file-descriptor limit, at most 10,000. */
    maxConnections: number;
    /** Streams one HTTP/2 connection may have open at once. */
    maxStreamsPerConnection: number;
  };
  /**
   * The embedded chain, started when no remote chain is configured. `port` undefined lets the
   * launcher choose; the localnet's other `LOCALNET_*` options are its own (packages/localnet/src/config.ts).
   */
  localnet: {
    enabled: boolean;
    port?: number;
    /** Seed the world (collections, token holders, demo wallet) and run background traffic. */
    world: boolean;
    traffic: boolean;
    /** Follow the localnet's Geyser stream (default true; `SOLGATE_GEYSER_URL=off` or `LOCALNET_GEYSER_PORT=off`: polling and PubSub alone). */
    geyser: boolean;
    /**
     * The embedded localnet's Yellowstone gRPC port (`LOCALNET_GEYSER_PORT`; `off`: no Geyser server);
     * undefined: a free port, named in the banner.
     */
    geyserPort?: number | "off";
    /** Send paths of the embedded chain (SOLGATE_SEND_URLS, SOLGATE_JITO_URL, SOLGATE_JITO_AUTH with no SOLGATE_RPC_URL). */
    sendPaths: Pick<ChainConfig, "sendUrls" | "jitoUrl" | "jitoAuth">;
  };
  /** Serve the live demo page at `/demo`. */
  demo: boolean;
  /** Floor-price market data: marketplace URLs and keys, collection -> listing (collections/market/market-config.ts). */
  market: MarketConfig;
  /** Transaction tracking: status polling, rebroadcasting, watch heartbeats, confirm waits and the tracked-send bound. */
  transactions: {
    pollIntervalMs: number;
    rebroadcastIntervalMs: number;
    heartbeatIntervalMs: number;
    confirmTimeoutMs: number;
    maxTracked: number;
    /** The most lamports PrepareTransaction adds as a tip (SOLGATE_TIP_MAX_LAMPORTS, default 1,000,000 = 0.001 SOL). */
    tipMaxLamports: bigint;
  };
  /**
   * `NODE_ENV=production`: the embedded localnet never starts, a chain and an API key must be
   * configured, and risky settings are warned about at start.
   */
  production: boolean;
  /** Settings that are allowed but probably not meant; logged at start. */
  warnings: string[];
  /**
   * The store a fleet of replicas shares: tracked sends, their status changes and the leases of fleet-wide
   * work. One server (`SOLGATE_REDIS_URL`), a Redis Cluster (`SOLGATE_REDIS_CLUSTER_NODES`) or Sentinel
   * (`SOLGATE_REDIS_SENTINELS`, `SOLGATE_REDIS_SENTINEL_NAME`). Absent: everything lives in this process's memory.
   */
  redis?: RedisTopology;
  /**
   * OpenTelemetry traces, exported over OTLP/HTTP (protobuf) when an endpoint is configured; absent:
   * tracing is off and costs nothing (no provider, no spans). The exporter itself also reads the standard
   * `OTEL_EXPORTER_OTLP_HEADERS`, `_TIMEOUT` and `_COMPRESSION` variables (and their `_TRACES_` forms).
   */
  tracing?: { tracesUrl: string; serviceName: string; sampleRatio: number };
  /**
   * The fee market: its window of recent slots, its cap on tracked accounts, bounds on `recommended`, and the
   * landing odds (k slots, the target `recommended` must reach, the chain's CU limits the odds assume).
   */
  fees: {
    windowSlots: number;
    maxAccounts: number;
    recommendedFloor: bigint;
    recommendedCeiling?: bigint;
    oddsSlots: number;
    oddsTarget: number;
    blockCuLimit: number;
    accountCuLimit: number;
  };
  /**
   * The collection change feed (src/collections/feed): how long each collection's log keeps its events
   * (at least 24 h by default), the most it keeps per collection (memory stays bounded), and how often an
   * idle watch gets a heartbeat.
   */
  collectionFeed?: {
    retentionMs: number;
    maxEventsPerCollection: number;
    heartbeatMs: number;
    maxCollections: number;
    /** How often followed collections' floors are read for FLOOR_CHANGED (with a marketplace configured). */
    floorPollMs: number;
  };
  /**
   * Webhooks: how long a delivery is retried, and whether URLs may be http or reach private and loopback
   * addresses (tests only: the guard of off-chain metadata applies otherwise).
   */
  webhooks?: { retryPeriodMs: number; allowPrivateUrls: boolean };
}

/** One API key as configured. */
export interface ApiKeyPolicy {
  readonly name: string;
  readonly key: string;
  /** Its own limit; null for none; undefined takes the default. */
  readonly rateLimit?: RateLimit | null;
}

/** The name the embedded chain is served under. */
export const LOCALNET_CHAIN = "localnet";

const CHAIN_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** A configuration error listing every problem found. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/** Reads and validates the configuration; throws ConfigError listing every problem. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const get = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return n;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = get(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (["1", "true", "yes", "on"].includes(raw)) return true;
    if (["0", "false", "no", "off"].includes(raw)) return false;
    problems.push(`${name} must be 1 or 0 (true/false), got ${JSON.stringify(raw)}`);
    return fallback;
  };
  const url = (name: string, value: string): string | undefined => {
    try {
      const u = new URL(value);
      if (u.protocol === "http:" || u.protocol === "https:") return value;
    } catch {}
    // Never echo the value: provider URLs carry API keys.
    problems.push(`${name} must hold http(s) URLs; one entry is not`);
    return undefined;
  };
  /** A WebSocket URL, or `off` (null). */
  const wsUrlOf = (name: string, value: string): string | null | undefined => {
    if (value === "off") return null;
    try {
      const u = new URL(value);
      if (u.protocol === "ws:" || u.protocol === "wss:") return value;
    } catch {}
    problems.push(`${name} must be a ws(s) URL or "off"`);
    return undefined;
  };
  /** A list of WebSocket URLs, or `off` alone (null). */
  const wsUrlsOf = (name: string, values: readonly string[]): string[] | null => {
    if (values.length === 1 && values[0] === "off") return null;
    return values.map((v) => wsUrlOf(name, v === "off" ? "" : v)).filter((u): u is string => typeof u === "string");
  };

  const port = int("PORT", 8080, 0, 65535);

  // Landing odds: k must leave runs of k slots in the window; a target outside 0.5-0.99 is no recommendation
  // (below half it is a coin toss, and 1.0 is unreachable for an estimate from a finite window).
  const oddsSlots = int("SOLGATE_FEES_ODDS_SLOTS", 4, 1, 64);
  const feeWindowSlots = Number(get("SOLGATE_FEES_WINDOW_SLOTS") ?? 150);
  if (Number.isSafeInteger(feeWindowSlots) && oddsSlots * 2 > feeWindowSlots)
    problems.push(
      `SOLGATE_FEES_ODDS_SLOTS must be at most half of SOLGATE_FEES_WINDOW_SLOTS (${feeWindowSlots}), got ${oddsSlots}`,
    );
  const targetRaw = get("SOLGATE_FEES_TARGET");
  let oddsTarget = 0.9;
  if (targetRaw !== undefined) {
    const t = Number(targetRaw);
    if (!/^(0|1)?\.\d+$|^1$|^0$/.test(targetRaw) || !(t >= 0.5 && t <= 0.99))
      problems.push(`SOLGATE_FEES_TARGET must be a probability from 0.5 to 0.99, got ${JSON.stringify(targetRaw)}`);
    else oddsTarget = t;
  }

  // API keys: inline and/or a file: one key per line (blank lines and # comments ignored), or the
  // structured form, a JSON object {"keys": [{"name", "key", "rateLimit"?}]}.
  const policies: ApiKeyPolicy[] = [];
  const inline = get("SOLGATE_API_KEYS");
  if (inline !== undefined) {
    for (const key of inline
      .split(",")
      .map((k) => k.trim())
      .filter((k) => k !== ""))
      policies.push({ name: defaultKeyName(key), key });
  }
  const keysFile = get("SOLGATE_API_KEYS_FILE");
  if (keysFile !== undefined) {
    let text: string | undefined;
    try {
      text = readFileSync(keysFile, "utf8");
    } catch (e) {
      problems.push(`SOLGATE_API_KEYS_FILE ${JSON.stringify(keysFile)} cannot be read: ${(e as Error).message}`);
    }
    if (text?.trimStart().startsWith("{")) {
      policies.push(...readStructuredKeys(text, `SOLGATE_API_KEYS_FILE ${JSON.stringify(keysFile)}`, problems));
    } else if (text !== undefined) {
      const lines = text.split(/\r?\n/).map((l) => l.trim());
      for (const key of lines.filter((l) => l !== "" && !l.startsWith("#")))
        policies.push({ name: defaultKeyName(key), key });
    }
  }
  // A key given twice is one key; two keys under one name would mix their counts and logs.
  const keys = policies.filter((p, i) => policies.findIndex((q) => q.key === p.key) === i);
  const names = new Set<string>();
  for (const p of keys) {
    if (names.has(p.name)) problems.push(`API key name ${JSON.stringify(p.name)} is used by two keys`);
    names.add(p.name);
  }
  const apiKeys = keys.map((p) => p.key);
  const rateLimitText = get("SOLGATE_RATE_LIMIT");
  const rateLimit = rateLimitText === undefined ? undefined : parseRateLimit(rateLimitText);
  if (rateLimitText !== undefined && rateLimit === undefined) {
    problems.push(
      `SOLGATE_RATE_LIMIT must look like 50/s, 3000/m or "50/s burst 100", got ${JSON.stringify(rateLimitText)}`,
    );
  }
  if (apiKeys.some((k) => !/^[\x21-\x7e]+$/.test(k))) {
    problems.push("API keys must be printable ASCII without spaces or commas (one key is not)");
  }

  // Chains: SOLGATE_RPC_URL names one chain; SOLGATE_CHAINS_FILE may add more.
  const chains: ChainConfig[] = [];
  let fileDefault: string | undefined;
  const rpcUrl = get("SOLGATE_RPC_URL");
  const dasUrl = get("SOLGATE_DAS_URL");
  const wsUrl = get("SOLGATE_WS_URL");
  const geyserUrl = get("SOLGATE_GEYSER_URL");
  const geyserToken = get("SOLGATE_GEYSER_TOKEN");
  const chainName = get("SOLGATE_CHAIN") ?? "mainnet";
  const sendUrls = get("SOLGATE_SEND_URLS");
  const jitoUrl = get("SOLGATE_JITO_URL");
  const jitoAuth = get("SOLGATE_JITO_AUTH");
  if (jitoAuth !== undefined && jitoUrl === undefined)
    problems.push("SOLGATE_JITO_AUTH is set without SOLGATE_JITO_URL");
  // The send paths of the SOLGATE_RPC_URL chain (or of the embedded localnet when there is none).
  const envSendPaths = {
    ...(sendUrls === undefined
      ? {}
      : {
          sendUrls: commaList(sendUrls)
            .map((u) => url("SOLGATE_SEND_URLS", u))
            .filter((u) => u !== undefined),
        }),
    ...(jitoUrl === undefined ? {} : { jitoUrl: url("SOLGATE_JITO_URL", jitoUrl) }),
    ...(jitoAuth === undefined ? {} : { jitoAuth }),
  };
  if (rpcUrl !== undefined) {
    const rpcUrls = commaList(rpcUrl);
    chains.push({
      name: chainName,
      rpcUrls: rpcUrls.map((u) => url("SOLGATE_RPC_URL", u)).filter((u) => u !== undefined),
      ...(dasUrl === undefined
        ? {}
        : {
            dasUrls: commaList(dasUrl)
              .map((u) => url("SOLGATE_DAS_URL", u))
              .filter((u) => u !== undefined),
          }),
      ...(wsUrl === undefined ? {} : { wsUrls: wsUrlsOf("SOLGATE_WS_URL", commaList(wsUrl)) }),
      ...(geyserUrl === undefined || geyserUrl === "off" ? {} : { geyserUrl: url("SOLGATE_GEYSER_URL", geyserUrl) }),
      ...(geyserToken === undefined ? {} : { geyserToken }),
      ...envSendPaths,
    });
    if (dasUrl !== undefined && commaList(dasUrl).length === 0)
      problems.push("SOLGATE_DAS_URL is set but holds no URL");
    if (wsUrl !== undefined && commaList(wsUrl).length === 0) problems.push("SOLGATE_WS_URL is set but holds no URL");
  } else {
    if (dasUrl !== undefined) problems.push("SOLGATE_DAS_URL is set without SOLGATE_RPC_URL");
    if (wsUrl !== undefined) problems.push("SOLGATE_WS_URL is set without SOLGATE_RPC_URL");
    if (geyserUrl !== undefined && geyserUrl !== "off")
      problems.push("SOLGATE_GEYSER_URL is set without SOLGATE_RPC_URL");
  }
  const chainsFile = get("SOLGATE_CHAINS_FILE");
  if (chainsFile !== undefined) {
    fileDefault = readChainsFile(chainsFile, chains, problems, url, wsUrlsOf);
  }
  for (const c of chains) {
    if (!CHAIN_NAME.test(c.name)) problems.push(`chain name ${JSON.stringify(c.name)} must match ${CHAIN_NAME.source}`);
    if (c.name === LOCALNET_CHAIN) problems.push(`chain name "${LOCALNET_CHAIN}" is reserved for the embedded chain`);
  }
  const seen = new Set<string>();
  for (const c of chains) {
    if (seen.has(c.name)) problems.push(`chain ${JSON.stringify(c.name)} is configured twice`);
    seen.add(c.name);
  }

  const production = get("NODE_ENV") === "production";
  if (production && chains.length === 0) {
    problems.push(
      "NODE_ENV=production needs a chain: set SOLGATE_RPC_URL or SOLGATE_CHAINS_FILE (the embedded localnet is for development and never starts in production)",
    );
  }
  const localnetEnabled = chains.length === 0 && !production;
  // The embedded dev mode answers only this machine unless HOST says otherwise.
  const host = get("HOST") ?? (localnetEnabled ? "127.0.0.1" : "0.0.0.0");
  const defaultChain =
    get("SOLGATE_DEFAULT_CHAIN") ??
    fileDefault ??
    (localnetEnabled || chains.length === 0 ? LOCALNET_CHAIN : chains[0].name);
  const served = localnetEnabled ? [LOCALNET_CHAIN] : chains.map((c) => c.name);
  const assumedLimits = assumedCuLimits(localnetEnabled, get);
  if (served.length > 0 && !served.includes(defaultChain)) {
    problems.push(`default chain ${JSON.stringify(defaultChain)} is not served (served: ${served.join(", ")})`);
  }
  if ((!localnetEnabled || production) && apiKeys.length === 0) {
    problems.push(
      "SOLGATE_API_KEYS or SOLGATE_API_KEYS_FILE must give at least one key when a remote chain is configured",
    );
  }

  const logLevel = (get("LOG_LEVEL") ?? "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(logLevel)}`);

  const redis = readRedisTopology(get, problems);

  const cors = get("SOLGATE_CORS_ORIGINS") ?? "*";
  const corsOrigins =
    cors === "*"
      ? "*"
      : cors
          .split(",")
          .map((o) => o.trim())
          .filter((o) => o !== "");
  if (corsOrigins !== "*" && corsOrigins.some((o) => !/^https?:\/\/[^/\s]+$/.test(o))) {
    problems.push("SOLGATE_CORS_ORIGINS must be `*` or comma-separated origins like https://app.example.com");
  }

  const tracing = readTracing(get, problems);

  const warnings: string[] = [];
  if (production && corsOrigins === "*") {
    warnings.push(
      "SOLGATE_CORS_ORIGINS is * (any web page may call this gateway with a key it holds); list your origins in production",
    );
  }

  const config: Config = {
    port,
    host,
    apiKeys,
    keys,
    ...(rateLimit === undefined ? {} : { rateLimit }),
    chains,
    defaultChain,
    upstream: {
      timeoutMs: int("SOLGATE_UPSTREAM_TIMEOUT_MS", 15_000, 100, 300_000),
      maxRetries: int("SOLGATE_UPSTREAM_MAX_RETRIES", 3, 0, 10),
      maxConcurrency: int("SOLGATE_UPSTREAM_MAX_CONCURRENCY", 32, 1, 1024),
      budgetMs: int("SOLGATE_UPSTREAM_BUDGET_MS", 10_000, 100, 600_000),
      breaker: {
        consecutiveFailures: int("SOLGATE_UPSTREAM_BREAKER_FAILURES", 5, 1, 1000),
        failureRatio: int("SOLGATE_UPSTREAM_BREAKER_FAILURE_PERCENT", 50, 1, 100) / 100,
        halfOpenAfterMs: int("SOLGATE_UPSTREAM_BREAKER_COOLDOWN_MS", 10_000, 100, 600_000),
      },
      maxResponseBytes: int("SOLGATE_UPSTREAM_MAX_RESPONSE_BYTES", 16 * 1024 * 1024, 1024, 2 ** 31 - 1),
      maxScanResponseBytes: int("SOLGATE_UPSTREAM_MAX_SCAN_RESPONSE_BYTES", 64 * 1024 * 1024, 1024, 2 ** 31 - 1),
      maxBufferedBytes: int("SOLGATE_UPSTREAM_MAX_BUFFERED_BYTES", 64 * 1024 * 1024, 1024, 2 ** 31 - 1),
      maxWsMessageBytes: int("SOLGATE_UPSTREAM_MAX_WS_MESSAGE_BYTES", 1024 * 1024, 1024, 2 ** 31 - 1),
    },
    logLevel,
    metrics: { port: int("METRICS_PORT", 9464, 0, 65535), host: get("METRICS_HOST") ?? "127.0.0.1" },
    server: {
      corsOrigins,
      socketTimeoutMs: int("SOLGATE_SOCKET_TIMEOUT_MS", 10_000, 100, 600_000),
      idleTimeoutMs: int("SOLGATE_IDLE_TIMEOUT_MS", 60_000, 1_000, 3_600_000),
      shutdownTimeoutMs: int("SOLGATE_SHUTDOWN_TIMEOUT_MS", 10_000, 0, 600_000),
      maxRequestBytes: int("SOLGATE_MAX_REQUEST_BYTES", 4 * 1024 * 1024, 1024, 64 * 1024 * 1024),
      maxConnectionsPerIp: int("SOLGATE_MAX_CONNECTIONS_PER_IP", 1000, 1, 1_000_000),
      maxConnections: int("SOLGATE_MAX_CONNECTIONS", defaultMaxConnections(), 1, 1_000_000),
      maxStreamsPerConnection: int("SOLGATE_MAX_STREAMS_PER_CONNECTION", 1000, 1, 100_000),
    },
    localnet: {
      enabled: localnetEnabled,
      ...(get("LOCALNET_PORT") === undefined ? {} : { port: int("LOCALNET_PORT", 0, 0, 65535) }),
      // A person running `npm start` gets a world worth looking at; test runs get an empty chain unless they ask.
      world: bool("LOCALNET_WORLD", get("NODE_ENV") !== "test"),
      traffic: bool("LOCALNET_TRAFFIC", get("NODE_ENV") !== "test"),
      geyser: geyserUrl !== "off" && get("LOCALNET_GEYSER_PORT") !== "off",
      ...(get("LOCALNET_GEYSER_PORT") === undefined
        ? {}
        : { geyserPort: get("LOCALNET_GEYSER_PORT") === "off" ? "off" : int("LOCALNET_GEYSER_PORT", 0, 0, 65535) }),
      sendPaths: rpcUrl === undefined ? envSendPaths : {},
    },
    demo: bool("SOLGATE_DEMO", localnetEnabled),
    transactions: {
      pollIntervalMs: int("SOLGATE_TX_POLL_MS", 400, 20, 60_000),
      rebroadcastIntervalMs: int("SOLGATE_TX_REBROADCAST_MS", 2_000, 100, 60_000),
      heartbeatIntervalMs: int("SOLGATE_TX_HEARTBEAT_MS", 15_000, 100, 600_000),
      confirmTimeoutMs: int("SOLGATE_TX_CONFIRM_TIMEOUT_MS", 90_000, 1_000, 600_000),
      maxTracked: int("SOLGATE_TX_MAX_TRACKED", 100_000, 100, 10_000_000),
      // At least Jito's minimum tip, so that a clamped level is still a tip a block engine takes.
      tipMaxLamports: BigInt(int("SOLGATE_TIP_MAX_LAMPORTS", 1_000_000, 1_000, Number.MAX_SAFE_INTEGER)),
    },
    fees: {
      windowSlots: int("SOLGATE_FEES_WINDOW_SLOTS", 150, 1, 10_000),
      maxAccounts: int("SOLGATE_FEES_MAX_ACCOUNTS", 100_000, 0, 10_000_000),
      recommendedFloor: BigInt(int("SOLGATE_FEES_RECOMMENDED_FLOOR", 0, 0, Number.MAX_SAFE_INTEGER)),
      ...(get("SOLGATE_FEES_RECOMMENDED_CEILING") === undefined
        ? {}
        : { recommendedCeiling: BigInt(int("SOLGATE_FEES_RECOMMENDED_CEILING", 0, 0, Number.MAX_SAFE_INTEGER)) }),
      oddsSlots,
      oddsTarget,
      blockCuLimit: int("SOLGATE_FEES_BLOCK_CU_LIMIT", assumedLimits.block, 1_000_000, 1_000_000_000),
      accountCuLimit: int("SOLGATE_FEES_ACCOUNT_CU_LIMIT", assumedLimits.account, 1_000_000, 1_000_000_000),
    },
    market: parseMarketConfig(get, problems),
    collectionFeed: {
      retentionMs: int("SOLGATE_FEED_RETENTION_HOURS", 24, 1, 24 * 30) * 3_600_000,
      maxEventsPerCollection: int("SOLGATE_FEED_MAX_EVENTS", 100_000, 100, 10_000_000),
      heartbeatMs: int("SOLGATE_FEED_HEARTBEAT_MS", 15_000, 100, 300_000),
      maxCollections: int("SOLGATE_FEED_MAX_COLLECTIONS", 1000, 1, 100_000),
      floorPollMs: int("SOLGATE_FEED_FLOOR_POLL_MS", 60_000, 100, 3_600_000),
    },
    webhooks: {
      retryPeriodMs: int("SOLGATE_WEBHOOK_RETRY_HOURS", 24, 24, 24 * 30) * 3_600_000,
      allowPrivateUrls: get("SOLGATE_WEBHOOK_ALLOW_PRIVATE_URLS") === "1",
    },
    production,
    warnings,
    ...(redis === undefined ? {} : { redis }),
    ...(tracing === undefined ? {} : { tracing }),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

const REDIS_URL = /^rediss?:\/\/[^\s]+$/;

/**
 * The shared store's topology from `SOLGATE_REDIS_URL`, `SOLGATE_REDIS_CLUSTER_NODES` or `SOLGATE_REDIS_SENTINELS`
 * (with `SOLGATE_REDIS_SENTINEL_NAME`): at most one of them. Values are never echoed (they may carry passwords).
 */
/**
 * The block and account limits the fee odds assume when SOLGATE_FEES_BLOCK_CU_LIMIT / _ACCOUNT_CU_LIMIT are unset.
 * The embedded localnet packs as solana-test-validator 4.4 does at genesis (100,000,000 per block, 40% per account:
 * packages/localnet/src/chain/cost-model.ts), or by its own LOCALNET_BLOCK_CU_LIMIT / _ACCOUNT_CU_LIMIT, which it
 * validates itself. A remote chain: agave's 400 ms baseline without SIMD-0286 (60,000,000 and 24,000,000).
 */
function assumedCuLimits(
  localnet: boolean,
  get: (name: string) => string | undefined,
): { block: number; account: number } {
  if (!localnet) return { block: 60_000_000, account: 24_000_000 };
  const read = (name: string, fallback: number) => {
    const n = Number(get(name));
    return Number.isSafeInteger(n) && n > 0 ? n : fallback;
  };
  const block = read("LOCALNET_BLOCK_CU_LIMIT", 100_000_000);
  return { block, account: read("LOCALNET_ACCOUNT_CU_LIMIT", Math.floor((block * 40) / 100)) };
}

function readRedisTopology(get: (name: string) => string | undefined, problems: string[]): RedisTopology | undefined {
  const url = get("SOLGATE_REDIS_URL");
  const clusterNodes = get("SOLGATE_REDIS_CLUSTER_NODES");
  const sentinels = get("SOLGATE_REDIS_SENTINELS");
  const name = get("SOLGATE_REDIS_SENTINEL_NAME");
  const given = [
    ["SOLGATE_REDIS_URL", url],
    ["SOLGATE_REDIS_CLUSTER_NODES", clusterNodes],
    ["SOLGATE_REDIS_SENTINELS", sentinels],
  ].filter(([, value]) => value !== undefined);
  if (given.length > 1) {
    problems.push(`set one of ${given.map(([variable]) => variable).join(", ")}: they name different Redis topologies`);
    return undefined;
  }
  if (name !== undefined && sentinels === undefined)
    problems.push("SOLGATE_REDIS_SENTINEL_NAME needs SOLGATE_REDIS_SENTINELS (the sentinels' host:port list)");
  if (url !== undefined) {
    if (REDIS_URL.test(url)) return { kind: "single", url };
    problems.push("SOLGATE_REDIS_URL must be redis://[user:password@]host:port[/db] (or rediss://)");
  }
  if (clusterNodes !== undefined) {
    const nodes = splitList(clusterNodes);
    if (nodes.length > 0 && nodes.every((n) => REDIS_URL.test(n))) return { kind: "cluster", nodes };
    problems.push(
      "SOLGATE_REDIS_CLUSTER_NODES must be a comma-separated list of redis://[user:password@]host:port (any of the cluster's nodes)",
    );
  }
  if (sentinels !== undefined) {
    const parsed = splitList(sentinels).map((entry) => {
      const match = /^([^\s:]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(entry);
      const port = match === null ? Number.NaN : Number(match[2]);
      return match === null || port < 1 || port > 65535 ? undefined : { host: match[1].replace(/^\[|\]$/g, ""), port };
    });
    const valid = parsed.filter((p) => p !== undefined);
    if (valid.length === 0 || valid.length !== parsed.length)
      problems.push("SOLGATE_REDIS_SENTINELS must be a comma-separated list of host:port (the sentinels)");
    else if (name === undefined || name.trim() === "")
      problems.push("SOLGATE_REDIS_SENTINELS needs SOLGATE_REDIS_SENTINEL_NAME (the name the sentinels monitor)");
    else return { kind: "sentinel", sentinels: valid, name: name.trim() };
  }
  return undefined;
}

function splitList(text: string): string[] {
  return text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/**
 * Tracing from the standard OpenTelemetry variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL)
 * or `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL, `/v1/traces` appended, as the specification says);
 * `OTEL_SDK_DISABLED=true` turns it off; `OTEL_SERVICE_NAME` (default `solgate`);
 * `OTEL_TRACES_SAMPLER_ARG` the ratio of new traces kept (parent-based: a caller's sampled flag wins).
 */
function readTracing(get: (name: string) => string | undefined, problems: string[]): Config["tracing"] {
  if (get("OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined;
  const traces = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const raw = traces ?? get("OTEL_EXPORTER_OTLP_ENDPOINT");
  let endpointOk = raw !== undefined;
  if (raw !== undefined) {
    try {
      endpointOk = ["http:", "https:"].includes(new URL(raw).protocol);
    } catch {
      endpointOk = false;
    }
    // Never echo the value: collector URLs may carry credentials.
    if (!endpointOk)
      problems.push(
        `${traces === undefined ? "OTEL_EXPORTER_OTLP_ENDPOINT" : "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} must be an http(s) URL (OTLP over HTTP)`,
      );
  }
  const ratioText = get("OTEL_TRACES_SAMPLER_ARG");
  const sampleRatio = ratioText === undefined ? 1 : Number(ratioText);
  if (!(sampleRatio >= 0 && sampleRatio <= 1))
    problems.push(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got ${JSON.stringify(ratioText)}`);
  if (raw === undefined || !endpointOk) return undefined;
  const tracesUrl = traces ?? `${raw.replace(/\/+$/, "")}/v1/traces`;
  return { tracesUrl, serviceName: get("OTEL_SERVICE_NAME") ?? "solgate", sampleRatio };
}

/**
 * Half the soft limit on open files (from /proc/self/limits on Linux), at most 10,000: the rest is
 * left for upstream connections, the localnet, logs and the metrics port. 10,000 where the limit
 * cannot be read.
 */
function defaultMaxConnections(): number {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    if (Number.isSafeInteger(soft) && soft > 0) return Math.max(1, Math.min(10_000, Math.floor(soft / 2)));
  } catch {}
  return 10_000;
}

/**
 * Reads `{"defaultChain": "...", "chains": {"<name>": {"rpcUrls": [...], "dasUrl": "..." | [...], "wsUrl": "..." | [...]}}}`
 * into `chains`; returns its default chain.
 */
function readChainsFile(
  path: string,
  chains: ChainConfig[],
  problems: string[],
  url: (name: string, value: string) => string | undefined,
  wsUrlsOf: (name: string, values: readonly string[]) => string[] | null,
): string | undefined {
  const where = `SOLGATE_CHAINS_FILE ${JSON.stringify(path)}`;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    problems.push(`${where} cannot be read as JSON: ${(e as Error).message}`);
    return undefined;
  }
  const doc = json as { defaultChain?: unknown; chains?: unknown };
  if (
    typeof doc !== "object" ||
    doc === null ||
    typeof doc.chains !== "object" ||
    doc.chains === null ||
    Array.isArray(doc.chains)
  ) {
    problems.push(`${where} must be an object with a "chains" object keyed by chain name`);
    return undefined;
  }
  for (const [name, value] of Object.entries(doc.chains)) {
    const entry = value as {
      rpcUrls?: unknown;
      dasUrl?: unknown;
      wsUrl?: unknown;
      geyserUrl?: unknown;
      geyserToken?: unknown;
      sendUrls?: unknown;
      jitoUrl?: unknown;
      jitoAuth?: unknown;
    };
    const rpcUrls = Array.isArray(entry?.rpcUrls) ? entry.rpcUrls : [];
    if (rpcUrls.length === 0 || !rpcUrls.every((u) => typeof u === "string")) {
      problems.push(`${where}: chain ${JSON.stringify(name)} needs "rpcUrls", a non-empty array of URLs`);
      continue;
    }
    const dasUrls = stringOrList(entry.dasUrl);
    if (dasUrls === null) {
      problems.push(
        `${where}: chain ${JSON.stringify(name)} has a "dasUrl" that is neither a string nor a non-empty array of strings`,
      );
      continue;
    }
    const wsUrls = stringOrList(entry.wsUrl);
    if (wsUrls === null) {
      problems.push(
        `${where}: chain ${JSON.stringify(name)} has a "wsUrl" that is neither a string nor a non-empty array of strings`,
      );
      continue;
    }
    const sendUrls = stringOrList(entry.sendUrls);
    if (
      sendUrls === null ||
      (entry.jitoUrl !== undefined && typeof entry.jitoUrl !== "string") ||
      (entry.jitoAuth !== undefined && typeof entry.jitoAuth !== "string")
    ) {
      problems.push(
        `${where}: chain ${JSON.stringify(name)} has a "sendUrls", "jitoUrl" or "jitoAuth" of the wrong type (strings; sendUrls may be a list)`,
      );
      continue;
    }
    const jitoUrl = typeof entry.jitoUrl === "string" ? url(`${where} (${name}.jitoUrl)`, entry.jitoUrl) : undefined;
    chains.push({
      name,
      ...(sendUrls === undefined
        ? {}
        : { sendUrls: sendUrls.map((u) => url(`${where} (${name}.sendUrls)`, u)).filter((u) => u !== undefined) }),
      ...(jitoUrl === undefined ? {} : { jitoUrl }),
      ...(typeof entry.jitoAuth === "string" ? { jitoAuth: entry.jitoAuth } : {}),
      rpcUrls: (rpcUrls as string[]).map((u) => url(`${where} (${name}.rpcUrls)`, u)).filter((u) => u !== undefined),
      ...(dasUrls === undefined
        ? {}
        : { dasUrls: dasUrls.map((u) => url(`${where} (${name}.dasUrl)`, u)).filter((u) => u !== undefined) }),
      ...(wsUrls === undefined ? {} : { wsUrls: wsUrlsOf(`${where} (${name}.wsUrl)`, wsUrls) }),
      ...(typeof entry.geyserUrl === "string"
        ? { geyserUrl: url(`${where} (${name}.geyserUrl)`, entry.geyserUrl) }
        : {}),
      ...(typeof entry.geyserToken === "string" ? { geyserToken: entry.geyserToken } : {}),
    });
  }
  if (doc.defaultChain !== undefined && typeof doc.defaultChain !== "string") {
    problems.push(`${where}: "defaultChain" must be a string`);
    return undefined;
  }
  return doc.defaultChain;
}

/** A comma-separated list, trimmed, without empty entries. */
function commaList(text: string): string[] {
  return text
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u !== "");
}

/** A chains-file field that is a string or a non-empty array of strings: as a list; undefined when absent; null when neither. */
function stringOrList(value: unknown): string[] | undefined | null {
  if (value === undefined) return undefined;
  if (typeof value === "string") return [value];
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string")) return value as string[];
  return null;
}

const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Reads `{"keys": [{"name": "alice", "key": "...", "rateLimit": "100/s" | null}]}`. */
function readStructuredKeys(text: string, where: string, problems: string[]): ApiKeyPolicy[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    problems.push(`${where} cannot be read as JSON: ${(e as Error).message}`);
    return [];
  }
  const keys = (doc as { keys?: unknown })?.keys;
  if (!Array.isArray(keys)) {
    problems.push(`${where} must be an object with a "keys" array of {"name", "key", "rateLimit"}`);
    return [];
  }
  const policies: ApiKeyPolicy[] = [];
  for (const [i, entry] of keys.entries()) {
    const { name, key, rateLimit } = (entry ?? {}) as { name?: unknown; key?: unknown; rateLimit?: unknown };
    // Never echo a key: name the entry by its position and name only.
    const which = `${where}: keys[${i}]`;
    if (typeof name !== "string" || !KEY_NAME.test(name)) {
      problems.push(`${which} needs a "name" of letters, digits, dots, dashes or underscores (at most 64)`);
      continue;
    }
    if (typeof key !== "string" || !/^[\x21-\x7e]+$/.test(key)) {
      problems.push(`${which} (${name}) needs a "key" of printable ASCII without spaces`);
      continue;
    }
    if (rateLimit === undefined || rateLimit === null) {
      policies.push({ name, key, ...(rateLimit === null ? { rateLimit: null } : {}) });
      continue;
    }
    const limit = typeof rateLimit === "string" ? parseRateLimit(rateLimit) : undefined;
    if (limit === undefined) {
      problems.push(`${which} (${name}) has a "rateLimit" that is not like 50/s, 3000/m or "50/s burst 100"`);
      continue;
    }
    policies.push({ name, key, rateLimit: limit });
  }
  return policies;
}
