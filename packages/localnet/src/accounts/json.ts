/**
 * JSON on the wire as an agave node writes it: u64 values (lamports, rentEpoch = 2^64-1, token
 * extension amounts) are bare JSON numbers, exact beyond 2^53. Response trees carry them as plain
 * numbers when exact and as `JSON.rawJSON` literals otherwise, so serialising a 100,000-account
 * scan needs no replacer (measured: ~120 ms native vs ~240 ms with a bigint replacer).
 */

/** A pre-serialised JSON fragment created by `JSON.rawJSON`; `JSON.stringify` copies it verbatim. */
export interface RawJson {
  readonly rawJSON: string;
}

/** A u64 as it appears in a response tree: a plain number when exact, else a raw integer literal. */
export type JsonU64 = number | RawJson;

const nativeJson = JSON as unknown as {
  rawJSON(text: string): RawJson;
  isRawJSON(value: unknown): value is RawJson;
};

const U64_MAX = 0xffff_ffff_ffff_ffffn;
const U64_MAX_JSON = nativeJson.rawJSON(U64_MAX.toString());

/**
 * Converts a u64 at the response edge. Safe integers stay numbers (cheap to serialise and to read
 * in-process); larger values become raw integer literals so that `JSON.stringify` writes them exactly.
 */
export function jsonU64(value: bigint): JsonU64 {
  if (value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value);
  return value === U64_MAX ? U64_MAX_JSON : nativeJson.rawJSON(value.toString());
}

/** {@link jsonU64} for signed integers (i64 timestamps in token extensions). */
export function jsonI64(value: bigint): JsonU64 {
  if (value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value);
  return nativeJson.rawJSON(value.toString());
}

/** Whether a response-tree value is a raw JSON fragment (see {@link jsonU64}). */
export function isRawJson(value: unknown): value is RawJson {
  return nativeJson.isRawJSON(value);
}

/**
 * A copy of a JSON tree with object keys in alphabetical order, recursively: agave builds `parsed`
 * account data as a `serde_json::Value`, whose maps are sorted, so nodes send it that way.
 */
export function sortKeysDeep<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortKeysDeep) as T;
  if (value === null || typeof value !== "object" || isRawJson(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeysDeep((value as Record<string, unknown>)[key]);
  return sorted as T;
}

/**
 * Serialises a JSON-RPC response to text, writing every `bigint` as a bare integer literal as agave
 * does for u64 fields; trees without bigints (all the account methods return) take the native fast
 * path. The implementation is the server's (`rpc/json.ts`); re-exported so there is one.
 */
export { stringifyJson as toJson, parseJson } from "../rpc/json.ts";
