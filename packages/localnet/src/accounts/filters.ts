/**
 * getProgramAccounts filters as agave takes them: decoded like `RpcFilterType` (serde), verified
 * like `verify_filters` (at most 4; memcmp bytes at most 128 after decoding, base58 text at most 175
 * and base64 text at most 172 characters), AND-ed when matching. Also agave's
 * `get_spl_token_{owner,mint}_filter`, which decide when a token scan may use the owner/mint index.
 */
import { invalidParams } from "../rpc/protocol.ts";
import { Base58DecodeError, decodeBase58 } from "./base58.ts";
import { Base64DecodeError, decodeBase64Strict } from "./base64.ts";
import { expectObject, expectUnsigned, expectVariant, invalidType, optional, SerdeError } from "./params.ts";
import { TOKEN_2022_PROGRAM, isTokenProgram } from "./program-ids.ts";
import { isValidTokenAccountData, TOKEN_ACCOUNT_LENGTH } from "./token-layout.ts";

/** A filter as requested, before verification. */
export type RequestedFilter =
  | { readonly kind: "dataSize"; readonly size: number }
  | { readonly kind: "memcmp"; readonly offset: number; readonly bytes: EncodedBytes }
  | { readonly kind: "tokenAccountState" };

type EncodedBytes =
  | { readonly encoding: "base58" | "base64"; readonly text: string }
  | { readonly encoding: "bytes"; readonly raw: readonly number[] };

/** A verified filter, memcmp bytes decoded. */
export type Filter =
  | { readonly kind: "dataSize"; readonly size: number }
  | { readonly kind: "memcmp"; readonly offset: number; readonly bytes: Uint8Array }
  | { readonly kind: "tokenAccountState" };

const MAX_FILTERS = 4;
const MAX_DATA_SIZE = 128;
const MAX_DATA_BASE58_SIZE = 175;
const MAX_DATA_BASE64_SIZE = 172;
const FILTER_VARIANTS = ["dataSize", "memcmp", "tokenAccountState"] as const;
const MEMCMP_ENCODINGS = ["base58", "base64", "bytes"] as const;

function decodeMemcmp(value: unknown): RequestedFilter {
  const memcmp = expectObject(value, "Memcmp");
  if (memcmp.offset === undefined) throw new SerdeError("missing field `offset`");
  if (memcmp.bytes === undefined) throw new SerdeError("missing field `bytes`");
  const offset = expectUnsigned(memcmp.offset, "usize");
  const encoding = optional(memcmp.encoding, (v) => expectVariant(v, MEMCMP_ENCODINGS)) ?? "base58";
  const bytes = memcmp.bytes;
  if (typeof bytes === "string") {
    // An encoded string with `encoding: "bytes"` is base58, as agave's deserializer decides.
    return { kind: "memcmp", offset, bytes: { encoding: encoding === "base64" ? "base64" : "base58", text: bytes } };
  }
  if (Array.isArray(bytes) && bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    return { kind: "memcmp", offset, bytes: { encoding: "bytes", raw: bytes as number[] } };
  }
  throw new SerdeError("data did not match any variant of untagged enum DataType");
}

/** Decodes one `RpcFilterType` (externally tagged: `{"memcmp": {...}}`, `"tokenAccountState"`). */
function decodeFilter(value: unknown): RequestedFilter {
  if (typeof value === "string") {
    const variant = expectVariant(value, FILTER_VARIANTS);
    if (variant === "tokenAccountState") return { kind: "tokenAccountState" };
    throw invalidType(value, variant === "dataSize" ? "u64" : "struct Memcmp");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalidType(value, "string or map");
  const keys = Object.keys(value);
  if (keys.length !== 1) throw new SerdeError("invalid value: map, expected map with a single key");
  const variant = expectVariant(keys[0], FILTER_VARIANTS);
  const inner = (value as Record<string, unknown>)[variant];
  switch (variant) {
    case "dataSize":
      return { kind: "dataSize", size: expectUnsigned(inner, "u64") };
    case "memcmp":
      return decodeMemcmp(inner);
    case "tokenAccountState":
      if (inner !== null) throw invalidType(inner, "unit variant");
      return { kind: "tokenAccountState" };
  }
}

/** Decodes the `filters` array of a config (serde stage; verification comes later, as in agave). */
export function decodeFilters(value: unknown): RequestedFilter[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidType(value, "a sequence");
  return value.map(decodeFilter);
}

function dataTooLarge(): Error {
  return invalidParams("Invalid param: DataTooLarge");
}

function decodeVerified(bytes: EncodedBytes): Uint8Array {
  if (bytes.encoding === "bytes") {
    if (bytes.raw.length > MAX_DATA_SIZE) throw dataTooLarge();
    return Uint8Array.from(bytes.raw);
  }
  const limit = bytes.encoding === "base58" ? MAX_DATA_BASE58_SIZE : MAX_DATA_BASE64_SIZE;
  if (Buffer.byteLength(bytes.text, "utf8") > limit) throw dataTooLarge();
  let decoded: Uint8Array;
  try {
    decoded = bytes.encoding === "base58" ? decodeBase58(bytes.text) : decodeBase64Strict(bytes.text);
  } catch (error) {
    if (error instanceof Base58DecodeError) throw invalidParams(`Invalid param: Base58DecodeError(${error.message})`);
    if (error instanceof Base64DecodeError) throw invalidParams(`Invalid param: Base64DecodeError(${error.message})`);
    throw error;
  }
  if (decoded.length > MAX_DATA_SIZE) throw dataTooLarge();
  return decoded;
}

/** agave's `verify_filters`: at most 4, each memcmp decodable and at most 128 bytes. */
export function verifyFilters(filters: readonly RequestedFilter[]): Filter[] {
  if (filters.length > MAX_FILTERS) throw invalidParams(`Too many filters provided; max ${MAX_FILTERS}`);
  return filters.map((filter) =>
    filter.kind === "memcmp" ? { kind: "memcmp", offset: filter.offset, bytes: decodeVerified(filter.bytes) } : filter,
  );
}

function memcmpMatches(data: Uint8Array, offset: number, bytes: Uint8Array): boolean {
  if (offset > data.length || data.length - offset < bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (data[offset + i] !== bytes[i]) return false;
  return true;
}

/** Whether account data passes every filter (agave's `filter_allows`, AND-ed). */
export function filtersAllow(filters: readonly Filter[], data: Uint8Array): boolean {
  for (const filter of filters) {
    if (filter.kind === "dataSize") {
      if (data.length !== filter.size) return false;
    } else if (filter.kind === "memcmp") {
      if (!memcmpMatches(data, filter.offset, filter.bytes)) return false;
    } else if (!isValidTokenAccountData(data)) {
      return false;
    }
  }
  return true;
}

/**
 * agave's `get_spl_token_owner_filter` (offset 32) and `get_spl_token_mint_filter` (offset 0): the
 * 32-byte key to scan a token program's owner/mint index with, when the filters confine the scan
 * to token accounts (dataSize 165, Token-2022 account-type byte, or tokenAccountState). A memcmp at
 * that offset whose bytes are not 32 long is refused, as agave 4.4 does (the owner check runs first,
 * the mint check only when it found no owner key).
 */
export function tokenIndexKey(program: string, filters: readonly Filter[], keyOffset: 0 | 32): Uint8Array | null {
  if (!isTokenProgram(program)) return null;
  let dataSize: number | undefined;
  let accountTypeByte: Uint8Array | undefined;
  let key: Uint8Array | null = null;
  let tokenAccountState = false;
  for (const filter of filters) {
    if (filter.kind === "dataSize") dataSize = filter.size;
    else if (filter.kind === "tokenAccountState") tokenAccountState = true;
    else if (filter.offset === TOKEN_ACCOUNT_LENGTH && program === TOKEN_2022_PROGRAM) accountTypeByte = filter.bytes;
    else if (filter.offset === keyOffset) {
      // agave 4.4 refuses a key of the wrong length here (3.0 only logged it and scanned the program).
      if (filter.bytes.length !== 32) {
        throw invalidParams(
          `Incorrect byte length ${filter.bytes.length} for SPL token ${keyOffset === 32 ? "owner" : "mint"} filter, expected 32`,
        );
      }
      key = filter.bytes;
    }
  }
  const confined =
    dataSize === TOKEN_ACCOUNT_LENGTH ||
    (accountTypeByte?.length === 1 && accountTypeByte[0] === 2) ||
    tokenAccountState;
  return confined ? key : null;
}
