/** Configuration: defaults, each source, and every problem reported at once. */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";

const dir = mkdtempSync(path.join(tmpdir(), "solgate-config-"));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("with nothing set, serves the embedded localnet with defaults", () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    // The embedded dev mode stays on loopback; a remote chain binds every interface, as documented.
    expect(c.host).toBe("127.0.0.1");
    expect(loadConfig({ HOST: "0.0.0.0" }).host).toBe("0.0.0.0");
    expect(loadConfig({ SOLGATE_RPC_URL: "https://rpc.example.com", SOLGATE_API_KEYS: "k" }).host).toBe("0.0.0.0");
    expect(c.chains).toEqual([]);
    expect(c.localnet).toEqual({ enabled: true, world: true, traffic: true, geyser: true, sendPaths: {} });
    expect(c.demo).toBe(true);
    expect(c.fees).toEqual({
      windowSlots: 150,
      maxAccounts: 100_000,
      recommendedFloor: 0n,
      oddsSlots: 4,
      oddsTarget: 0.9,
      // The embedded localnet's limits: solana-test-validator 4.4's at genesis.
      blockCuLimit: 100_000_000,
      accountCuLimit: 40_000_000,
    });
    const remote = { SOLGATE_RPC_URL: "https://rpc.example.com", SOLGATE_API_KEYS: "k" };
    expect(loadConfig(remote).fees).toMatchObject({ blockCuLimit: 60_000_000, accountCuLimit: 24_000_000 });
    expect(loadConfig({ LOCALNET_BLOCK_CU_LIMIT: "50000000" }).fees).toMatchObject({
      blockCuLimit: 50_000_000,
      accountCuLimit: 20_000_000,
    });
    expect(loadConfig({ ...remote, LOCALNET_BLOCK_CU_LIMIT: "50000000" }).fees.blockCuLimit).toBe(60_000_000);
    expect(loadConfig({ SOLGATE_FEES_BLOCK_CU_LIMIT: "48000000" }).fees.blockCuLimit).toBe(48_000_000);
    expect(c.transactions).toEqual({
      pollIntervalMs: 400,
      rebroadcastIntervalMs: 2_000,
      heartbeatIntervalMs: 15_000,
      confirmTimeoutMs: 90_000,
      maxTracked: 100_000,
      tipMaxLamports: 1_000_000n,
    });
    expect(loadConfig({ SOLGATE_TX_REBROADCAST_MS: "500" }).transactions.rebroadcastIntervalMs).toBe(500);
    expect(loadConfig({ SOLGATE_TIP_MAX_LAMPORTS: "25000" }).transactions.tipMaxLamports).toBe(25_000n);
    // Below Jito's 1,000-lamport minimum a clamped level would be a tip no block engine takes.
    expect(() => loadConfig({ SOLGATE_TIP_MAX_LAMPORTS: "999" })).toThrow(/SOLGATE_TIP_MAX_LAMPORTS/);
    expect(
      loadConfig({
        SOLGATE_FEES_RECOMMENDED_FLOOR: "1000",
        SOLGATE_FEES_RECOMMENDED_CEILING: "50000",
        SOLGATE_FEES_WINDOW_SLOTS: "300",
      }).fees,
    ).toEqual({
      windowSlots: 300,
      maxAccounts: 100_000,
      recommendedFloor: 1000n,
      recommendedCeiling: 50_000n,
      oddsSlots: 4,
      oddsTarget: 0.9,
      blockCuLimit: 100_000_000,
      accountCuLimit: 40_000_000,
    });
    expect(loadConfig({ NODE_ENV: "test" }).localnet).toEqual({
      enabled: true,
      world: false,
      traffic: false,
      geyser: true,
      sendPaths: {},
    });
    expect(loadConfig({ NODE_ENV: "test", LOCALNET_WORLD: "1", SOLGATE_DEMO: "0" })).toMatchObject({
      localnet: { world: true },
      demo: false,
    });
    expect(c.defaultChain).toBe("localnet");
    expect(c.apiKeys).toEqual([]);
    expect(c.metrics).toEqual({ port: 9464, host: "127.0.0.1" });
    expect(c.logLevel).toBe("info");
    expect(c.upstream).toMatchObject({ timeoutMs: 15_000, maxRetries: 3, maxConcurrency: 32 });
    expect(c.server.corsOrigins).toBe("*");
  });

  it("caps connections per address and in all, under the file-descriptor limit by default", () => {
    const c = loadConfig({});
    expect(c.server.maxConnectionsPerIp).toBe(1000);
    expect(c.server.maxStreamsPerConnection).toBe(1000);
    expect(c.server.maxConnections).toBeGreaterThan(0);
    expect(c.server.maxConnections).toBeLessThanOrEqual(10_000);
    const limits = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = Number(limits?.split(/\s{2,}/)[1]);
    if (Number.isSafeInteger(soft)) expect(c.server.maxConnections).toBeLessThanOrEqual(soft / 2);
    const set = loadConfig({
      SOLGATE_MAX_CONNECTIONS_PER_IP: "50",
      SOLGATE_MAX_CONNECTIONS: "200",
      SOLGATE_MAX_STREAMS_PER_CONNECTION: "100",
    });
    expect([set.server.maxConnectionsPerIp, set.server.maxConnections, set.server.maxStreamsPerConnection]).toEqual([
      50, 200, 100,
    ]);
    expect(problemsOf({ SOLGATE_MAX_CONNECTIONS_PER_IP: "0" })[0]).toMatch(/SOLGATE_MAX_CONNECTIONS_PER_IP/);
  });

  it("reads one chain with failover URLs, DAS and keys from the environment and a file", () => {
    const keys = file("keys", "# ops keys\nfile-key-1\n\n  file-key-2  \n");
    const c = loadConfig({
      PORT: "9000",
      SOLGATE_RPC_URL: "https://a.example/rpc?api-key=s3cret, https://b.example",
      SOLGATE_CHAIN: "devnet",
      SOLGATE_DAS_URL: "https://das.example",
      SOLGATE_API_KEYS: "k1,k2, k1",
      SOLGATE_API_KEYS_FILE: keys,
      METRICS_PORT: "0",
      LOCALNET_PORT: "8899",
      LOG_LEVEL: "debug",
    });
    expect(c.port).toBe(9000);
    expect(c.chains).toEqual([
      {
        name: "devnet",
        rpcUrls: ["https://a.example/rpc?api-key=s3cret", "https://b.example"],
        dasUrls: ["https://das.example"],
      },
    ]);
    expect(c.defaultChain).toBe("devnet");
    expect(c.localnet.enabled).toBe(false);
    expect(c.apiKeys).toEqual(["k1", "k2", "file-key-1", "file-key-2"]);
    expect(c.metrics.port).toBe(0);
    expect(c.localnet).toMatchObject({ enabled: false, port: 8899 });
    expect(c.demo).toBe(false);
    expect(c.logLevel).toBe("debug");
  });

  it("reads several chains from a chains file, with its default", () => {
    const chains = file(
      "chains.json",
      JSON.stringify({
        defaultChain: "devnet",
        chains: {
          mainnet: { rpcUrls: ["https://m.example"], wsUrl: "wss://m.example/ws" },
          devnet: { rpcUrls: ["https://d.example"], dasUrl: "https://dd.example", wsUrl: "off" },
        },
      }),
    );
    const c = loadConfig({ SOLGATE_CHAINS_FILE: chains, SOLGATE_API_KEYS: "k" });
    expect(c.chains.map((x) => x.name)).toEqual(["mainnet", "devnet"]);
    expect(c.defaultChain).toBe("devnet");
    expect(c.chains[1].dasUrls).toEqual(["https://dd.example"]);
    expect(c.chains.map((x) => x.wsUrls)).toEqual([["wss://m.example/ws"], null]);
  });

  it("takes failover lists for DAS and WebSocket URLs, in the environment and in the chains file", () => {
    const env = loadConfig({
      SOLGATE_RPC_URL: "https://a.example",
      SOLGATE_DAS_URL: "https://das1.example, https://das2.example",
      SOLGATE_WS_URL: "wss://ws1.example,wss://ws2.example",
      SOLGATE_API_KEYS: "k",
    });
    expect(env.chains[0]).toMatchObject({
      dasUrls: ["https://das1.example", "https://das2.example"],
      wsUrls: ["wss://ws1.example", "wss://ws2.example"],
    });
    const chains = file(
      "chains-lists.json",
      JSON.stringify({
        chains: {
          mainnet: {
            rpcUrls: ["https://m.example"],
            dasUrl: ["https://d1.example", "https://d2.example"],
            wsUrl: ["wss://w1.example", "wss://w2.example"],
          },
        },
      }),
    );
    expect(loadConfig({ SOLGATE_CHAINS_FILE: chains, SOLGATE_API_KEYS: "k" }).chains[0]).toMatchObject({
      dasUrls: ["https://d1.example", "https://d2.example"],
      wsUrls: ["wss://w1.example", "wss://w2.example"],
    });
    const bad = file(
      "chains-bad.json",
      JSON.stringify({ chains: { mainnet: { rpcUrls: ["https://m.example"], dasUrl: [], wsUrl: [1] } } }),
    );
    expect(problemsOf({ SOLGATE_CHAINS_FILE: bad, SOLGATE_API_KEYS: "k" })[0]).toMatch(
      /"dasUrl" that is neither a string nor a non-empty array/,
    );
    expect(
      problemsOf({
        SOLGATE_RPC_URL: "https://a.example",
        SOLGATE_WS_URL: "wss://ok.example,https://secret@b.example",
        SOLGATE_API_KEYS: "k",
      }),
    ).toEqual(['SOLGATE_WS_URL must be a ws(s) URL or "off"']);
  });

  it("reads the upstream budget and breaker settings, with defaults", () => {
    const base = { SOLGATE_RPC_URL: "https://a.example", SOLGATE_API_KEYS: "k" };
    expect(loadConfig(base).upstream).toMatchObject({
      budgetMs: 10_000,
      breaker: { consecutiveFailures: 5, failureRatio: 0.5, halfOpenAfterMs: 10_000 },
    });
    expect(
      loadConfig({
        ...base,
        SOLGATE_UPSTREAM_BUDGET_MS: "1500",
        SOLGATE_UPSTREAM_BREAKER_FAILURES: "3",
        SOLGATE_UPSTREAM_BREAKER_FAILURE_PERCENT: "80",
        SOLGATE_UPSTREAM_BREAKER_COOLDOWN_MS: "2000",
      }).upstream,
    ).toMatchObject({ budgetMs: 1500, breaker: { consecutiveFailures: 3, failureRatio: 0.8, halfOpenAfterMs: 2000 } });
    expect(problemsOf({ ...base, SOLGATE_UPSTREAM_BUDGET_MS: "10" })[0]).toMatch(/SOLGATE_UPSTREAM_BUDGET_MS/);
  });

  it("takes a WebSocket for signature notifications, or 'off', and refuses anything else without echoing it", () => {
    const base = { SOLGATE_RPC_URL: "https://a.example", SOLGATE_API_KEYS: "k" };
    expect(loadConfig(base).chains[0].wsUrls).toBeUndefined();
    expect(loadConfig({ ...base, SOLGATE_WS_URL: "wss://a.example/?key=1" }).chains[0].wsUrls).toEqual([
      "wss://a.example/?key=1",
    ]);
    expect(loadConfig({ ...base, SOLGATE_WS_URL: "off" }).chains[0].wsUrls).toBeNull();
    const problems = problemsOf({ ...base, SOLGATE_WS_URL: "https://secret-token@a.example" });
    expect(problems).toEqual(['SOLGATE_WS_URL must be a ws(s) URL or "off"']);
    expect(problemsOf({ SOLGATE_WS_URL: "wss://a.example" })[0]).toMatch(/without SOLGATE_RPC_URL/);
  });

  it("takes a Geyser endpoint and its x-token for the chain, from the environment or the chains file", () => {
    const base = { SOLGATE_RPC_URL: "https://a.example", SOLGATE_API_KEYS: "k" };
    expect(loadConfig(base).chains[0].geyserUrl).toBeUndefined();
    expect(
      loadConfig({ ...base, SOLGATE_GEYSER_URL: "https://grpc.example:443", SOLGATE_GEYSER_TOKEN: "t0k" }).chains[0],
    ).toMatchObject({ geyserUrl: "https://grpc.example:443", geyserToken: "t0k" });
    expect(problemsOf({ ...base, SOLGATE_GEYSER_URL: "not a url" })[0]).toMatch(/SOLGATE_GEYSER_URL/);
    expect(problemsOf({ SOLGATE_GEYSER_URL: "http://a.example" })[0]).toMatch(/without SOLGATE_RPC_URL/);
    expect(loadConfig({ NODE_ENV: "test" }).localnet.geyser).toBe(true);
    expect(loadConfig({ NODE_ENV: "test", SOLGATE_GEYSER_URL: "off" }).localnet.geyser).toBe(false);
    // The embedded localnet's Geyser port: a number, or off (no server, nothing to follow); unset, a free port.
    expect(loadConfig({ NODE_ENV: "test" }).localnet.geyserPort).toBeUndefined();
    expect(loadConfig({ NODE_ENV: "test", LOCALNET_GEYSER_PORT: "12000" }).localnet).toMatchObject({
      geyser: true,
      geyserPort: 12000,
    });
    expect(loadConfig({ NODE_ENV: "test", LOCALNET_GEYSER_PORT: "off" }).localnet).toMatchObject({
      geyser: false,
      geyserPort: "off",
    });
    expect(problemsOf({ LOCALNET_GEYSER_PORT: "70000" })[0]).toMatch(/LOCALNET_GEYSER_PORT/);
    const chains = file(
      "geyser-chains.json",
      JSON.stringify({
        chains: { mainnet: { rpcUrls: ["https://a.example"], geyserUrl: "http://g.example:10000", geyserToken: "x" } },
      }),
    );
    expect(loadConfig({ SOLGATE_CHAINS_FILE: chains, SOLGATE_API_KEYS: "k" }).chains[0]).toMatchObject({
      geyserUrl: "http://g.example:10000",
      geyserToken: "x",
    });
  });

  it("lists every problem at once, without echoing URLs that may hold secrets", () => {
    const problems = problemsOf({
      PORT: "80a",
      SOLGATE_RPC_URL: "ftp://secret-token@x",
      SOLGATE_CHAIN: "Main Net",
      SOLGATE_UPSTREAM_MAX_RETRIES: "99",
      LOG_LEVEL: "loud",
      METRICS_PORT: "70000",
      SOLGATE_DEFAULT_CHAIN: "nowhere",
      SOLGATE_CORS_ORIGINS: "example.com",
    });
    expect(problems).toHaveLength(9);
    expect(problems.join("\n")).toMatch(/PORT must be an integer/);
    expect(problems.join("\n")).toMatch(/SOLGATE_RPC_URL must hold http\(s\) URLs/);
    expect(problems.join("\n")).toMatch(/chain name "Main Net"/);
    expect(problems.join("\n")).toMatch(/SOLGATE_UPSTREAM_MAX_RETRIES/);
    expect(problems.join("\n")).toMatch(/LOG_LEVEL/);
    expect(problems.join("\n")).toMatch(/METRICS_PORT/);
    expect(problems.join("\n")).toMatch(/default chain "nowhere"/);
    expect(problems.join("\n")).toMatch(/SOLGATE_API_KEYS or SOLGATE_API_KEYS_FILE must give/);
    expect(problems.join("\n")).toMatch(/SOLGATE_CORS_ORIGINS/);
    expect(problems.join("\n")).not.toContain("secret-token");
  });

  it("rejects unreadable files, duplicate and reserved chain names", () => {
    const chains = file(
      "dup.json",
      JSON.stringify({
        chains: { mainnet: { rpcUrls: ["https://x.example"] }, localnet: { rpcUrls: ["http://127.0.0.1:1"] }, bad: {} },
      }),
    );
    const problems = problemsOf({
      SOLGATE_RPC_URL: "https://m.example",
      SOLGATE_CHAINS_FILE: chains,
      SOLGATE_API_KEYS_FILE: path.join(dir, "missing"),
    });
    expect(problems.join("\n")).toMatch(/SOLGATE_API_KEYS_FILE .* cannot be read/);
    expect(problems.join("\n")).toMatch(/chain "mainnet" is configured twice/);
    expect(problems.join("\n")).toMatch(/"localnet" is reserved/);
    expect(problems.join("\n")).toMatch(/chain "bad" needs "rpcUrls"/);
    expect(problemsOf({ SOLGATE_CHAINS_FILE: file("broken.json", "{") })[0]).toMatch(/cannot be read as JSON/);
    expect(problemsOf({ SOLGATE_DAS_URL: "https://das.example" })[0]).toMatch(/without SOLGATE_RPC_URL/);
  });

  it("refuses a landing-odds target or k out of range, naming the variable", () => {
    expect(loadConfig({ SOLGATE_FEES_ODDS_SLOTS: "8", SOLGATE_FEES_TARGET: "0.95" }).fees).toMatchObject({
      oddsSlots: 8,
      oddsTarget: 0.95,
    });
    for (const target of ["1", "1.0", "0.995", "0.4", "0", "-0.9", "90%", "ninety", "0.9.1"]) {
      expect(problemsOf({ SOLGATE_FEES_TARGET: target })).toEqual([
        `SOLGATE_FEES_TARGET must be a probability from 0.5 to 0.99, got ${JSON.stringify(target)}`,
      ]);
    }
    for (const k of ["0", "65", "-1", "2.5", "four"]) {
      expect(problemsOf({ SOLGATE_FEES_ODDS_SLOTS: k })).toEqual([
        `SOLGATE_FEES_ODDS_SLOTS must be an integer from 1 to 64, got ${JSON.stringify(k)}`,
      ]);
    }
    expect(problemsOf({ SOLGATE_FEES_ODDS_SLOTS: "40", SOLGATE_FEES_WINDOW_SLOTS: "60" })).toEqual([
      "SOLGATE_FEES_ODDS_SLOTS must be at most half of SOLGATE_FEES_WINDOW_SLOTS (60), got 40",
    ]);
    expect(() => loadConfig({ SOLGATE_FEES_TARGET: "1" })).toThrow(/SOLGATE_FEES_TARGET/);
  });

  it("reports problems in a thrown message a person can read", () => {
    expect(() => loadConfig({ PORT: "-1" })).toThrow(
      /invalid configuration:\n {2}- PORT must be an integer from 0 to 65535/,
    );
  });
});

describe("API keys with names and limits, and the shared store", () => {
  it("reads the structured keys file: names, own limits, null for unlimited, the default from SOLGATE_RATE_LIMIT", () => {
    const keys = file(
      "keys.json",
      JSON.stringify({
        keys: [
          { name: "alice", key: "alice-key-1", rateLimit: "10/s burst 20" },
          { name: "ops", key: "ops-key-1", rateLimit: null },
          { name: "bob", key: "bob-key-1" },
        ],
      }),
    );
    const c = loadConfig({
      SOLGATE_API_KEYS_FILE: keys,
      SOLGATE_RATE_LIMIT: "50/s",
      SOLGATE_REDIS_URL: "redis://127.0.0.1:6379/2",
    });
    expect(c.keys).toEqual([
      { name: "alice", key: "alice-key-1", rateLimit: { points: 10, durationMs: 1000, burst: 20 } },
      { name: "ops", key: "ops-key-1", rateLimit: null },
      { name: "bob", key: "bob-key-1" },
    ]);
    expect(c.apiKeys).toEqual(["alice-key-1", "ops-key-1", "bob-key-1"]);
    expect(c.rateLimit).toEqual({ points: 50, durationMs: 1000, burst: 0 });
    expect(c.redis).toEqual({ kind: "single", url: "redis://127.0.0.1:6379/2" });
  });

  it("reads a Redis Cluster's nodes and a Sentinel group, and refuses two topologies or a bad list without echoing it", () => {
    const base = { SOLGATE_API_KEYS: "k-123456", SOLGATE_RPC_URL: "http://127.0.0.1:8899" };
    expect(
      loadConfig({ ...base, SOLGATE_REDIS_CLUSTER_NODES: "redis://10.0.0.1:6379, redis://:pw@10.0.0.2:6380" }).redis,
    ).toEqual({ kind: "cluster", nodes: ["redis://10.0.0.1:6379", "redis://:pw@10.0.0.2:6380"] });
    expect(
      loadConfig({ ...base, SOLGATE_REDIS_SENTINELS: "s1:26379,[::1]:26380", SOLGATE_REDIS_SENTINEL_NAME: "mymaster" })
        .redis,
    ).toEqual({
      kind: "sentinel",
      sentinels: [
        { host: "s1", port: 26379 },
        { host: "::1", port: 26380 },
      ],
      name: "mymaster",
    });
    expect(() =>
      loadConfig({ ...base, SOLGATE_REDIS_URL: "redis://a:1", SOLGATE_REDIS_CLUSTER_NODES: "redis://b:2" }),
    ).toThrow(/set one of SOLGATE_REDIS_URL, SOLGATE_REDIS_CLUSTER_NODES/);
    expect(() => loadConfig({ ...base, SOLGATE_REDIS_SENTINELS: "s1:26379" })).toThrow(
      /SOLGATE_REDIS_SENTINELS needs SOLGATE_REDIS_SENTINEL_NAME/,
    );
    expect(() => loadConfig({ ...base, SOLGATE_REDIS_SENTINEL_NAME: "m" })).toThrow(
      /SOLGATE_REDIS_SENTINEL_NAME needs SOLGATE_REDIS_SENTINELS/,
    );
    const bad = () => loadConfig({ ...base, SOLGATE_REDIS_CLUSTER_NODES: "redis://:secret@a:1,not-a-url" });
    expect(bad).toThrow(/SOLGATE_REDIS_CLUSTER_NODES must be/);
    expect(bad).not.toThrow(/secret/);
    expect(() =>
      loadConfig({ ...base, SOLGATE_REDIS_SENTINELS: "s1:99999", SOLGATE_REDIS_SENTINEL_NAME: "m" }),
    ).toThrow(/SOLGATE_REDIS_SENTINELS must be a comma-separated list of host:port/);
  });

  it("names plain keys by a digest prefix, never by the key", () => {
    const c = loadConfig({ SOLGATE_API_KEYS: "plain-key-123" });
    expect(c.keys[0].name).toMatch(/^key-[0-9a-f]{8}$/);
    expect(c.keys[0].name).not.toContain("plain");
  });

  it("lists every problem of a bad keys file, a bad limit and a bad Redis URL without echoing secrets", () => {
    const keys = file(
      "bad-keys.json",
      JSON.stringify({
        keys: [
          { name: "a b", key: "k1-secret" },
          { name: "c", key: "k2-secret", rateLimit: "lots" },
          { name: "d", key: "k3-secret" },
          { name: "d", key: "k4-secret" },
        ],
      }),
    );
    const problems = problemsOf({
      SOLGATE_API_KEYS_FILE: keys,
      SOLGATE_RATE_LIMIT: "fast",
      SOLGATE_REDIS_URL: "http://user:pw-secret@h:1",
    });
    expect(problems).toHaveLength(5);
    expect(problems.join("\n")).not.toMatch(/secret/);
  });
});

describe("NODE_ENV=production", () => {
  it("never starts the embedded localnet: with no chain and no key it refuses, naming both", () => {
    const problems = problemsOf({ NODE_ENV: "production" });
    expect(problems.some((p) => p.includes("NODE_ENV=production needs a chain"))).toBe(true);
    expect(problems.some((p) => p.includes("SOLGATE_API_KEYS"))).toBe(true);
    expect(problems).toHaveLength(2);
  });

  it("starts with a chain and a key, warns about CORS * and binds what it is told", () => {
    const c = loadConfig({
      NODE_ENV: "production",
      SOLGATE_RPC_URL: "https://rpc.example.com",
      SOLGATE_API_KEYS: "k-1",
      HOST: "10.1.2.3",
    });
    expect(c.production).toBe(true);
    expect(c.localnet.enabled).toBe(false);
    expect(c.host).toBe("10.1.2.3");
    expect(c.warnings.join()).toContain("SOLGATE_CORS_ORIGINS");
    expect(
      loadConfig({
        NODE_ENV: "production",
        SOLGATE_RPC_URL: "https://rpc.example.com",
        SOLGATE_API_KEYS: "k-1",
        SOLGATE_CORS_ORIGINS: "https://app.example.com",
      }).warnings,
    ).toEqual([]);
  });
});

describe("tracing (standard OTEL_* variables)", () => {
  it("is off without an OTLP endpoint, and with OTEL_SDK_DISABLED=true", () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(
      loadConfig({ OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).tracing,
    ).toBeUndefined();
  });

  it("appends /v1/traces to the base endpoint; the traces endpoint is taken as it is and wins", () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }).tracing).toEqual({
      tracesUrl: "http://collector:4318/v1/traces",
      serviceName: "solgate",
      sampleRatio: 1,
    });
    const c = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example.com/otlp/traces",
      OTEL_SERVICE_NAME: "solgate-eu",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
    });
    expect(c.tracing).toEqual({
      tracesUrl: "https://traces.example.com/otlp/traces",
      serviceName: "solgate-eu",
      sampleRatio: 0.25,
    });
  });

  it("refuses a non-HTTP endpoint without echoing it, and a ratio outside 0..1", () => {
    const problems = problemsOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://user:secret@collector:4317",
      OTEL_TRACES_SAMPLER_ARG: "2",
    });
    expect(problems).toEqual([
      "OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL (OTLP over HTTP)",
      'OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "2"',
    ]);
    expect(problems.join("\n")).not.toContain("secret");
  });
});

describe("send paths", () => {
  it("reads SOLGATE_SEND_URLS, SOLGATE_JITO_URL and SOLGATE_JITO_AUTH for the SOLGATE_RPC_URL chain", () => {
    const c = loadConfig({
      SOLGATE_RPC_URL: "https://rpc.example.com",
      SOLGATE_API_KEYS: "k",
      SOLGATE_SEND_URLS: "https://staked.example.com, https://sender.example.com",
      SOLGATE_JITO_URL: "https://mainnet.block-engine.jito.wtf",
      SOLGATE_JITO_AUTH: "00000000-0000-4000-8000-000000000000",
    });
    expect(c.chains[0]?.sendUrls).toEqual(["https://staked.example.com", "https://sender.example.com"]);
    expect(c.chains[0]?.jitoUrl).toBe("https://mainnet.block-engine.jito.wtf");
    expect(c.chains[0]?.jitoAuth).toBe("00000000-0000-4000-8000-000000000000");
    expect(c.localnet.sendPaths).toEqual({});
  });

  it("gives them to the embedded localnet when no SOLGATE_RPC_URL is set", () => {
    const c = loadConfig({ SOLGATE_SEND_URLS: "http://127.0.0.1:9001" });
    expect(c.localnet.sendPaths.sendUrls).toEqual(["http://127.0.0.1:9001"]);
  });

  it("refuses a bad send URL, and SOLGATE_JITO_AUTH without SOLGATE_JITO_URL", () => {
    const problems = problemsOf({ SOLGATE_SEND_URLS: "not a url", SOLGATE_JITO_AUTH: "x" });
    expect(problems.some((p) => p.includes("SOLGATE_SEND_URLS"))).toBe(true);
    expect(problems.some((p) => p.includes("SOLGATE_JITO_AUTH is set without SOLGATE_JITO_URL"))).toBe(true);
  });

  it("reads sendUrls, jitoUrl and jitoAuth per chain from the chains file, and refuses wrong types", () => {
    const good = file(
      "send-paths.json",
      JSON.stringify({
        chains: {
          mainnet: {
            rpcUrls: ["https://rpc.example.com"],
            sendUrls: ["https://staked.example.com"],
            jitoUrl: "https://ny.block-engine.jito.wtf",
            jitoAuth: "uuid-1",
          },
        },
      }),
    );
    const c = loadConfig({ SOLGATE_CHAINS_FILE: good, SOLGATE_API_KEYS: "k" });
    expect(c.chains[0]).toMatchObject({
      sendUrls: ["https://staked.example.com"],
      jitoUrl: "https://ny.block-engine.jito.wtf",
      jitoAuth: "uuid-1",
    });
    const bad = file(
      "send-paths-bad.json",
      JSON.stringify({ chains: { mainnet: { rpcUrls: ["https://rpc.example.com"], jitoUrl: 5 } } }),
    );
    expect(problemsOf({ SOLGATE_CHAINS_FILE: bad, SOLGATE_API_KEYS: "k" }).some((p) => p.includes("jitoUrl"))).toBe(
      true,
    );
  });
});
