/**
 * Send paths: send-only endpoints (staked RPCs, Sender-like services) and a Jito block engine that every
 * send and every rebroadcast goes to at once, beside the chain's RPC URLs. Each path has its own
 * options (`skipPreflight`, `maxRetries: 0`), its own circuit breaker (cockatiel, as the RPC endpoints
 * have) and its own metrics: accepted, refused by reason, latency.
 *
 * {@link withSendPaths} wraps the chain's kit transport so that `sendTransaction` fans out: a first submission with
 * preflight is simulated once, by the chain's RPC, and only a transaction it accepted goes on to the
 * paths (simulation and checks once, before the fan-out); a submission without preflight (rebroadcasts,
 * clients that skip simulation) goes to the RPC and to every path at the same moment, and the first
 * acceptance answers. Every other method is the RPC's own.
 */
import * as v from "valibot";
import { getBase58Decoder } from "@solana/kit";
import type { RpcTransport } from "@solana/kit";
import { jitoEndpointOf } from "../solana/jito-endpoint.ts";
import { createEndpointBreaker } from "./endpoint-breaker.ts";
import type { BreakerState, EndpointBreaker } from "./endpoint-breaker.ts";
import { redactUrl } from "./metrics.ts";

/** One configured send path. */
export interface SendPathConfig {
  /** `rpc`: a JSON-RPC endpoint taking `sendTransaction`; `jito`: a block engine base URL (`/api/v1/transactions`). */
  readonly kind: "rpc" | "jito";
  readonly url: string;
  /** The block engine's `x-jito-auth` UUID, when it needs one. */
  readonly auth?: string;
  /** Whether the path skips its own preflight (default true: Solgate has simulated already). */
  readonly skipPreflight?: boolean;
}

/** How one path's attempt ended. */
export type SendPathOutcome = "accepted" | "refused" | "timeout" | "network_error" | "bad_response" | "breaker_open";

/** Hooks for one chain's send-path metrics. */
export interface SendPathMetrics {
  /** One attempt on `path` (redacted label) ended; `reason` is the node's error kind for a refusal. */
  onResult(path: string, outcome: SendPathOutcome, seconds: number, reason?: string): void;
  onBreakerState?(path: string, state: BreakerState): void;
  /** `path`'s acceptance was the first of a fan-out (the copy the chain most likely got first). */
  onFirstAccepted?(path: string): void;
}

/** Counters of one path, as stats report them. */
export interface SendPathStats {
  readonly path: string;
  readonly kind: "rpc" | "jito";
  readonly accepted: number;
  readonly refused: Readonly<Record<string, number>>;
  /** How often this path's acceptance was the first of the fan-out. */
  readonly firstAccepted: number;
  readonly breaker: BreakerState;
}

/** The paths of one chain. */
export interface SendPaths {
  readonly size: number;
  /** Sends base64 wire bytes to every path at once; resolves to the label of the first path that accepted, or rejects with every path's error. */
  broadcast(base64: string): Promise<string>;
  stats(): SendPathStats[];
}

/** Options of {@link createSendPaths}. */
export interface SendPathsOptions {
  readonly paths: readonly SendPathConfig[];
  /** Per-attempt timeout (default 5 s). */
  readonly timeoutMs?: number;
  readonly metrics?: SendPathMetrics;
  /** For tests: the fetch to use. */
  readonly fetch?: typeof fetch;
}

/** What a `sendTransaction` answer must look like: a signature, or a JSON-RPC error. */
const sendAnswer = v.union([
  v.looseObject({ result: v.pipe(v.string(), v.regex(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/)) }),
  v.looseObject({ error: v.looseObject({ code: v.number(), message: v.string() }) }),
]);

/** A path's refusal, with the node's message. */
export class SendPathError extends Error {
  readonly path: string;
  readonly outcome: SendPathOutcome;
  constructor(path: string, outcome: SendPathOutcome, message: string) {
    super(`${path}: ${message}`);
    this.path = path;
    this.outcome = outcome;
  }
}

interface Path {
  readonly config: SendPathConfig;
  readonly label: string;
  readonly endpoint: string;
  readonly breaker: EndpointBreaker;
  accepted: number;
  firstAccepted: number;
  readonly refused: Record<string, number>;
}

/** The URL a path's `sendTransaction` goes to, and its auth header. */
function endpointOf(config: SendPathConfig): { endpoint: string; auth?: string } {
  if (config.kind === "rpc") return { endpoint: config.url };
  const { api, auth } = jitoEndpointOf(config.url, config.auth);
  const endpoint = `${api}/transactions`;
  return { endpoint, ...(auth === undefined ? {} : { auth }) };
}

/** Reason label of a JSON-RPC refusal: a short, bounded kind (never the message: labels must stay few). */
function reasonOf(code: number, message: string): string {
  if (/already.*processed/i.test(message)) return "already_processed";
  if (/blockhash not found/i.test(message)) return "blockhash_not_found";
  if (/tip|bundle/i.test(message)) return "needs_tip";
  if (code === 429 || /rate/i.test(message)) return "rate_limited";
  return `rpc_${code}`;
}

/** Creates one chain's send paths. */
export function createSendPaths(options: SendPathsOptions): SendPaths {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 5000;
  const metrics = options.metrics;
  const paths: Path[] = options.paths.map((config, i) => {
    const label = `${config.kind}:${redactUrl(config.url)}#${i}`;
    metrics?.onBreakerState?.(label, "closed");
    return {
      config,
      label,
      endpoint: endpointOf(config).endpoint,
      breaker: createEndpointBreaker({ onStateChange: (state) => metrics?.onBreakerState?.(label, state) }),
      accepted: 0,
      firstAccepted: 0,
      refused: {},
    };
  });

  async function attempt(path: Path, base64: string): Promise<void> {
    const { auth } = endpointOf(path.config);
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    const refuse = (outcome: SendPathOutcome, reason: string, message: string): never => {
      path.refused[reason] = (path.refused[reason] ?? 0) + 1;
      metrics?.onResult(path.label, outcome, seconds(), reason);
      throw new SendPathError(path.label, outcome, message);
    };
    const verdict = await path.breaker.run(async () => {
      let body: unknown;
      try {
        const response = await doFetch(path.endpoint, {
          method: "POST",
          headers: { "content-type": "application/json", ...(auth === undefined ? {} : { "x-jito-auth": auth }) },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "sendTransaction",
            params: [base64, { encoding: "base64", skipPreflight: path.config.skipPreflight ?? true, maxRetries: 0 }],
          }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        const text = await response.text();
        try {
          body = JSON.parse(text);
        } catch {
          return { endpointFailed: true, outcome: "bad_response" as const, message: `HTTP ${response.status}` };
        }
      } catch (e) {
        const timedOut = e instanceof Error && e.name === "TimeoutError";
        return {
          endpointFailed: true,
          outcome: timedOut ? ("timeout" as const) : ("network_error" as const),
          message: e instanceof Error ? e.message : String(e),
        };
      }
      const answer = v.safeParse(sendAnswer, body);
      if (!answer.success)
        return { endpointFailed: true, outcome: "bad_response" as const, message: "not a sendTransaction answer" };
      if ("error" in answer.output) {
        const { code, message } = answer.output.error as { code: number; message: string };
        // A refusal of the transaction is the path working; only a path that cannot answer trips its breaker.
        return { endpointFailed: false, outcome: "refused" as const, message, reason: reasonOf(code, message) };
      }
      return { endpointFailed: false, outcome: "accepted" as const, message: "" };
    });
    if (verdict === undefined) refuse("breaker_open", "breaker_open", "breaker open");
    else if (verdict.outcome === "accepted") {
      path.accepted += 1;
      metrics?.onResult(path.label, "accepted", seconds());
    } else
      refuse(
        verdict.outcome,
        "reason" in verdict ? (verdict.reason ?? verdict.outcome) : verdict.outcome,
        verdict.message,
      );
  }

  return {
    size: paths.length,
    async broadcast(base64) {
      const attempts = paths.map((path) => attempt(path, base64).then(() => path));
      const first = await Promise.any(attempts);
      first.firstAccepted += 1;
      metrics?.onFirstAccepted?.(first.label);
      // The others finish on their own; their outcomes are in the metrics.
      for (const a of attempts) a.catch(() => {});
      return first.label;
    },
    stats: () =>
      paths.map((p) => ({
        path: p.label,
        kind: p.config.kind,
        accepted: p.accepted,
        refused: { ...p.refused },
        firstAccepted: p.firstAccepted,
        breaker: p.breaker.state(),
      })),
  };
}

/**
 * The chain's kit transport, with `sendTransaction` also going to `paths` (see the file's header); every other
 * method is the transport's own. With preflight the RPC answers alone and the paths get the transaction once it
 * accepted it; without, the first acceptance among the RPC and the paths answers, and only when every one refused
 * does the RPC's own answer come back (so the caller reads its error as before: already processed, blockhash not
 * found, ...). Kit's rpc over it is built with `createSolanaRpcFromTransport`.
 */
export function withSendPaths(transport: RpcTransport, paths: SendPaths): RpcTransport {
  if (paths.size === 0) return transport;
  return async <TResponse>(request: Parameters<RpcTransport>[0]): Promise<TResponse> => {
    const send = sendOf(request.payload);
    if (send === undefined) return transport<TResponse>(request);
    if (!send.skipPreflight) {
      // Simulated once by the RPC; the paths get only what it accepted.
      const response = await transport<TResponse>(request);
      if (isAcceptance(response)) paths.broadcast(send.wire).catch(() => {});
      return response;
    }
    const own = transport<TResponse>(request);
    const fanned = paths.broadcast(send.wire);
    fanned.catch(() => {});
    try {
      return await Promise.any([
        own.then((response) => (isAcceptance(response) ? response : Promise.reject(response))),
        // A path's acceptance answers with the transaction's own signature (its first), as the RPC would.
        fanned.then(() => ({ jsonrpc: "2.0", id: send.id, result: signatureOf(send.wire) }) as TResponse),
      ]);
    } catch {
      // Every one refused: the RPC's own answer (or failure), as the caller has always read it.
      return await own;
    }
  };
}

/** A `sendTransaction` request's wire bytes (base64, as kit sends them) and options; undefined for any other. */
function sendOf(payload: unknown): { wire: string; skipPreflight: boolean; id: unknown } | undefined {
  const request = payload as { method?: unknown; params?: unknown; id?: unknown } | null;
  if (request?.method !== "sendTransaction" || !Array.isArray(request.params)) return undefined;
  const [wire, config] = request.params as [unknown, { skipPreflight?: unknown } | undefined];
  if (typeof wire !== "string") return undefined;
  return { wire, skipPreflight: config?.skipPreflight === true, id: request.id };
}

/** Whether a JSON-RPC response carries a result (the node accepted), not an error. */
function isAcceptance(response: unknown): boolean {
  return typeof response === "object" && response !== null && "result" in response && !("error" in response);
}

/** The first signature of base64 wire bytes (the transaction's id), base58. */
function signatureOf(wire: string): string {
  const bytes = Buffer.from(wire, "base64");
  // Wire format: a compact-u16 signature count (1 byte below 128), then 64-byte signatures.
  return getBase58Decoder().decode(bytes.subarray(1, 65));
}
