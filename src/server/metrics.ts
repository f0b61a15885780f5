/**
 * Prometheus metrics: RPCs by service, method and code with latency histograms, and the upstream
 * hooks the upstream module reports through. Served on their own port (127.0.0.1 by default) so
 * they never share the public listener or its API keys.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { UpstreamMetrics } from "../upstream/metrics.ts";
import type { SendPathMetrics } from "../upstream/send-paths.ts";

/** Latency buckets in seconds, from a cached read to a slow upstream scan. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The metrics Solgate records; one per process, passed in by the composition root. */
export interface Metrics {
  readonly registry: Registry;
  /** Records one finished RPC. `code` is the Connect code name in snake case (`ok`, `invalid_argument`, ...). */
  observeRpc(service: string, method: string, code: string, seconds: number, key?: string): void;
  /** The hooks one chain's upstream reports through (labels every sample with `chain`). */
  upstreamFor(chain: string): UpstreamMetrics;
  /** The send-path hooks of one chain (src/upstream/send-paths.ts). */
  sendPathsFor(chain: string): SendPathMetrics;
  /**
   * A server stream (a watch) opened on `protocol` (`grpc`, `grpc-lean`, `grpc-web`, `connect`, `rest-sse`);
   * call the function returned when it closes. Counted in plain numbers, read into the gauge at scrape time.
   */
  streamOpened(service: string, method: string, protocol: string): () => void;
  /** Gauges read from each chain at scrape time: tracked sends by state, fee-window age, upstream health. */
  observeChains(chains: readonly ChainGauges[]): void;
}

/** What the per-chain gauges read, each called at scrape time. */
export interface ChainGauges {
  readonly name: string;
  /** Tracked sends not yet final, by state. */
  trackedSends(): Readonly<Record<string, number>>;
  /** When the fee window last moved (ms since epoch); undefined before it ever has. */
  feeWindowMovedAt(): number | undefined;
  /**
   * What the chain's status engine takes from its Geyser stream, when it has one: Subscribe streams this replica
   * opened (in a fleet, only the lease holder's), statuses taken from the stream and statuses read from the node.
   */
  geyserStatuses?(): { subscriptions: number; streamStatuses: number; nodeStatuses: number };
  /** Whether the chain's upstream answers (the readiness check of `/readyz`). */
  upstreamHealthy(): boolean;
  /** The chain's Geyser stream, when it has one. */
  geyser?(): { healthy: boolean; lagSlots: number; reconnects: number; fallbacks: number; delivered: number };
  /** The chain's Geyser block stream (processed blocks for the fee market), when it has one. */
  geyserBlocks?(): { healthy: boolean; reconnects: number; fallbacks: number; blocks: number };
  /**
   * The chain's fee ladders since start: started, ended by final state, rungs submitted, and over the landed
   * ladders whose block was read, the fees paid and the cheapest fees that landed beside them (overpay).
   */
  ladders?(): {
    started: number;
    ended: Readonly<Record<string, number>>;
    rungsSubmitted: number;
    feePaidLamports: bigint;
    cheapestFeeLamports: bigint;
    overpayMeasured: number;
  };
}

/** Calls counted since the last scrape, for one label set of a counter. */
interface PendingCount<L extends string> {
  readonly labels: Record<L, string>;
  pending: number;
}

/** Adds the counts since the last scrape to `counter` (called from its collect, at scrape time). */
function flushCounts<L extends string>(counter: Counter<L>, counts: ReadonlyMap<string, PendingCount<L>>): void {
  for (const count of counts.values()) {
    if (count.pending === 0) continue;
    counter.inc(count.labels as never, count.pending);
    count.pending = 0;
  }
}

/** Adds an empty map under `key` and returns it. */
function setNew<K, V extends Map<unknown, unknown>>(map: Map<K, V>, key: K): V {
  const made = new Map() as V;
  map.set(key, made);
  return made;
}

/**
 * Registers Solgate's metrics (and Node's default process metrics) in `registry`.
 *
 * Long (~380 lines) because it declares every metric (name, help, labels) in one registry, beside the
 * scrape-time collectors that read them; there is little logic to split off.
 */
export function createMetrics(registry: Registry = new Registry()): Metrics {
  collectDefaultMetrics({ register: registry });
  // RPC counts are kept in plain numbers per label set and added to the counters at scrape time (their
  // collect), so a call costs an increment, not prom-client's label validation and hashing per counter.
  const rpcCounts = new Map<string, PendingCount<"service" | "method" | "code">>();
  // By key name, then code.
  const keyCounts = new Map<string, Map<string, PendingCount<"key" | "code">>>();
  new Counter({
    name: "solgate_rpc_requests_total",
    help: "RPCs handled, by service, method and final code.",
    labelNames: ["service", "method", "code"] as const,
    registers: [registry],
    collect() {
      flushCounts(this, rpcCounts);
    },
  });
  new Counter({
    name: "solgate_rpc_requests_by_key_total",
    help: "RPCs by the name of the API key they carried (never the key) and final code.",
    labelNames: ["key", "code"] as const,
    registers: [registry],
    collect() {
      for (const byCode of keyCounts.values()) flushCounts(this, byCode);
    },
  });
  const rpcSeconds = new Histogram({
    name: "solgate_rpc_duration_seconds",
    help: "RPC duration from first byte to last message, by service and method.",
    labelNames: ["service", "method"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const upstreamTotal = new Counter({
    name: "solgate_upstream_requests_total",
    help: "HTTP attempts to Solana nodes, by chain, JSON-RPC method, endpoint origin and outcome.",
    labelNames: ["chain", "method", "endpoint", "outcome"] as const,
    registers: [registry],
  });
  const upstreamStarted = new Counter({
    name: "solgate_upstream_attempts_started_total",
    help: "HTTP attempts started towards Solana nodes, by chain and JSON-RPC method.",
    labelNames: ["chain", "method"] as const,
    registers: [registry],
  });
  const upstreamSeconds = new Histogram({
    name: "solgate_upstream_duration_seconds",
    help: "Duration of HTTP attempts to Solana nodes, by chain and JSON-RPC method.",
    labelNames: ["chain", "method"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const breakerState = new Gauge({
    name: "solgate_upstream_breaker_state",
    help: "Circuit breaker of each upstream endpoint (origin): 0 closed, 1 half-open (a probe is let through), 2 open.",
    labelNames: ["chain", "endpoint"] as const,
    registers: [registry],
  });
  const sendPathTotal = new Counter({
    name: "solgate_send_path_attempts_total",
    help: "Sends and rebroadcasts to each send path, by chain, path, outcome (accepted, refused, ...) and refusal reason.",
    labelNames: ["chain", "path", "outcome", "reason"] as const,
    registers: [registry],
  });
  const sendPathSeconds = new Histogram({
    name: "solgate_send_path_duration_seconds",
    help: "Duration of each send path's sendTransaction, by chain and path.",
    labelNames: ["chain", "path"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const sendPathFirst = new Counter({
    name: "solgate_send_path_first_accepted_total",
    help: "Fan-outs in which each send path was the first to accept, by chain and path.",
    labelNames: ["chain", "path"] as const,
    registers: [registry],
  });
  const sendPathBreaker = new Gauge({
    name: "solgate_send_path_breaker_state",
    help: "Circuit breaker of each send path: 0 closed, 1 half-open, 2 open.",
    labelNames: ["chain", "path"] as const,
    registers: [registry],
  });
  // The labelled children by service, method and code, looked up once per label set rather than resolved
  // from label objects per call.
  const children = new Map<
    string,
    Map<
      string,
      Map<string, { total: PendingCount<"service" | "method" | "code">; seconds: ReturnType<typeof rpcSeconds.labels> }>
    >
  >();
  const openStreams = new Map<
    string,
    { labels: { service: string; method: string; protocol: string }; count: number }
  >();
  new Gauge({
    name: "solgate_open_streams",
    help: "Server streams open now (WatchStatus and WatchFees watches, health watches), by service, method and protocol (grpc-lean: the lean gRPC path; rest-sse: the SSE watch).",
    labelNames: ["service", "method", "protocol"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, count } of openStreams.values()) this.set(labels, count);
    },
  });
  let chains: readonly ChainGauges[] = [];
  new Gauge({
    name: "solgate_tracked_sends",
    help: "Sends being tracked (not yet final), by chain and state, as of the status engine's last full tick.",
    labelNames: ["chain", "state"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const chain of chains) {
        const byState = chain.trackedSends();
        // Both live states always appear, so a dashboard sees 0 rather than no series.
        for (const state of new Set(["submitted", "confirmed", ...Object.keys(byState)]))
          this.set({ chain: chain.name, state }, byState[state] ?? 0);
      }
    },
  });
  new Gauge({
    name: "solgate_fee_window_age_seconds",
    help: "Seconds since the chain's fee window last moved (a block or a skipped slot entered it); absent before it ever has.",
    labelNames: ["chain"] as const,
    registers: [registry],
    collect() {
      this.reset();
      const now = Date.now();
      for (const chain of chains) {
        const movedAt = chain.feeWindowMovedAt();
        if (movedAt !== undefined) this.set({ chain: chain.name }, Math.max(0, now - movedAt) / 1000);
      }
    },
  });
  new Gauge({
    name: "solgate_upstream_healthy",
    help: "1 while the chain's upstream answers (the /readyz check of that chain), else 0.",
    labelNames: ["chain"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const chain of chains) this.set({ chain: chain.name }, chain.upstreamHealthy() ? 1 : 0);
    },
  });
  // Fee ladders: cumulative counts kept by each chain's ladders core, read at scrape time.
  const ladderCounter = (
    name: string,
    help: string,
    read: (l: ReturnType<NonNullable<ChainGauges["ladders"]>>) => number | bigint,
  ) =>
    new Counter({
      name,
      help,
      labelNames: ["chain"] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const chain of chains) {
          const ladders = chain.ladders?.();
          if (ladders !== undefined) this.inc({ chain: chain.name }, Number(read(ladders)));
        }
      },
    });
  ladderCounter("solgate_ladders_started_total", "Fee ladders taken (SendLadder), by chain.", (l) => l.started);
  ladderCounter("solgate_ladder_rungs_submitted_total", "Ladder rungs submitted, by chain.", (l) => l.rungsSubmitted);
  ladderCounter(
    "solgate_ladder_fee_paid_lamports_total",
    "Fees paid by landed ladders whose block was read, by chain (compare with solgate_ladder_cheapest_fee_lamports_total).",
    (l) => l.feePaidLamports,
  );
  ladderCounter(
    "solgate_ladder_cheapest_fee_lamports_total",
    "For the same landed ladders: the fee each would have paid at the cheapest price that landed in its block on its accounts.",
    (l) => l.cheapestFeeLamports,
  );
  ladderCounter(
    "solgate_ladder_overpay_measured_total",
    "Landed ladders whose overpay was measured, by chain.",
    (l) => l.overpayMeasured,
  );
  new Counter({
    name: "solgate_ladders_ended_total",
    help: "Fee ladders ended, by chain and final state (a landed ladder counts once, when finalized or failed).",
    labelNames: ["chain", "state"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const chain of chains) {
        for (const [state, count] of Object.entries(chain.ladders?.().ended ?? {}))
          this.inc({ chain: chain.name, state }, count);
      }
    },
  });
  const statusGauge = (
    name: string,
    help: string,
    read: (g: ReturnType<NonNullable<ChainGauges["geyserStatuses"]>>) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ["chain"] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const chain of chains) {
          const statuses = chain.geyserStatuses?.();
          if (statuses !== undefined) this.set({ chain: chain.name }, read(statuses));
        }
      },
    });
  statusGauge(
    "solgate_geyser_subscriptions",
    "Geyser Subscribe streams this replica opened since start (in a fleet, only the lease holder subscribes).",
    (g) => g.subscriptions,
  );
  statusGauge(
    "solgate_geyser_statuses",
    "Transaction statuses the status engine took from the Geyser stream (no upstream call), since start.",
    (g) => g.streamStatuses,
  );
  statusGauge(
    "solgate_geyser_node_statuses",
    "Transaction statuses the status engine read from the node (getSignatureStatuses) since start: with the stream up, only what it cannot vouch for.",
    (g) => g.nodeStatuses,
  );
  const geyserGauge = (
    name: string,
    help: string,
    read: (g: ReturnType<NonNullable<ChainGauges["geyser"]>>) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ["chain"] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const chain of chains) {
          const geyser = chain.geyser?.();
          if (geyser !== undefined) this.set({ chain: chain.name }, read(geyser));
        }
      },
    });
  geyserGauge(
    "solgate_geyser_up",
    "1 while the chain's Geyser stream is usable (connected, heard within 2 s, not lagging), else 0: polling alone.",
    (g) => (g.healthy ? 1 : 0),
  );
  geyserGauge(
    "solgate_geyser_lag_slots",
    "Slots the Geyser stream's newest block is behind the JSON-RPC's confirmed slot.",
    (g) => g.lagSlots,
  );
  geyserGauge(
    "solgate_geyser_reconnects",
    "Geyser streams reopened (with from_slot) since start.",
    (g) => g.reconnects,
  );
  geyserGauge(
    "solgate_geyser_fallbacks",
    "Times the Geyser stream went down (ended, silent or lagging) and polling carried on alone, since start.",
    (g) => g.fallbacks,
  );
  geyserGauge(
    "solgate_geyser_delivered",
    "Confirmations of followed sends that the Geyser stream delivered, since start.",
    (g) => g.delivered,
  );
  const blocksGauge = (
    name: string,
    help: string,
    read: (g: ReturnType<NonNullable<ChainGauges["geyserBlocks"]>>) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ["chain"] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const chain of chains) {
          const blocks = chain.geyserBlocks?.();
          if (blocks !== undefined) this.set({ chain: chain.name }, read(blocks));
        }
      },
    });
  blocksGauge(
    "solgate_geyser_blocks_up",
    "1 while the Geyser block stream feeds the fee market (connected, a block within 2 s), else 0: getBlock polling.",
    (g) => (g.healthy ? 1 : 0),
  );
  blocksGauge(
    "solgate_geyser_blocks_reconnects",
    "Geyser block streams reopened (with from_slot) since start.",
    (g) => g.reconnects,
  );
  blocksGauge(
    "solgate_geyser_blocks_fallbacks",
    "Times the Geyser block stream went down and the fee market polled getBlock, since start.",
    (g) => g.fallbacks,
  );
  blocksGauge(
    "solgate_geyser_blocks_received",
    "Blocks the Geyser block stream delivered to the fee market, since start.",
    (g) => g.blocks,
  );
  return {
    registry,
    streamOpened(service, method, protocol) {
      const key = `${service}/${method}/${protocol}`;
      let entry = openStreams.get(key);
      if (entry === undefined) {
        entry = { labels: { service, method, protocol }, count: 0 };
        openStreams.set(key, entry);
      }
      const counted = entry;
      counted.count++;
      let closed = false;
      return () => {
        if (closed) return;
        closed = true;
        counted.count--;
      };
    },
    observeChains(list) {
      chains = list;
    },
    observeRpc(service, method, code, seconds, key) {
      // Looked up by each label in turn: no key string is built per call.
      const byMethod = children.get(service) ?? setNew(children, service);
      const byCode = byMethod.get(method) ?? setNew(byMethod, method);
      let child = byCode.get(code);
      if (child === undefined) {
        const total = { labels: { service, method, code }, pending: 0 };
        rpcCounts.set(`${service}/${method}/${code}`, total);
        child = { total, seconds: rpcSeconds.labels({ service, method }) };
        byCode.set(code, child);
      }
      child.total.pending++;
      child.seconds.observe(seconds);
      if (key !== undefined) {
        const byKeyCode = keyCounts.get(key) ?? setNew(keyCounts, key);
        let keyCount = byKeyCode.get(code);
        if (keyCount === undefined) byKeyCode.set(code, (keyCount = { labels: { key, code }, pending: 0 }));
        keyCount.pending++;
      }
    },
    upstreamFor(chain) {
      return {
        onCall(method) {
          upstreamStarted.inc({ chain, method });
        },
        onResult(method, outcome, seconds, url) {
          upstreamTotal.inc({ chain, method, endpoint: url, outcome });
          upstreamSeconds.observe({ chain, method }, seconds);
        },
        onBreakerState(url, state) {
          breakerState.set({ chain, endpoint: url }, state === "closed" ? 0 : state === "half_open" ? 1 : 2);
        },
      };
    },
    sendPathsFor(chain) {
      return {
        onResult(path, outcome, seconds, reason) {
          sendPathTotal.inc({ chain, path, outcome, reason: reason ?? "" });
          sendPathSeconds.observe({ chain, path }, seconds);
        },
        onFirstAccepted(path) {
          sendPathFirst.inc({ chain, path });
        },
        onBreakerState(path, state) {
          sendPathBreaker.set({ chain, path }, state === "closed" ? 0 : state === "half_open" ? 1 : 2);
        },
      };
    },
  };
}

/** A running metrics endpoint. */
export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Serves `registry` at `GET /metrics` on host:port (port 0 = ephemeral). */
export async function startMetricsServer(options: {
  registry: Registry;
  port: number;
  host: string;
}): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    options.registry.metrics().then(
      (body) => res.writeHead(200, { "content-type": options.registry.contentType }).end(body),
      (e: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(String(e)),
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
