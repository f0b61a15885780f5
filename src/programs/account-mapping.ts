/**
 * Turning accounts as a node returns them (base64, or jsonParsed) into Solgate's account data, the
 * one decoding that program-account items and account lookups share: token accounts into their own
 * typed shape; anything else the node parses (mints with their extensions, nonces, lookup tables,
 * the upgradeable loader's accounts, stake, vote, sysvars) as the node's own `{type, info}`; Token
 * Metadata accounts, which nodes do not parse, by Solgate's decoder; everything else as base64.
 */
import { decodeCollectionMetadata } from "../collections/token-metadata.ts";
import { TOKEN_METADATA_PROGRAM } from "../solana/program-ids.ts";
import type { TokenProgramName } from "./token-programs.ts";

/** An SPL token amount. */
export interface TokenAmount {
  /** Base units (u64). */
  raw: bigint;
  decimals: number;
  /** raw / 10^decimals as a float, for display. */
  ui: number;
  /** raw / 10^decimals, exact. */
  uiString: string;
}

/** The decoded fields of an SPL token account. */
export interface TokenAccountInfo {
  mint: string;
  owner: string;
  tokenAmount: TokenAmount;
  /** `initialized` or `frozen`. */
  state: string;
}

/** A JSON value as a node's jsonParsed gives it (integers past 2^53 as decimal strings). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** An account's data: typed for token accounts, the decoder's own fields for other known layouts, raw otherwise. */
export type AccountData =
  | { format: "parsed"; program: TokenProgramName; parsed: { type: "account"; info: TokenAccountInfo } }
  | { format: "parsed"; program: string; parsed: { type: string; fields: { [key: string]: JsonValue } } }
  | { format: "base64"; base64: string };

/** One account on a page. */
export interface ProgramAccountItem {
  address: string;
  lamports: bigint;
  /** lamports / 1e9, for display. */
  sol: number;
  space: bigint;
  data: AccountData;
}

/** An account as kit returns it from getMultipleAccounts (base64 or jsonParsed encoding). */
export interface RpcAccount {
  lamports: bigint;
  owner: string;
  space?: bigint;
  data: readonly [string, string] | { program: string; parsed: unknown; space?: bigint | number };
}

/** The token-account fields of `data`; undefined for any other data. */
export function tokenAccountInfo(data: AccountData): TokenAccountInfo | undefined {
  return data.format === "parsed" && "info" in data.parsed ? data.parsed.info : undefined;
}

/** The page item for `account`. */
export function toProgramAccountItem(address: string, account: RpcAccount): ProgramAccountItem {
  const lamports = BigInt(account.lamports);
  return { address, lamports, sol: lamportsToSol(lamports), space: spaceOf(account), data: toAccountData(account) };
}

/** The size of an account's data, from the node's `space` or the data itself. */
export function spaceOf(account: RpcAccount): bigint {
  const data = account.data;
  const space = account.space ?? (isBase64Data(data) ? undefined : data.space);
  if (space !== undefined) return BigInt(space);
  return isBase64Data(data) ? BigInt(Buffer.byteLength(data[0], "base64")) : 0n;
}

/** An account's data as Solgate gives it (see the top of this file). */
export function toAccountData(account: RpcAccount): AccountData {
  const data = account.data;
  if (isBase64Data(data)) {
    if (account.owner === TOKEN_METADATA_PROGRAM) return toMetadata(data[0]) ?? { format: "base64", base64: data[0] };
    return { format: "base64", base64: data[0] };
  }
  const token = toTokenAccount(data);
  if (token !== undefined) return token;
  const parsed = data.parsed as { type?: unknown; info?: unknown } | null;
  const type = typeof parsed?.type === "string" ? parsed.type : "unknown";
  const info = toJson(parsed?.info ?? {});
  return {
    format: "parsed",
    program: data.program,
    parsed: { type, fields: isJsonObject(info) ? info : { value: info } },
  };
}

/** Token Metadata's MetadataV1 as Solgate decodes it; undefined for any other account of the program. */
function toMetadata(base64: string): AccountData | undefined {
  const decoded = decodeCollectionMetadata(Buffer.from(base64, "base64"));
  if (decoded === null) return undefined;
  const fields: { [key: string]: JsonValue } = {
    mint: decoded.mint,
    updateAuthority: decoded.updateAuthority,
    name: decoded.name,
    symbol: decoded.symbol,
    uri: decoded.uri,
    tokenStandard:
      decoded.tokenStandard === null ? null : (TOKEN_STANDARDS[decoded.tokenStandard] ?? decoded.tokenStandard),
    collection: decoded.collection,
  };
  if (decoded.collectionDetails !== null) {
    fields.collectionDetails =
      decoded.collectionDetails.kind === "V1"
        ? { kind: "V1", size: jsonInteger(decoded.collectionDetails.size) }
        : { kind: "V2" };
  }
  return { format: "parsed", program: "token-metadata", parsed: { type: "metadata", fields } };
}

/** Token Metadata's `TokenStandard` by its number. */
const TOKEN_STANDARDS = [
  "NonFungible",
  "FungibleAsset",
  "Fungible",
  "NonFungibleEdition",
  "ProgrammableNonFungible",
  "ProgrammableNonFungibleEdition",
];

/**
 * A parsed value from kit (which reads every JSON integer as a bigint) back to plain JSON: integers
 * within 2^53 as numbers, larger ones as decimal strings, so nothing is rounded.
 */
function toJson(value: unknown): JsonValue {
  if (typeof value === "bigint") return jsonInteger(value);
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (Array.isArray(value)) return value.map(toJson);
  if (typeof value === "object") {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toJson(v);
    return out;
  }
  return String(value);
}

function jsonInteger(value: bigint): number | string {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : value.toString();
}

function isJsonObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** SOL as a float without going through a Number of the whole lamport count (which may exceed 2^53). */
export function lamportsToSol(lamports: bigint): number {
  return Number(lamports / 1_000_000_000n) + Number(lamports % 1_000_000_000n) / 1e9;
}

function isBase64Data(data: RpcAccount["data"]): data is readonly [string, string] {
  return Array.isArray(data) && data[1] === "base64";
}

/** A node's jsonParsed token account -> the contract's shape; undefined for any other parsed type. */
function toTokenAccount(data: {
  program: string;
  parsed: unknown;
}): Extract<AccountData, { parsed: { type: "account" } }> | undefined {
  if (data.program !== "spl-token" && data.program !== "spl-token-2022") return undefined;
  const parsed = data.parsed as { type?: unknown; info?: Record<string, unknown> } | null;
  if (parsed?.type !== "account" || typeof parsed.info !== "object" || parsed.info === null) return undefined;
  const info = parsed.info;
  const amount = info.tokenAmount as
    | { amount?: unknown; decimals?: unknown; uiAmount?: unknown; uiAmountString?: unknown }
    | undefined;
  if (typeof info.mint !== "string" || typeof info.owner !== "string" || amount === undefined) return undefined;
  const raw = BigInt(amount.amount as string | bigint);
  const decimals = Number(amount.decimals);
  const uiString = typeof amount.uiAmountString === "string" ? amount.uiAmountString : formatUnits(raw, decimals);
  // Nodes send uiAmount as a float; kit turns whole-number JSON into bigint, and older nodes send null.
  const ui = amount.uiAmount === null || amount.uiAmount === undefined ? Number(uiString) : Number(amount.uiAmount);
  return {
    format: "parsed",
    program: data.program,
    parsed: {
      type: "account",
      info: {
        mint: info.mint,
        owner: info.owner,
        tokenAmount: { raw, decimals, ui, uiString },
        state: typeof info.state === "string" ? info.state : "initialized",
      },
    },
  };
}

/**
 * raw / 10^decimals as an exact decimal string without trailing zeros, as nodes write uiAmountString.
 * Works on the digits of `raw` (a holder page formats 1,000 amounts; bigint division and a regex cost
 * 3x more).
 */
export function formatUnits(raw: bigint, decimals: number): string {
  const digits = raw.toString();
  if (decimals === 0) return digits;
  if (raw < 0n) return `-${formatUnits(-raw, decimals)}`;
  const point = digits.length - decimals;
  const whole = point > 0 ? digits.slice(0, point) : "0";
  const fraction = point > 0 ? digits.slice(point) : "0".repeat(-point) + digits;
  let end = fraction.length;
  while (end > 0 && fraction.charCodeAt(end - 1) === 48 /* "0" */) end--;
  return end === 0 ? whole : `${whole}.${fraction.slice(0, end)}`;
}
