/**
 * A Jito block engine on the localnet's port, as Jito's own JSON-RPC client (`jito-js-rpc`) calls it:
 * `POST /api/v1/bundles` (sendBundle, getBundleStatuses, getInflightBundleStatuses, getTipAccounts),
 * `POST /api/v1/transactions` (sendTransaction: as Jito's, the transaction goes on as a regular one AND as a
 * one-transaction bundle, which then bids by its tip; `?bundleOnly=true`: as the bundle alone; either way
 * the bundle's id is answered in the `x-bundle-id` header when it was buffered) and `GET /api/v1/bundles/tip_floor` (the shape of
 * Jito's tip-floor feed, from tips that landed here). Bundles are packed by the chain (chain/bundles.ts).
 */
import { decodeWirePayload } from "../wire/binary-encoding.ts";
import { decodeTransaction, VERSIONED_TRANSACTION_TYPE, type DecodedTransaction } from "../wire/decode-transaction.ts";
import type { Chain } from "../chain/chain.ts";
import {
  bundleId,
  MAX_BUNDLE_TRANSACTIONS,
  MIN_TIP_LAMPORTS,
  staticTip,
  TIP_ACCOUNTS,
  tipThroughLookupTable,
} from "../chain/bundles.ts";
import type { Faults } from "../faults.ts";
import { configParam, enumField, expectArity } from "./params.ts";
import {
  JsonRpcError,
  RpcErrorCode,
  invalidParams,
  type MethodContext,
  type MethodHandler,
  type MethodTable,
} from "./protocol.ts";
import { parseJson } from "./json.ts";
import { createRpcServer, type Route } from "./server.ts";

/** The block engine's base path (what a jito-js-rpc client is given after the host). */
export const BLOCK_ENGINE_PATH = "/api/v1";
/** Slots of landed tips the tip floor is computed over (150: one blockhash lifetime, ~1 minute at 400 ms). */
const TIP_FLOOR_SLOTS = 150n;
/** Weight of the newest slot's median in the tip floor's moving average. */
const EMA_ALPHA = 0.1;
const LAMPORTS_PER_SOL = 1_000_000_000;
/** Jito answers at most 5 ids per status call. */
const MAX_STATUS_IDS = 5;

/** What the block engine needs. */
export interface BlockEngineDeps {
  chain: Chain;
  faults: Faults;
  /** The node's own sendTransaction (preflight and all), for `/api/v1/transactions` without bundleOnly. */
  sendTransaction: MethodHandler;
  /** Refuse bundles that tip less than 1,000 lamports (Jito's rule); default true. */
  requireTip?: boolean;
}

/** The block engine's method tables, one per path, and its tip floor. */
export interface BlockEngine {
  bundles: MethodTable;
  transactions: MethodTable;
  /** `/api/v1/transactions?bundleOnly=true`. */
  bundleOnlyTransactions: MethodTable;
  /** Does the engine know this bundle id (buffered, landed or failed)? */
  knows(id: string): boolean;
  tipFloor(): object[];
}

const refuse = (message: string) => new JsonRpcError(RpcErrorCode.INVALID_PARAMS, message);

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly bigint[], p: number): bigint {
  if (sorted.length === 0) return 0n;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

const sol = (lamports: bigint | number) => Number(lamports) / LAMPORTS_PER_SOL;

/** Creates the block engine over a chain. */
export function createBlockEngine(deps: BlockEngineDeps): BlockEngine {
  const { chain, faults } = deps;
  const requireTip = deps.requireTip ?? true;

  /** Decodes and checks a bundle as Jito's block engine does before accepting it; throws its refusal. */
  function checkedBundle(encoded: unknown, config: Record<string, unknown>): DecodedTransaction[] {
    if (!Array.isArray(encoded) || encoded.some((e) => typeof e !== "string")) {
      throw invalidParams("Invalid params: expected an array of encoded transactions");
    }
    if (encoded.length === 0) throw refuse("bundle must contain at least one transaction");
    if (encoded.length > MAX_BUNDLE_TRANSACTIONS) {
      throw refuse(`bundle contains ${encoded.length} transactions, the maximum is ${MAX_BUNDLE_TRANSACTIONS}`);
    }
    const encoding = enumField(config, "encoding", ["base58", "base64"] as const) ?? "base58";
    const txs = (encoded as string[]).map((text, i) => {
      try {
        return decodeTransaction(decodeWirePayload(text, encoding, VERSIONED_TRANSACTION_TYPE));
      } catch (err) {
        throw refuse(`transaction ${i} could not be decoded: ${(err as Error).message}`);
      }
    });
    const seen = new Set<string>();
    for (const [i, tx] of txs.entries()) {
      const signature = tx.signatureStrings[0]!;
      if (seen.has(signature)) throw refuse(`bundle contains duplicate transactions (transaction ${i})`);
      seen.add(signature);
    }
    const slot = chain.slotAt("processed");
    let tip = 0n;
    for (const [i, tx] of txs.entries()) {
      if (chain.check(tx, true) === "SignatureFailure") throw refuse(`transaction ${i} failed signature verification`);
      if (!chain.isLifetimeValid(tx, slot)) throw refuse(`transaction ${i} has an expired or unknown blockhash`);
      let loaded: string[] = [];
      try {
        const keys = chain.accountKeys(tx);
        loaded = [...keys.loadedAddresses.writable, ...keys.loadedAddresses.readonly];
      } catch {
        throw refuse(`transaction ${i}: its address lookup tables do not resolve`);
      }
      if (tipThroughLookupTable(loaded)) {
        throw refuse(`transaction ${i} references a tip account through an address lookup table`);
      }
      tip += staticTip(tx);
    }
    if (requireTip && tip < MIN_TIP_LAMPORTS) {
      throw refuse(
        `bundle must transfer at least ${MIN_TIP_LAMPORTS} lamports to one of the tip accounts (getTipAccounts)`,
      );
    }
    return txs;
  }

  /** Buffers (or, by the path's drop fault, loses) a checked bundle; returns its id. */
  function accept(txs: readonly DecodedTransaction[]): string {
    const id = bundleId(txs.map((tx) => tx.signatureStrings[0]!));
    if (faults.dropBundle()) return id; // answered, never buffered: it will read Invalid
    if (chain.submitBundle(txs) === null) {
      throw new JsonRpcError(RpcErrorCode.INTERNAL_ERROR, "bundle buffer is full, try again later");
    }
    return id;
  }

  function statusIds(params: unknown[]): string[] {
    expectArity(params, 1, 1);
    const ids = params[0];
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== "string")) {
      throw invalidParams("Invalid params: expected an array of bundle ids");
    }
    if (ids.length > MAX_STATUS_IDS) throw refuse(`at most ${MAX_STATUS_IDS} bundle ids per request`);
    return ids as string[];
  }

  const confirmationStatus = (slot: bigint) =>
    slot <= chain.slotAt("finalized") ? "finalized" : slot <= chain.slotAt("confirmed") ? "confirmed" : "processed";

  const bundles: MethodTable = {
    sendBundle(params) {
      expectArity(params, 1, 2);
      return accept(checkedBundle(params[0], configParam(params[1])));
    },
    getTipAccounts(params) {
      expectArity(params, 0, 0);
      return [...TIP_ACCOUNTS];
    },
    getBundleStatuses(params) {
      const ids = statusIds(params);
      const value = ids.map((id) => {
        const record = chain.bundles.get(id);
        if (record === undefined || record.status !== "Landed") return null;
        return {
          bundle_id: id,
          transactions: record.signatures,
          slot: Number(record.slot!),
          confirmation_status: confirmationStatus(record.slot!),
          err: { Ok: null },
        };
      });
      return { context: { slot: Number(chain.slotAt("processed")) }, value };
    },
    getInflightBundleStatuses(params) {
      const ids = statusIds(params);
      const value = ids.map((id) => {
        const record = chain.bundles.get(id);
        if (record === undefined) return { bundle_id: id, status: "Invalid", landed_slot: null };
        const entry: Record<string, unknown> = {
          bundle_id: id,
          status: record.status,
          landed_slot: record.slot === undefined ? null : Number(record.slot),
        };
        // Not in Jito's answer: why a Failed bundle failed (a client that does not know the field ignores it).
        if (record.reason !== undefined) entry.reason = record.reason;
        return entry;
      });
      return { context: { slot: Number(chain.slotAt("processed")) }, value };
    },
  };

  const sendAsBundle: MethodHandler = (params) => {
    expectArity(params, 1, 2);
    const config = configParam(params[1]);
    const [tx] = checkedBundle([params[0]], config);
    accept([tx!]);
    return tx!.signatureStrings[0]!;
  };

  return {
    bundles,
    transactions: {
      sendTransaction(params, ctx) {
        // Through the node's own path, with the block engine's drop fault instead of the node's.
        if (faults.dropBundle()) {
          expectArity(params, 1, 2);
          const config = configParam(params[1]);
          const encoding = enumField(config, "encoding", ["base58", "base64"] as const) ?? "base58";
          return decodeTransaction(decodeWirePayload(String(params[0]), encoding, VERSIONED_TRANSACTION_TYPE))
            .signatureStrings[0];
        }
        const signature = deps.sendTransaction(params, ctx);
        // Jito's sendTransaction also submits the transaction as a bundle: in the bundle stage it bids by
        // its tip per unit, beside its copy in the banking buffer, which bids by its fees alone; whichever
        // runs first lands, the other is then a duplicate. One the bundle checks refuse (no tip of at least
        // the minimum: it could not win an auction; Jito tops it up, which the tip floor here would misread
        // as a zero tip) goes on as a regular transaction only.
        try {
          const [tx] = checkedBundle([params[0]], configParam(params[1]));
          chain.submitBundle([tx!]);
        } catch {
          // Not bundled; the regular send stands.
        }
        return signature;
      },
    },
    bundleOnlyTransactions: { sendTransaction: sendAsBundle },
    knows: (id) => chain.bundles.get(id) !== undefined,
    tipFloor() {
      const tip = chain.slotAt("processed");
      const landed = chain.bundles.landedTips(tip > TIP_FLOOR_SLOTS ? tip - TIP_FLOOR_SLOTS : 0n);
      const sorted = landed.map((entry) => entry.tip).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      // The moving average of each slot's median landed tip, oldest slot first.
      const bySlot = new Map<bigint, bigint[]>();
      for (const entry of landed) bySlot.set(entry.slot, [...(bySlot.get(entry.slot) ?? []), entry.tip]);
      let ema: number | null = null;
      for (const tips of bySlot.values()) {
        const median = Number(
          percentile(
            [...tips].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
            50,
          ),
        );
        ema = ema === null ? median : EMA_ALPHA * median + (1 - EMA_ALPHA) * ema;
      }
      return [
        {
          time: new Date().toISOString(),
          landed_tips_25th_percentile: sol(percentile(sorted, 25)),
          landed_tips_50th_percentile: sol(percentile(sorted, 50)),
          landed_tips_75th_percentile: sol(percentile(sorted, 75)),
          landed_tips_95th_percentile: sol(percentile(sorted, 95)),
          landed_tips_99th_percentile: sol(percentile(sorted, 99)),
          ema_landed_tips_50th_percentile: sol(ema ?? 0),
        },
      ];
    },
  };
}

/** The block engine's paths on the localnet's HTTP server (server.ts routes), JSON-RPC framed as the root is. */
export function blockEngineRoutes(
  engine: BlockEngine,
  context: () => MethodContext,
  faults: Faults,
): Record<string, Route> {
  const rpcOver = (methods: MethodTable) => createRpcServer({ methods, controlMethods: {}, context, faults });
  const bundles = rpcOver(engine.bundles);
  const transactions = rpcOver(engine.transactions);
  const bundleOnly = rpcOver(engine.bundleOnlyTransactions);
  return {
    [`${BLOCK_ENGINE_PATH}/bundles`]: { post: async (body) => ({ body: await bundles.handleBody(body) }) },
    [`${BLOCK_ENGINE_PATH}/transactions`]: {
      async post(body, query) {
        const out = await (query.get("bundleOnly") === "true" ? bundleOnly : transactions).handleBody(body);
        // Jito answers the bundle's id in a header; a one-transaction bundle's id follows from the signature.
        let signature: unknown;
        try {
          signature = out === null ? undefined : (parseJson(out) as { result?: unknown }).result;
        } catch {
          signature = undefined;
        }
        const id = typeof signature === "string" ? bundleId([signature]) : undefined;
        // bundleOnly: always (a bundle the engine then lost still got its id); otherwise when it was bundled.
        return id !== undefined && (query.get("bundleOnly") === "true" || engine.knows(id))
          ? { body: out, headers: { "x-bundle-id": id } }
          : { body: out };
      },
    },
    [`${BLOCK_ENGINE_PATH}/bundles/tip_floor`]: { get: () => engine.tipFloor() },
  };
}
