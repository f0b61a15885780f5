/**
 * A Jito block engine's JSON-RPC (`/api/v1/bundles`): getTipAccounts (cached), sendBundle (base64) and
 * getInflightBundleStatuses, each answer checked against its schema (as response-schemas.ts does for
 * the node's methods); and its tip-floor feed (`GET /api/v1/bundles/tip_floor`). The only code that talks
 * to a block engine.
 */
import * as v from "valibot";
import { jitoEndpointOf } from "../solana/jito-endpoint.ts";

/** Options of {@link createBlockEngine}. */
export interface BlockEngineOptions {
  /** The base URL (`https://mainnet.block-engine.jito.wtf`, or `.../api/v1`); `?uuid=` is taken as auth. */
  readonly url: string;
  readonly auth?: string;
  /** How long the tip accounts are kept (default 10 min). */
  readonly tipAccountsTtlMs?: number;
  readonly timeoutMs?: number;
}

/** A bundle's status as `getInflightBundleStatuses` gives it. */
export interface InflightBundleStatus {
  readonly status: "Invalid" | "Pending" | "Failed" | "Landed";
  readonly landedSlot?: bigint;
  /** Why it failed, when the engine says (the localnet's added field). */
  readonly reason?: string;
}

/** Landed tips as the tip-floor feed gives them, converted from SOL to lamports. */
export interface TipFloor {
  readonly p25: bigint;
  readonly p50: bigint;
  readonly p75: bigint;
  readonly p95: bigint;
  readonly p99: bigint;
  /** When the feed says it was computed. */
  readonly time: Date | undefined;
}

/** A block engine. */
export interface BlockEngine {
  tipAccounts(): Promise<readonly string[]>;
  /** The tip floor (`GET <base>/api/v1/bundles/tip_floor`): percentiles of recently landed tips. */
  tipFloor(): Promise<TipFloor>;
  /** Sends a bundle of base64 wire transactions; resolves to the engine's bundle id. */
  sendBundle(transactions: readonly string[]): Promise<string>;
  inflightStatus(bundleId: string): Promise<InflightBundleStatus>;
}

/** A block engine's refusal (JSON-RPC error). */
export class BlockEngineRefusal extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

const base58 = v.pipe(v.string(), v.regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/));
const rpcError = v.looseObject({ error: v.looseObject({ code: v.number(), message: v.string() }) });
const tipAccountsAnswer = v.looseObject({ result: v.pipe(v.array(base58), v.minLength(1), v.maxLength(64)) });
const sendBundleAnswer = v.looseObject({ result: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)) });
const inflightAnswer = v.looseObject({
  result: v.looseObject({
    value: v.array(
      v.nullable(
        v.looseObject({
          bundle_id: v.string(),
          status: v.picklist(["Invalid", "Pending", "Failed", "Landed"]),
          landed_slot: v.optional(v.nullable(v.number())),
          reason: v.optional(v.nullable(v.string())),
        }),
      ),
    ),
  }),
});

// Jito's feed: a one-element array of landed-tip percentiles in SOL (floats), plus fields not read here.
const solAmount = v.pipe(v.number(), v.finite(), v.minValue(0), v.maxValue(1e9));
const tipFloorAnswer = v.pipe(
  v.array(
    v.looseObject({
      time: v.optional(v.nullable(v.string())),
      landed_tips_25th_percentile: solAmount,
      landed_tips_50th_percentile: solAmount,
      landed_tips_75th_percentile: solAmount,
      landed_tips_95th_percentile: solAmount,
      landed_tips_99th_percentile: solAmount,
    }),
  ),
  v.minLength(1),
);

/** SOL as a float to lamports; the feed's floats carry at most nine decimals that mean anything. */
const lamportsOfSol = (sol: number): bigint => BigInt(Math.round(sol * 1e9));

/** Creates a block engine client. */
export function createBlockEngine(options: BlockEngineOptions): BlockEngine {
  const { api, auth } = jitoEndpointOf(options.url, options.auth);
  const ttl = options.tipAccountsTtlMs ?? 600_000;
  const timeoutMs = options.timeoutMs ?? 5000;
  let tips: { at: number; accounts: Promise<readonly string[]> } | undefined;

  async function call<T extends v.GenericSchema>(
    method: string,
    params: unknown[],
    schema: T,
  ): Promise<v.InferOutput<T>> {
    const response = await fetch(`${api}/bundles`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(auth === undefined ? {} : { "x-jito-auth": auth }) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body: unknown = await response.json();
    const refused = v.safeParse(rpcError, body);
    if (refused.success) throw new BlockEngineRefusal(refused.output.error.code, refused.output.error.message);
    const answer = v.safeParse(schema, body);
    if (!answer.success) throw new Error(`block engine: ${method} answered in an unexpected shape`);
    return answer.output;
  }

  return {
    tipAccounts() {
      if (tips === undefined || Date.now() - tips.at > ttl) {
        const accounts = call("getTipAccounts", [], tipAccountsAnswer).then((a) => a.result as readonly string[]);
        tips = { at: Date.now(), accounts };
        // A failed lookup is not kept.
        accounts.catch(() => {
          tips = undefined;
        });
      }
      return tips.accounts;
    },
    async tipFloor() {
      const response = await fetch(`${api}/bundles/tip_floor`, {
        headers: auth === undefined ? {} : { "x-jito-auth": auth },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) throw new Error(`block engine: tip_floor answered HTTP ${response.status}`);
      const answer = v.safeParse(tipFloorAnswer, await response.json());
      if (!answer.success) throw new Error("block engine: tip_floor answered in an unexpected shape");
      const floor = answer.output[0]!;
      const time = floor.time == null ? undefined : new Date(floor.time);
      return {
        p25: lamportsOfSol(floor.landed_tips_25th_percentile),
        p50: lamportsOfSol(floor.landed_tips_50th_percentile),
        p75: lamportsOfSol(floor.landed_tips_75th_percentile),
        p95: lamportsOfSol(floor.landed_tips_95th_percentile),
        p99: lamportsOfSol(floor.landed_tips_99th_percentile),
        time: time === undefined || Number.isNaN(time.getTime()) ? undefined : time,
      };
    },
    async sendBundle(transactions) {
      const answer = await call("sendBundle", [transactions, { encoding: "base64" }], sendBundleAnswer);
      return answer.result;
    },
    async inflightStatus(bundleId) {
      const answer = await call("getInflightBundleStatuses", [[bundleId]], inflightAnswer);
      const entry = answer.result.value[0];
      if (entry == null) return { status: "Invalid" };
      return {
        status: entry.status,
        ...(entry.landed_slot == null ? {} : { landedSlot: BigInt(entry.landed_slot) }),
        ...(entry.reason == null ? {} : { reason: entry.reason }),
      };
    },
  };
}
