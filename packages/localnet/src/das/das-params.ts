/**
 * Parameter parsing and errors for the DAS methods, as the reference implementation gives them:
 * serde failures (unknown field, wrong type) are `-32602 Invalid params`; its `DasApiError`s
 * (bad pubkey, pagination, cursor, limit) are jsonrpsee call errors, `-32000` with the error's
 * text as the message. Named (object) and positional params are both accepted, as there.
 */
import bs58 from "bs58";
import { JsonRpcError, RpcErrorCode } from "../rpc/protocol.ts";

/** jsonrpsee's CALL_EXECUTION_FAILED_CODE, which every DasApiError becomes. */
export const DAS_ERROR_CODE = -32000;

/** A DasApiError as the reference words it. */
export function dasError(message: string): JsonRpcError {
  return new JsonRpcError(DAS_ERROR_CODE, message);
}

function paramsError(detail: string): JsonRpcError {
  return new JsonRpcError(RpcErrorCode.INVALID_PARAMS, "Invalid params", detail);
}

/** `displayOptions` / `options`. */
export interface DisplayOptions {
  showUnverifiedCollections: boolean;
  showCollectionMetadata: boolean;
  showZeroBalance: boolean;
  showInscription: boolean;
  showFungible: boolean;
  /** Helius extension: add `grand_total`, the number of matching assets, to list responses. */
  showGrandTotal: boolean;
}

const OPTION_FIELDS = [
  "showUnverifiedCollections",
  "showCollectionMetadata",
  "showZeroBalance",
  "showInscription",
  "showFungible",
  "showGrandTotal",
] as const;

export type SortBy = "id" | "created" | "updated" | "recent_action" | "none";
export interface Sorting {
  sortBy: SortBy;
  sortDirection: "asc" | "desc";
}

export interface GetAssetParams {
  id: string;
  options: DisplayOptions;
}

export interface GetAssetsByGroupParams {
  groupKey: string;
  groupValue: string;
  sortBy: Sorting;
  limit: number | null;
  page: number | null;
  before: string | null;
  after: string | null;
  cursor: string | null;
  options: DisplayOptions;
}

type Raw = Record<string, unknown>;

/** Named params arrive as one object; positional ones map onto the struct's fields in order. */
function toNamed(params: unknown[], fields: readonly string[]): Raw {
  if (params.length === 1 && typeof params[0] === "object" && params[0] !== null && !Array.isArray(params[0])) {
    return params[0] as Raw;
  }
  if (params.length > fields.length)
    throw paramsError(`invalid length ${params.length}, expected at most ${fields.length} elements`);
  const named: Raw = {};
  params.forEach((value, i) => {
    if (value !== null && value !== undefined) named[fields[i]] = value;
  });
  return named;
}

function denyUnknown(raw: Raw, fields: readonly string[], aliases: readonly string[] = []): void {
  for (const key of Object.keys(raw)) {
    if (!fields.includes(key) && !aliases.includes(key)) {
      throw paramsError(`unknown field \`${key}\`, expected one of ${fields.map((f) => `\`${f}\``).join(", ")}`);
    }
  }
}

function stringField(raw: Raw, name: string, required: true): string;
function stringField(raw: Raw, name: string, required: false): string | null;
function stringField(raw: Raw, name: string, required: boolean): string | null {
  const value = raw[name];
  if (value === undefined || value === null) {
    if (required) throw paramsError(`missing field \`${name}\``);
    return null;
  }
  if (typeof value !== "string") throw paramsError(`invalid type for \`${name}\`: expected a string`);
  return value;
}

function u32Field(raw: Raw, name: string): number | null {
  const value = raw[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 0xffff_ffff) {
    throw paramsError(`invalid value for \`${name}\`: expected u32`);
  }
  return value;
}

function parseOptions(raw: Raw): DisplayOptions {
  // `displayOptions` is the reference's serde alias of `options`.
  const value = raw.options ?? raw.displayOptions;
  const options: DisplayOptions = {
    showUnverifiedCollections: false,
    showCollectionMetadata: false,
    showZeroBalance: false,
    showInscription: false,
    showFungible: false,
    showGrandTotal: false,
  };
  if (value === undefined || value === null) return options;
  if (typeof value !== "object" || Array.isArray(value))
    throw paramsError("invalid type for `options`: expected struct Options");
  denyUnknown(value as Raw, OPTION_FIELDS);
  for (const field of OPTION_FIELDS) {
    const flag = (value as Raw)[field];
    if (flag === undefined || flag === null) continue;
    if (typeof flag !== "boolean") throw paramsError(`invalid type for \`${field}\`: expected a boolean`);
    options[field] = flag;
  }
  return options;
}

function parseSorting(raw: Raw): Sorting {
  const value = raw.sortBy;
  if (value === undefined || value === null) return { sortBy: "id", sortDirection: "desc" };
  if (typeof value !== "object" || Array.isArray(value))
    throw paramsError("invalid type for `sortBy`: expected struct AssetSorting");
  denyUnknown(value as Raw, ["sortBy", "sortDirection"]);
  const { sortBy, sortDirection } = value as Raw;
  if (!["id", "created", "updated", "recent_action", "none"].includes(sortBy as string)) {
    throw paramsError(
      "unknown variant for `sortBy`, expected one of `id`, `created`, `updated`, `recent_action`, `none`",
    );
  }
  if (sortDirection !== undefined && sortDirection !== null && sortDirection !== "asc" && sortDirection !== "desc") {
    throw paramsError("unknown variant for `sortDirection`, expected `asc` or `desc`");
  }
  return { sortBy: sortBy as SortBy, sortDirection: (sortDirection as "asc" | "desc" | null | undefined) ?? "desc" };
}

/** Pubkey::from_str: base58 of exactly 32 bytes. */
export function assertPubkey(value: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = value.length > 44 ? new Uint8Array(0) : bs58.decode(value);
  } catch {
    bytes = new Uint8Array(0);
  }
  if (bytes.length !== 32) throw dasError(`Pubkey Validation Err: ${value} is invalid`);
  return bytes;
}

const GET_ASSET_FIELDS = ["id", "options"] as const;

export function parseGetAsset(params: unknown[]): GetAssetParams {
  const raw = toNamed(params, GET_ASSET_FIELDS);
  denyUnknown(raw, GET_ASSET_FIELDS, ["displayOptions"]);
  const id = stringField(raw, "id", true);
  const options = parseOptions(raw);
  assertPubkey(id);
  return { id, options };
}

export interface GetAssetsByOwnerParams extends Omit<GetAssetsByGroupParams, "groupKey" | "groupValue"> {
  ownerAddress: string;
}

/** The reference's field order for positional params. */
const OWNER_FIELDS = ["ownerAddress", "sortBy", "limit", "page", "before", "after", "options", "cursor"] as const;

export function parseGetAssetsByOwner(params: unknown[]): GetAssetsByOwnerParams {
  const raw = toNamed(params, OWNER_FIELDS);
  denyUnknown(raw, OWNER_FIELDS, ["displayOptions"]);
  const parsed: GetAssetsByOwnerParams = {
    ownerAddress: stringField(raw, "ownerAddress", true),
    sortBy: parseSorting(raw),
    limit: u32Field(raw, "limit"),
    page: u32Field(raw, "page"),
    before: stringField(raw, "before", false) || null,
    after: stringField(raw, "after", false) || null,
    cursor: stringField(raw, "cursor", false),
    options: parseOptions(raw),
  };
  assertPubkey(parsed.ownerAddress);
  return parsed;
}

const GROUP_FIELDS = [
  "groupKey",
  "groupValue",
  "sortBy",
  "limit",
  "page",
  "before",
  "after",
  "options",
  "cursor",
] as const;

export function parseGetAssetsByGroup(params: unknown[]): GetAssetsByGroupParams {
  const raw = toNamed(params, GROUP_FIELDS);
  denyUnknown(raw, GROUP_FIELDS, ["displayOptions"]);
  const parsed: GetAssetsByGroupParams = {
    groupKey: stringField(raw, "groupKey", true),
    groupValue: stringField(raw, "groupValue", true),
    sortBy: parseSorting(raw),
    limit: u32Field(raw, "limit"),
    page: u32Field(raw, "page"),
    before: stringField(raw, "before", false) || null,
    after: stringField(raw, "after", false) || null,
    cursor: stringField(raw, "cursor", false),
    options: parseOptions(raw),
  };
  assertPubkey(parsed.groupValue);
  return parsed;
}

/** The reference's `validate_pagination`, in its order. */
export function validatePagination(
  p: Pick<GetAssetsByGroupParams, "limit" | "page" | "before" | "after" | "cursor" | "sortBy">,
): "cursor" | "page" | "keyset" {
  if (p.limit !== null && p.limit > 1000) throw dasError("Pagination Error. Limit should not be greater than 1000.");
  const sortedById = p.sortBy.sortBy === "id";
  if (p.page !== null) {
    if (p.page === 0) throw dasError("Pagination Error. No Pagination Method Selected");
    if (p.before !== null || p.after !== null || p.cursor !== null) {
      throw dasError("Pagination Error. Only one pagination parameter supported per query.");
    }
    return "page";
  }
  for (const key of [p.before, p.after]) {
    if (key === null) continue;
    if (p.cursor !== null) throw dasError("Pagination Error. Only one pagination parameter supported per query.");
    if (!sortedById) {
      throw dasError("Pagination Sorting Error. Only sorting based on id is supported for this pagination option.");
    }
    assertPubkey(key);
  }
  if (p.before !== null || p.after !== null) return "keyset";
  if (!sortedById) {
    throw dasError("Pagination Sorting Error. Only sorting based on id is supported for this pagination option.");
  }
  if (p.cursor !== null) decodeCursor(p.cursor);
  return "cursor";
}

/** A cursor is the base58 of the last id of the previous page; any base58 is accepted, as there. */
export function decodeCursor(cursor: string): Uint8Array {
  // Base58 decoding is quadratic: a 50 kB "cursor" would stall the process. Real ones are ids (<= 44 chars).
  if (cursor.length > 88) throw dasError(`Cursor Validation Err: ${cursor.slice(0, 88)}… is invalid`);
  try {
    return bs58.decode(cursor);
  } catch {
    throw dasError(`Cursor Validation Err: ${cursor} is invalid`);
  }
}

export interface GetAssetsParams {
  ids: string[];
  options: DisplayOptions;
}

const GET_ASSETS_FIELDS = ["ids", "options"] as const;

/** getAssets: ids (consecutive duplicates dropped, as the reference's `dedup`), at most 1,000. */
export function parseGetAssets(params: unknown[]): GetAssetsParams {
  const raw = toNamed(params, GET_ASSETS_FIELDS);
  denyUnknown(raw, GET_ASSETS_FIELDS, ["displayOptions"]);
  const ids = raw.ids;
  if (ids === undefined || ids === null) throw paramsError("missing field `ids`");
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== "string"))
    throw paramsError("invalid type for `ids`: expected a sequence of strings");
  const options = parseOptions(raw);
  const unique = (ids as string[]).filter((id, i) => i === 0 || id !== ids[i - 1]);
  if (unique.length > 1000) throw dasError("Batch Size Error. Batch size should not be greater than 1000.");
  for (const id of unique) assertPubkey(id);
  return { ids: unique, options };
}

export interface GetGroupingParams {
  groupKey: string;
  groupValue: string;
}

const GET_GROUPING_FIELDS = ["groupKey", "groupValue"] as const;

export function parseGetGrouping(params: unknown[]): GetGroupingParams {
  const raw = toNamed(params, GET_GROUPING_FIELDS);
  denyUnknown(raw, GET_GROUPING_FIELDS);
  return { groupKey: stringField(raw, "groupKey", true), groupValue: stringField(raw, "groupValue", true) };
}
