/**
 * The two DAS calls collections need, typed, over the upstream's raw DAS caller (which owns URLs,
 * retries and limits). Responses are provider data and treated as untrusted: shapes are checked
 * here, membership is checked by the caller.
 *
 * Params go by name (`params: {...}`), as Metaplex, Helius, Triton and QuickNode document. Some
 * servers take only positional params (Alchemy documents those; a JSON-RPC server that rejects a
 * params object answers -32602, `invalid-params`): after such a refusal the client switches to the positional form
 * of the reference implementation's field order and keeps it.
 */
import { SolgateError, isSolgateError } from "../errors.ts";
import { nodeErrorOf } from "../upstream/node-errors.ts";
import type { DasClient } from "../upstream/upstream.ts";

/** One asset as DAS renders it; only the fields Solgate reads, all optional (provider data). */
export interface DasAsset {
  interface?: unknown;
  id: string;
  content?: {
    json_uri?: unknown;
    metadata?: { name?: unknown; symbol?: unknown; description?: unknown; token_standard?: unknown };
    links?: { image?: unknown };
    files?: { uri?: unknown; mime?: unknown }[];
  };
  compression?: { compressed?: unknown };
  grouping?: { group_key?: unknown; group_value?: unknown; verified?: unknown }[];
  ownership?: { owner?: unknown };
  burnt?: unknown;
}

/** One getAssetsByGroup request, sorted by id ascending with a keyset bound. */
export interface GroupPageRequest {
  collection: string;
  /** Only ids after this one (exclusive); undefined for the first page. */
  after?: string;
  /** 1-1000. */
  limit: number;
  signal?: AbortSignal;
}

/** One getAssetsByOwner request, sorted by id ascending with a keyset bound. */
export interface OwnerPageRequest {
  owner: string;
  /** Only ids after this one (exclusive); undefined for the first page. */
  after?: string;
  /** 1-1000. */
  limit: number;
  signal?: AbortSignal;
}

/** The DAS reads of the collections and wallets cores. */
export interface CollectionsDas {
  /** The asset, or null when the provider has none with this id. */
  getAsset(id: string, signal?: AbortSignal): Promise<DasAsset | null>;
  /** Raw items of one page (unfiltered: the caller checks membership). */
  getGroupPage(request: GroupPageRequest): Promise<DasAsset[]>;
  /** Raw items of one page of what a wallet holds (unchecked: the caller checks ownership). */
  getOwnerPage(request: OwnerPageRequest): Promise<DasAsset[]>;
}

/** getAssetsByGroup takes at most this many items per call. */
export const MAX_DAS_LIMIT = 1000;

type ParamStyle = "named" | "positional";

/** Wraps the upstream's DAS caller. */
export function createCollectionsDas(das: DasClient): CollectionsDas {
  let style: ParamStyle = "named";

  async function call<T>(
    method: string,
    named: Record<string, unknown>,
    positional: unknown[],
    signal?: AbortSignal,
  ): Promise<T> {
    const options = signal ? { abortSignal: signal } : {};
    if (style === "positional") return das.call<T>(method, positional, options);
    try {
      return await das.call<T>(method, named, options);
    } catch (error) {
      if (nodeErrorOf(error)?.kind !== "invalid-params") throw error;
      let result: T;
      try {
        result = await das.call<T>(method, positional, options);
      } catch {
        throw error; // both refused: the first refusal says more
      }
      style = "positional";
      return result;
    }
  }

  return {
    async getAsset(id, signal) {
      try {
        const asset = await call<unknown>("getAsset", { id }, [id], signal);
        return asset === null || asset === undefined ? null : checkAsset(asset, "getAsset");
      } catch (error) {
        if (isNotFound(error)) return null;
        throw providerError(error, "getAsset");
      }
    },
    async getGroupPage(request) {
      const sortBy = { sortBy: "id", sortDirection: "asc" };
      const named: Record<string, unknown> = {
        groupKey: "collection",
        groupValue: request.collection,
        sortBy,
        limit: request.limit,
      };
      if (request.after !== undefined) named.after = request.after;
      // The reference's field order: groupKey, groupValue, sortBy, limit, page, before, after.
      const positional = ["collection", request.collection, sortBy, request.limit, null, null, request.after ?? null];
      let result: unknown;
      try {
        result = await call<unknown>("getAssetsByGroup", named, positional, request.signal);
      } catch (error) {
        throw providerError(error, "getAssetsByGroup");
      }
      return itemsOf(result, "getAssetsByGroup");
    },
    async getOwnerPage(request) {
      const sortBy = { sortBy: "id", sortDirection: "asc" };
      const named: Record<string, unknown> = { ownerAddress: request.owner, sortBy, limit: request.limit };
      if (request.after !== undefined) named.after = request.after;
      // The reference's field order: ownerAddress, sortBy, limit, page, before, after.
      const positional = [request.owner, sortBy, request.limit, null, null, request.after ?? null];
      let result: unknown;
      try {
        result = await call<unknown>("getAssetsByOwner", named, positional, request.signal);
      } catch (error) {
        throw providerError(error, "getAssetsByOwner");
      }
      return itemsOf(result, "getAssetsByOwner");
    },
  };
}

function itemsOf(result: unknown, method: string): DasAsset[] {
  const items = (result as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) throw badResponse(method, "no items array");
  return items.map((item) => checkAsset(item, method));
}

function checkAsset(value: unknown, method: string): DasAsset {
  if (typeof value !== "object" || value === null || typeof (value as DasAsset).id !== "string") {
    throw badResponse(method, "an item without an id");
  }
  return value as DasAsset;
}

/** Providers word "no such asset" differently; all say "not found" (reference: "Asset Not Found"). */
function isNotFound(error: unknown): boolean {
  const info = nodeErrorOf(error);
  return info !== undefined && /not\s*found/iu.test(info.message);
}

/** A DAS JSON-RPC error is the provider failing us, not the caller's mistake (addresses are checked first). */
function providerError(error: unknown, method: string): unknown {
  if (isSolgateError(error)) return error;
  const info = nodeErrorOf(error);
  if (info === undefined) {
    // Not a JSON-RPC error Solgate can read (kit fails to build errors for codes it does not know,
    // such as DAS's -32000): still the provider failing, not a bug of the caller's.
    return new SolgateError(
      "UPSTREAM_UNAVAILABLE",
      `the DAS provider's answer to ${method} could not be read`,
      { method, failure: "bad_response" },
      { cause: error, retryAfterMs: 1000 },
    );
  }
  const hint =
    info.kind === "method-not-found"
      ? "; the chain's DAS endpoint does not serve it (set a DAS URL for this chain)"
      : "";
  return new SolgateError(
    "UPSTREAM_UNAVAILABLE",
    `the DAS provider refused ${method}: ${info.message.slice(0, 200)}${hint}`,
    { method, rpcCode: info.code },
    { cause: error, retryAfterMs: 1000 },
  );
}

function badResponse(method: string, what: string): SolgateError {
  return new SolgateError(
    "UPSTREAM_UNAVAILABLE",
    `the DAS provider answered ${method} with ${what}`,
    { method, failure: "bad_response" },
    { retryAfterMs: 1000 },
  );
}
