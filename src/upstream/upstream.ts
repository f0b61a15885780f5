/**
 * The upstream: the only code in Solgate that talks to Solana. It hands the cores a kit
 * `Rpc<SolanaRpcApi>` (u64s stay bigint) and a raw DAS caller, both running over one resilient
 * transport (timeouts within a per-call budget, retries with backoff, failover, a circuit breaker per
 * URL, a concurrency cap, metrics), and a feed of
 * signature notifications from the node's PubSub WebSocket.
 */
import { createSolanaRpcFromTransport } from "@solana/kit";
import { errorFromJsonRpcError } from "./rpc-errors.ts";
import type { Rpc, RpcTransport, SolanaRpcApi } from "@solana/kit";
import { createKeyScanTransport, createPlainJsonTransport, KEY_SCAN_LIMIT } from "./key-scan.ts";
import { createSemaphore } from "./semaphore.ts";
import { createResilientTransport } from "./resilient-transport.ts";
import type { Endpoint } from "./resilient-transport.ts";
import { noopUpstreamMetrics, redactUrl } from "./metrics.ts";
import { createSignatureFeed, webSocketUrlFor } from "./signature-feed.ts";
import { createGeyserBlocks, type GeyserBlocks } from "./geyser-blocks.ts";
import { createFallbackFeed, createGeyserSource, type GeyserSource } from "./geyser-source.ts";
import type { GeyserSubscriptionOptions, StreamLease } from "./geyser-subscription.ts";
import type { SignatureFeed } from "./signature-feed.ts";
import type { UpstreamMetrics } from "./metrics.ts";
import { createEndpointBreaker } from "./endpoint-breaker.ts";
import type { BreakerState, EndpointBreaker, EndpointBreakerOptions } from "./endpoint-breaker.ts";
import type { UpstreamCallTracer } from "./call-tracer.ts";
import { createByteBudget, createCappedJsonRpcTransport } from "./capped-http.ts";
import { KEY_SCAN_SCHEMAS, RESULT_SCHEMAS, SLICE_SCAN_SCHEMAS } from "./response-schemas.ts";
import { createSlotWatch } from "./slot-watch.ts";
import type { SlotWatch } from "./slot-watch.ts";
import type { RefusedAnswer } from "./resilient-transport.ts";

/** Default of {@link UpstreamOptions.maxResponseBytes}: 16 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** Default of {@link UpstreamOptions.maxScanResponseBytes} (see docs/configuration.md for how it was sized). */
export const DEFAULT_MAX_SCAN_RESPONSE_BYTES = 64 * 1024 * 1024;

/** Options of {@link createUpstream}. */
export interface UpstreamOptions {
  /** The chain's name (for errors and logs). */
  chain: string;
  /** JSON-RPC URLs, in order of preference; calls fail over to the next one. */
  rpcUrls: string[];
  /** The DAS endpoint(s) (getAsset, getAssetsByGroup), in order of preference; defaults to the RPC URLs. */
  dasUrl?: string | readonly string[];
  /**
   * The PubSub WebSocket(s) (ws: or wss:) for signature notifications, in order of preference (the feed
   * moves to the next after a failed connection); by default the first RPC URL's (see `webSocketUrlFor`);
   * null for none (polling alone).
   */
  wsUrl?: string | readonly string[] | null;
  /** Receives signature-feed failures (the feed then stands down and polling carries on). */
  onFeedError?: (error: unknown) => void;
  /** A Yellowstone Geyser endpoint (http: or https:): confirmations and new blocks pushed (geyser-source.ts). */
  geyserUrl?: string;
  /** Its `x-token`. */
  geyserToken?: string;
  /** In a fleet: only the holder of this lease (the transaction store's) subscribes to Geyser. */
  geyserLease?: { hold(): Promise<boolean> };
  /** In a fleet: only the holder of this lease (the fee market's) subscribes to Geyser's blocks. */
  geyserBlocksLease?: { hold(): Promise<boolean> };
  /** Told once per change of the Geyser stream's health, for a log line and a metric. */
  onGeyserHealth?: (healthy: boolean, reason: string) => void;
  /** Told once per change of the Geyser block stream's health (processed blocks for the fee market). */
  onGeyserBlocksHealth?: (healthy: boolean, reason: string) => void;
  /** Per attempt (default 15 s: a filtered getProgramAccounts on a busy node takes seconds). */
  timeoutMs?: number;
  /** Attempts after the first, across all URLs (default 3). */
  maxRetries?: number;
  /** The whole of one call, retries, backoff and failover included (default 10 s); attempts shrink to fit. */
  budgetMs?: number;
  /** Circuit breaker per URL (see endpoint-breaker.ts): consecutive failures, failure ratio, cool-down. */
  breaker?: Omit<EndpointBreakerOptions, "onStateChange">;
  /** Upstream calls in flight at once, JSON-RPC and DAS together (default 32). */
  maxConcurrency?: number;
  metrics?: UpstreamMetrics;
  /** Traces each upstream call; absent when tracing is off. */
  tracer?: UpstreamCallTracer;
  /** Backoff tuning, mostly for tests: first step (default 100 ms) and cap (default 2 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A Retry-After longer than this fails the call at once rather than waiting (default 5 s). */
  maxRetryAfterMs?: number;
  /** The largest answer read, in bytes (default 16 MiB); past it the connection is dropped and the call fails. */
  maxResponseBytes?: number;
  /** The same for getProgramAccounts scans (default {@link DEFAULT_MAX_SCAN_RESPONSE_BYTES}). */
  maxScanResponseBytes?: number;
  /**
   * What the answers being read at once may hold between them, across every call of the chain (default:
   * the scan limit). Past it a read fails as one past its own limit: 32 calls in flight cannot each hold
   * an answer just under the limit.
   */
  maxBufferedBytes?: number;
  /** The largest PubSub message taken (default 1 MiB): a larger one drops the WebSocket at once. */
  maxWsMessageBytes?: number;
  /** Told of every answer refused at the boundary (wrong shape, lagging node, too large): for a warning log. */
  onRefused?: (refused: RefusedAnswer) => void;
}

/** Options of one DAS call. */
export interface DasCallOptions {
  abortSignal?: AbortSignal;
}

/** Digital Asset Standard calls. Typed methods (getAsset, getAssetsByGroup) will sit on top of `call`. */
export interface DasClient {
  /**
   * Calls a DAS method and returns its `result`. A JSON-RPC error from the provider is thrown as a kit
   * SolanaError (inspect it with `rpcErrorOf`); transport failures as SolgateError, as for `rpc`.
   */
  call<T = unknown>(method: string, params: unknown, options?: DasCallOptions): Promise<T>;
}

/** A getProgramAccounts filter (kit's shapes; offsets and sizes may be bigint or number). */
export type ProgramAccountsFilter =
  | { dataSize: bigint | number }
  | { memcmp: { offset: bigint | number; bytes: string; encoding: "base58" | "base64" } };

/** Options of {@link Upstream.getProgramAccountKeys}. */
export interface ProgramAccountKeysOptions {
  filters?: readonly ProgramAccountsFilter[];
  commitment?: "processed" | "confirmed" | "finalized";
  /** Stop reading after this many keys; the result then holds limit + 1 (enough to tell "too many"). */
  limit?: number;
  abortSignal?: AbortSignal;
}

/** What {@link Upstream.getProgramAccountSlices} found, in the node's order. */
export interface ProgramAccountSlices {
  /** The accounts' addresses. */
  readonly keys: string[];
  /** The slice length asked for: account i's slice is at `i * width` in `data`. */
  readonly width: number;
  /** The slices, one after another (zeros past the end of a shorter one). */
  readonly data: Buffer;
  /** How many bytes of account i the node sent: `width`, or less where its data is shorter. */
  readonly lengths: Uint32Array;
}

/** A chain's connection to Solana. */
export interface Upstream {
  readonly chain: string;
  /** Kit RPC: `await upstream.rpc.getSlot().send()`. */
  readonly rpc: Rpc<SolanaRpcApi>;
  /** The transport under `rpc` (retries, failover, breakers), for an rpc that adds to it (send-paths.ts). */
  readonly transport: RpcTransport;
  readonly das: DasClient;
  /** Signature notifications from the node's WebSocket; undefined when there is none. */
  readonly signatures?: SignatureFeed;
  /** The Geyser stream, when one is configured (its follow is already part of `signatures`). */
  readonly geyser?: GeyserSource;
  /** The Geyser stream of processed blocks with their transactions (the fee market's), with `geyser`. */
  readonly geyserBlocks?: GeyserBlocks;
  /** Same as `das.call`. */
  callDas<T = unknown>(method: string, params: unknown, options?: DasCallOptions): Promise<T>;
  /**
   * The addresses of the accounts `programId` owns that pass `filters`, in the node's order:
   * getProgramAccounts with an empty data slice, streamed (see key-scan.ts), so its memory is the keys.
   * Errors as for `rpc`.
   */
  getProgramAccountKeys(programId: string, options?: ProgramAccountKeysOptions): Promise<string[]>;
  /**
   * The accounts `programId` owns that pass `filters`, each with `dataSlice` of its data: getProgramAccounts
   * read with plain JSON.parse (see key-scan.ts), for scans that need a few bytes of many accounts. The
   * slices come decoded into one buffer (no object per account). Errors as for `rpc`.
   */
  getProgramAccountSlices(
    programId: string,
    options: {
      dataSlice: { offset: number; length: number };
      filters?: readonly ProgramAccountsFilter[];
      commitment?: "processed" | "confirmed" | "finalized";
      abortSignal?: AbortSignal;
    },
  ): Promise<ProgramAccountSlices>;
  /** Redacted labels (origins) of the RPC endpoints, in order. */
  readonly endpoints: readonly string[];
  /** The breaker state of each RPC endpoint, in order. */
  breakers(): { endpoint: string; state: BreakerState }[];
  /**
   * Whether any RPC endpoint's breaker is closed: false while every one is open (or probing), i.e. every
   * node has been failing. For readiness.
   */
  reachable(): boolean;
  /** Calls holding a slot of the cap, and calls waiting for one. */
  load(): { active: number; waiting: number };
  /** Aborts calls in flight (they fail with UPSTREAM_UNAVAILABLE) and refuses new ones. */
  close(): Promise<void>;
}

/**
 * Creates the upstream of one chain.
 * Transport failures that survive the retries become SolgateError UPSTREAM_UNAVAILABLE (or RATE_LIMITED
 * after HTTP 429), with `retryAfterMs`; JSON-RPC errors from the node stay kit SolanaErrors.
 *
 * Long (~190 lines) because it is wiring: one chain's transports (JSON-RPC, DAS, the two scans, PubSub, the two
 * Geyser streams) over the breakers and slot watches they share per URL; each part is built in its own file.
 */
export function createUpstream(options: UpstreamOptions): Upstream {
  if (options.rpcUrls.length === 0) throw new RangeError(`chain ${options.chain}: at least one RPC URL is required`);
  const dasUrls = listOf(options.dasUrl) ?? options.rpcUrls;
  if (dasUrls.length === 0) throw new RangeError(`chain ${options.chain}: an empty list of DAS URLs`);
  for (const url of [...options.rpcUrls, ...dasUrls]) assertHttpUrl(url, options.chain);
  const wsUrls = options.wsUrl === null ? null : (listOf(options.wsUrl) ?? [webSocketUrlFor(options.rpcUrls[0])]);
  if (wsUrls !== null && wsUrls.length === 0)
    throw new RangeError(`chain ${options.chain}: an empty list of WebSocket URLs`);
  for (const url of wsUrls ?? []) assertUrl(url, options.chain, ["ws:", "wss:"]);
  const metrics = options.metrics ?? noopUpstreamMetrics;
  // One breaker per URL, shared by every transport that reaches it (JSON-RPC, DAS, scans).
  const breakers = new Map<string, EndpointBreaker>();
  const closer = new AbortController();
  const probeTimeoutMs = Math.min(options.timeoutMs ?? 15_000, 5_000);
  const breakerFor = (url: string): EndpointBreaker => {
    let breaker = breakers.get(url);
    if (breaker === undefined) {
      const label = redactUrl(url);
      breaker = createEndpointBreaker({
        ...options.breaker,
        onStateChange: (state) => metrics.onBreakerState?.(label, state),
        probe: (signal) => answersGetSlot(url, AbortSignal.any([signal, AbortSignal.timeout(probeTimeoutMs)])),
        signal: closer.signal,
      });
      breakers.set(url, breaker);
      metrics.onBreakerState?.(label, "closed");
    }
    return breaker;
  };
  // One slot watch per URL too: a node's slots are its own, whichever transport read them.
  const watches = new Map<string, SlotWatch>();
  const watchFor = (url: string): SlotWatch => {
    let watch = watches.get(url);
    if (watch === undefined) {
      watch = createSlotWatch();
      watches.set(url, watch);
    }
    return watch;
  };
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const maxScanResponseBytes = options.maxScanResponseBytes ?? DEFAULT_MAX_SCAN_RESPONSE_BYTES;
  const budget = createByteBudget(options.maxBufferedBytes ?? maxScanResponseBytes);
  const semaphore = createSemaphore(options.maxConcurrency ?? 32);
  const shared = {
    chain: options.chain,
    timeoutMs: options.timeoutMs ?? 15_000,
    maxRetries: options.maxRetries ?? 3,
    budgetMs: options.budgetMs ?? 10_000,
    semaphore,
    metrics,
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    baseDelayMs: options.baseDelayMs,
    maxDelayMs: options.maxDelayMs,
    maxRetryAfterMs: options.maxRetryAfterMs,
    closeSignal: closer.signal,
    ...(options.onRefused === undefined ? {} : { onRefused: options.onRefused }),
  };

  const rpcEndpoints: Endpoint[] = options.rpcUrls.map((url) => ({
    label: redactUrl(url),
    // Every integer parsed as bigint, as kit's own transport does (rentEpoch is u64::MAX on most accounts),
    // compressed answers, identical concurrent calls coalesced; and the answer's size capped while it is read.
    transport: createCappedJsonRpcTransport({ url, maxResponseBytes, bigints: true, budget }),
    breaker: breakerFor(url),
    watch: watchFor(url),
  }));
  const transport = createResilientTransport({ ...shared, schemas: RESULT_SCHEMAS, endpoints: rpcEndpoints });
  const rpc = createSolanaRpcFromTransport(transport);

  const dasTransport = createResilientTransport({
    ...shared,
    schemas: RESULT_SCHEMAS,
    endpoints: dasUrls.map((url) => ({
      label: redactUrl(url),
      transport: createCappedJsonRpcTransport({ url, maxResponseBytes, bigints: false, budget }),
      breaker: breakerFor(url),
    })),
  });
  const das = createDasClient(dasTransport);
  const keyScan = createResilientTransport({
    ...shared,
    retryTimeouts: false,
    schemas: KEY_SCAN_SCHEMAS,
    endpoints: options.rpcUrls.map((url) => ({
      label: redactUrl(url),
      transport: createKeyScanTransport(url, maxScanResponseBytes),
      breaker: breakerFor(url),
    })),
  });
  const sliceScan = createResilientTransport({
    ...shared,
    retryTimeouts: false,
    schemas: SLICE_SCAN_SCHEMAS,
    endpoints: options.rpcUrls.map((url) => ({
      label: redactUrl(url),
      transport: createPlainJsonTransport(url, maxScanResponseBytes, budget),
      breaker: breakerFor(url),
    })),
  });
  let nextKeyScanId = 1;
  const pubsub =
    wsUrls === null
      ? undefined
      : createSignatureFeed({
          url: wsUrls,
          onError: options.onFeedError,
          ...(options.maxWsMessageBytes === undefined ? {} : { maxMessageBytes: options.maxWsMessageBytes }),
        });

  if (options.geyserUrl !== undefined) assertUrl(options.geyserUrl, options.chain, ["http:", "https:"]);
  const { geyserUrl } = options;
  // Both Geyser streams share the endpoint and token; each has its own lease and health line.
  const geyserOptions = (lease: StreamLease | undefined, onHealth: GeyserSubscriptionOptions["onHealth"]) => ({
    url: geyserUrl!,
    ...(options.geyserToken === undefined ? {} : { token: options.geyserToken }),
    ...(lease === undefined ? {} : { lease }),
    ...(onHealth === undefined ? {} : { onHealth }),
  });
  const geyser =
    geyserUrl === undefined
      ? undefined
      : createGeyserSource(geyserOptions(options.geyserLease, options.onGeyserHealth));
  const signatures = geyser === undefined ? pubsub : createFallbackFeed(geyser, pubsub);
  const geyserBlocks =
    geyserUrl === undefined
      ? undefined
      : createGeyserBlocks(geyserOptions(options.geyserBlocksLease, options.onGeyserBlocksHealth));

  return {
    chain: options.chain,
    rpc,
    transport,
    das,
    ...(signatures === undefined ? {} : { signatures }),
    ...(geyser === undefined ? {} : { geyser }),
    ...(geyserBlocks === undefined ? {} : { geyserBlocks }),
    callDas: das.call,
    async getProgramAccountKeys(programId, scan = {}) {
      const config = {
        encoding: "base64",
        dataSlice: { offset: 0, length: 0 },
        commitment: scan.commitment ?? "confirmed",
        filters: (scan.filters ?? []).map(jsonSafeFilter),
      };
      const payload = {
        jsonrpc: "2.0",
        id: nextKeyScanId++,
        method: "getProgramAccounts",
        params: [programId, config],
        ...(scan.limit === undefined ? {} : { [KEY_SCAN_LIMIT]: scan.limit }),
      };
      const response = (await keyScan({ payload, signal: scan.abortSignal })) as { result?: string[]; error?: unknown };
      if (response.error !== undefined) throw errorFromJsonRpcError(response.error);
      return response.result ?? [];
    },
    async getProgramAccountSlices(programId, scan) {
      const config = {
        encoding: "base64",
        dataSlice: scan.dataSlice,
        commitment: scan.commitment ?? "confirmed",
        filters: (scan.filters ?? []).map(jsonSafeFilter),
      };
      const payload = {
        jsonrpc: "2.0",
        id: nextKeyScanId++,
        method: "getProgramAccounts",
        params: [programId, config],
      };
      const response = (await sliceScan({ payload, signal: scan.abortSignal })) as {
        result?: { pubkey: string; account: { data: [string, string] } }[];
        error?: unknown;
      };
      if (response.error !== undefined) throw errorFromJsonRpcError(response.error);
      const result = response.result ?? [];
      const width = scan.dataSlice.length;
      const keys = new Array<string>(result.length);
      const data = Buffer.alloc(result.length * width);
      const lengths = new Uint32Array(result.length);
      for (let i = 0; i < result.length; i++) {
        const { pubkey, account } = result[i];
        keys[i] = pubkey;
        lengths[i] = data.write(account.data[0], i * width, width, "base64");
      }
      return { keys, width, data, lengths };
    },
    endpoints: rpcEndpoints.map((e) => e.label),
    breakers: () => options.rpcUrls.map((url) => ({ endpoint: redactUrl(url), state: breakerFor(url).state() })),
    reachable: () => options.rpcUrls.some((url) => breakerFor(url).state() === "closed"),
    load: () => ({ active: semaphore.active, waiting: semaphore.waiting }),
    async close() {
      closer.abort(new Error("upstream closed"));
      signatures?.close();
      geyserBlocks?.close();
    },
  };
}

/** Whether the node at `url` answers a getSlot: a breaker's own probe (endpoint-breaker.ts). */
async function answersGetSlot(url: string, signal: AbortSignal): Promise<boolean> {
  const transport = createCappedJsonRpcTransport({ url, maxResponseBytes: 4096, bigints: true });
  const answer = await transport<{ result?: unknown }>({
    payload: { jsonrpc: "2.0", id: 1, method: "getSlot", params: [] },
    signal,
  });
  return answer?.result !== undefined;
}

function createDasClient(transport: RpcTransport): DasClient {
  let nextId = 1;
  return {
    async call<T>(method: string, params: unknown, options: DasCallOptions = {}): Promise<T> {
      const payload = { jsonrpc: "2.0", id: nextId++, method, params };
      const response = (await transport({ payload, signal: options.abortSignal })) as {
        result?: T;
        error?: unknown;
      };
      if (response.error !== undefined) throw errorFromJsonRpcError(response.error);
      return response.result as T;
    },
  };
}

/** A URL or a list of them as a list; undefined stays undefined. */
function listOf(value: string | readonly string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return typeof value === "string" ? [value] : [...value];
}

function jsonSafeFilter(filter: ProgramAccountsFilter): unknown {
  if ("dataSize" in filter) return { dataSize: Number(filter.dataSize) };
  return { memcmp: { ...filter.memcmp, offset: Number(filter.memcmp.offset) } };
}

function assertHttpUrl(url: string, chain: string): void {
  assertUrl(url, chain, ["http:", "https:"]);
}

function assertUrl(url: string, chain: string, protocols: readonly string[]): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RangeError(`chain ${chain}: upstream URL is not a URL: ${redactUrl(url)}`);
  }
  if (!protocols.includes(parsed.protocol)) {
    const names = protocols.map((p) => p.slice(0, -1)).join(" or ");
    throw new RangeError(`chain ${chain}: upstream URL must be ${names}, got ${parsed.protocol}`);
  }
}
