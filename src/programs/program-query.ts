/**
 * Validating and normalising a program-account query: what the caller may ask, turned into the
 * filters getProgramAccounts takes and into a hash that names the query in cursors and the cache.
 */
import { createHash } from "node:crypto";
import { getBase58Codec, isAddress } from "@solana/kit";
import type {
  Address,
  Base58EncodedBytes,
  GetProgramAccountsDatasizeFilter,
  GetProgramAccountsMemcmpFilter,
} from "@solana/kit";
import { SolgateError } from "../errors.ts";

/** One page's worth of a query, as the caller gives it. */
export interface ProgramAccountsQuery {
  /** The program's address (base58). */
  programId: string;
  /** Only accounts whose data is exactly this many bytes. */
  size?: bigint;
  /** Only accounts holding these bytes at this offset, each `offset:base58`; all must match. */
  match?: readonly string[];
  /** Accounts per page, 1-500; undefined or 0 means 100. */
  limit?: number;
  /** `nextCursor` of the previous page; empty or undefined for the first. */
  cursor?: string;
}

/** A query once validated; two queries that select the same accounts normalise to the same value. */
export interface NormalizedQuery {
  programId: Address;
  size: bigint | undefined;
  /** Sorted by offset, then bytes; duplicates removed. */
  matches: readonly { offset: number; bytes: string }[];
  limit: number;
  /** Names the account set (not the page size): cursors carry it, the key cache is keyed by it. */
  hash: Buffer;
}

/** Largest account data size Solana allows (10 MiB). */
export const MAX_ACCOUNT_SIZE = 10 * 1024 * 1024;
/** getProgramAccounts takes at most this many filters, size and matches together. */
export const MAX_FILTERS = 4;
/** A memcmp filter's bytes decode to at most this many bytes. */
export const MAX_MATCH_BYTES = 128;
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;

const base58 = getBase58Codec();
/** Bumped when the meaning of a hash changes, so old cursors are refused instead of misread. */
const QUERY_HASH_VERSION = "solgate.programs.v1";

/** Validates `query` and normalises it. Throws SolgateError INVALID_ADDRESS or INVALID_PARAMETER (with `field`). */
export function normalizeQuery(query: ProgramAccountsQuery): NormalizedQuery {
  const programId = query.programId;
  if (typeof programId !== "string" || !isAddress(programId)) {
    throw new SolgateError(
      "INVALID_ADDRESS",
      `programId must be a base58 address of 32 bytes, got ${quote(programId)}`,
      { field: "programId" },
    );
  }

  const size = query.size;
  if (size !== undefined && (size < 0n || size > BigInt(MAX_ACCOUNT_SIZE))) {
    throw invalid("size", `size must be 0-${MAX_ACCOUNT_SIZE} bytes, got ${size}`);
  }

  const seen = new Set<string>();
  const matches: { offset: number; bytes: string }[] = [];
  for (const [index, raw] of (query.match ?? []).entries()) {
    const parsed = parseMatch(raw, index);
    const key = `${parsed.offset}:${parsed.bytes}`;
    if (!seen.has(key)) {
      seen.add(key);
      matches.push(parsed);
    }
  }
  const filterCount = matches.length + (size === undefined ? 0 : 1);
  if (filterCount > MAX_FILTERS) {
    throw invalid(
      "match",
      `at most ${MAX_FILTERS} filters are allowed (size and matches together), got ${filterCount}`,
    );
  }
  matches.sort((a, b) => a.offset - b.offset || (a.bytes < b.bytes ? -1 : a.bytes > b.bytes ? 1 : 0));

  const limit = query.limit === undefined || query.limit === 0 ? DEFAULT_LIMIT : query.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw invalid("limit", `limit must be 1-${MAX_LIMIT} (0 means ${DEFAULT_LIMIT}), got ${query.limit}`);
  }

  const hash = createHash("sha256")
    .update(
      JSON.stringify([
        QUERY_HASH_VERSION,
        programId,
        size?.toString() ?? null,
        matches.map((m) => [m.offset, m.bytes]),
      ]),
    )
    .digest()
    .subarray(0, 16);
  return { programId, size, matches, limit, hash };
}

/** Whether the query narrows the program's accounts at all. */
export function isFiltered(query: NormalizedQuery): boolean {
  return query.size !== undefined || query.matches.length > 0;
}

/** The query as getProgramAccounts filters. */
export function toRpcFilters(
  query: NormalizedQuery,
): (GetProgramAccountsDatasizeFilter | GetProgramAccountsMemcmpFilter)[] {
  const filters: (GetProgramAccountsDatasizeFilter | GetProgramAccountsMemcmpFilter)[] = [];
  if (query.size !== undefined) filters.push({ dataSize: query.size });
  for (const m of query.matches) {
    filters.push({ memcmp: { offset: BigInt(m.offset), bytes: m.bytes as Base58EncodedBytes, encoding: "base58" } });
  }
  return filters;
}

/** `offset:base58` -> offset and canonical base58 (re-encoded, so equal bytes hash equally). */
function parseMatch(raw: unknown, index: number): { offset: number; bytes: string } {
  const field = `match[${index}]`;
  const invalid = (message: string) => new SolgateError("INVALID_PARAMETER", message, { field: "match", index });
  if (typeof raw !== "string") throw invalid(`${field} must be a string written offset:base58`);
  const colon = raw.indexOf(":");
  if (colon < 0) throw invalid(`${field} must be written offset:base58, got ${quote(raw)}`);
  const offsetText = raw.slice(0, colon);
  const bytesText = raw.slice(colon + 1);
  if (!/^\d{1,8}$/.test(offsetText) || Number(offsetText) > MAX_ACCOUNT_SIZE) {
    throw invalid(`${field}: offset must be an integer 0-${MAX_ACCOUNT_SIZE}, got ${quote(offsetText)}`);
  }
  if (bytesText.length === 0) throw invalid(`${field}: the bytes after the colon are empty`);
  // 128 bytes are at most 175 base58 characters: refuse longer input before decoding it.
  if (bytesText.length > 176) throw invalid(`${field}: the bytes must decode to at most ${MAX_MATCH_BYTES} bytes`);
  let bytes: Uint8Array;
  try {
    bytes = base58.encode(bytesText) as Uint8Array;
  } catch {
    throw invalid(`${field}: ${quote(bytesText)} is not base58`);
  }
  if (bytes.length > MAX_MATCH_BYTES) {
    throw invalid(`${field}: the bytes must decode to at most ${MAX_MATCH_BYTES} bytes, got ${bytes.length}`);
  }
  return { offset: Number(offsetText), bytes: base58.decode(bytes) };
}

function invalid(field: string, message: string): SolgateError {
  return new SolgateError("INVALID_PARAMETER", message, { field });
}

/** Echoes untrusted input in a message, bounded. */
function quote(value: unknown): string {
  const text = typeof value === "string" ? value : String(value);
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}...` : text);
}
