/**
 * The DAS subset the localnet serves: getAsset, getAssets, getAssetsByGroup, getAssetsByOwner and getGrouping
 * (plus the reference's snake_case aliases), over an {@link AssetIndex}.
 *
 * Paging follows the reference: sorted by id (descending unless asked) with a keyset `cursor`
 * (the base58 of the last id served), or `page` (1-based offsets, any sort), or `before`/`after`
 * ids; `total` is the number of items in this page, as there. The group's size is what
 * `getGrouping` returns, and `options.showGrandTotal` (a Helius extension) adds `grand_total`.
 */
import { withNamedParams, type MethodTable } from "../rpc/protocol.ts";
import type { AssetIndex, AssetRecord } from "./asset-index.ts";
import { renderAsset } from "./asset-view.ts";
import {
  assertPubkey,
  dasError,
  decodeCursor,
  parseGetAsset,
  parseGetAssets,
  parseGetAssetsByGroup,
  parseGetAssetsByOwner,
  parseGetGrouping,
  validatePagination,
  type DisplayOptions,
  type GetAssetsByGroupParams,
} from "./das-params.ts";

/** The paging fields of getAssetsByGroup and getAssetsByOwner. */
type PageParams = Pick<GetAssetsByGroupParams, "sortBy" | "page" | "before" | "after" | "cursor">;

const latin1 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("latin1");

/** First index in an ascending array whose sortKey is > key (or >= key when `inclusive`). */
function bound(items: readonly AssetRecord[], key: string, inclusive: boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = items[mid].sortKey;
    if (k < key || (!inclusive && k === key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function slice(items: readonly AssetRecord[], start: number, count: number, descending: boolean): AssetRecord[] {
  const out: AssetRecord[] = [];
  if (!descending) {
    for (let i = start; i < items.length && out.length < count; i++) out.push(items[i]);
  } else {
    for (let i = items.length - 1 - start; i >= 0 && out.length < count; i--) out.push(items[i]);
  }
  return out;
}

/** Selects one page of `members` (ascending by id) as the reference's `paginate` would. */
function selectPage(
  members: readonly AssetRecord[],
  p: PageParams,
  mode: "cursor" | "page" | "keyset",
  limit: number,
): AssetRecord[] {
  const descending = p.sortBy.sortDirection === "desc";
  let ordered = members;
  if (p.sortBy.sortBy === "created" || p.sortBy.sortBy === "updated" || p.sortBy.sortBy === "recent_action") {
    const field = p.sortBy.sortBy === "created" ? "created" : "updated";
    ordered = [...members].sort((a, b) => a[field] - b[field] || (a.sortKey < b.sortKey ? -1 : 1));
  }
  if (mode === "page") return slice(ordered, (p.page! - 1) * limit, limit, descending);
  if (mode === "keyset") {
    const low = p.after === null ? 0 : bound(members, latin1(assertPubkey(p.after)), false);
    const high = p.before === null ? members.length : bound(members, latin1(assertPubkey(p.before)), true);
    return slice(members.slice(low, Math.max(low, high)), 0, limit, descending);
  }
  if (p.cursor === null || p.cursor === "") return slice(members, 0, limit, descending);
  const key = latin1(decodeCursor(p.cursor));
  if (!descending) return slice(members, bound(members, key, false), limit, false);
  const end = bound(members, key, true);
  return slice(members.slice(0, end), 0, limit, true);
}

function getAssetsByGroup(index: AssetIndex, params: unknown[]): Record<string, unknown> {
  const p = parseGetAssetsByGroup(params);
  const mode = validatePagination(p);
  const limit = p.limit ?? 1000;
  // Only collections are indexed; any other group key matches nothing, as in the reference.
  const members =
    p.groupKey === "collection" ? index.groupMembers(p.groupValue, p.options.showUnverifiedCollections) : [];
  const page = limit === 0 ? [] : selectPage(members, p, mode, limit);
  const result: Record<string, unknown> = { total: page.length, limit };
  if (p.options.showGrandTotal) result.grand_total = members.length;
  if (mode === "page") result.page = p.page;
  if (mode === "keyset") {
    if (p.before !== null) result.before = p.before;
    if (p.after !== null) result.after = p.after;
  }
  if (mode === "cursor" && page.length > 0) result.cursor = page[page.length - 1].id;
  result.items = page.map((record) => renderAsset(record, index, p.options));
  return result;
}

function getAssetsByOwner(index: AssetIndex, params: unknown[]): Record<string, unknown> {
  const p = parseGetAssetsByOwner(params);
  const mode = validatePagination(p);
  const limit = p.limit ?? 1000;
  const owned = index.ownedBy(p.ownerAddress);
  const page = limit === 0 ? [] : selectPage(owned, p, mode, limit);
  const result: Record<string, unknown> = { total: page.length, limit };
  if (p.options.showGrandTotal) result.grand_total = owned.length;
  if (mode === "page") result.page = p.page;
  if (mode === "keyset") {
    if (p.before !== null) result.before = p.before;
    if (p.after !== null) result.after = p.after;
  }
  if (mode === "cursor" && page.length > 0) result.cursor = page[page.length - 1].id;
  result.items = page.map((record) => renderAsset(record, index, p.options));
  return result;
}

function getAsset(index: AssetIndex, id: string, options: DisplayOptions): Record<string, unknown> {
  const record = index.get(id);
  if (record === undefined) throw dasError("Database Error: RecordNotFound Error: Asset Not Found");
  return renderAsset(record, index, options, false);
}

function getAssets(index: AssetIndex, params: unknown[]): (Record<string, unknown> | null)[] {
  const { ids, options } = parseGetAssets(params);
  // Unknown ids and assets without supply come back as null, in the order asked.
  return ids.map((id) => {
    const record = index.get(id);
    return record === undefined || (record.mint !== null && record.mint.supply === 0n)
      ? null
      : renderAsset(record, index, options, false);
  });
}

function getGrouping(index: AssetIndex, params: unknown[]): Record<string, unknown> {
  const { groupKey, groupValue } = parseGetGrouping(params);
  const size = groupKey === "collection" ? index.groupSize(groupValue) : 0;
  // The reference answers the group value as `group_name`.
  return { group_key: groupKey, group_name: groupValue, group_size: size };
}

/** Creates the DAS method table (camelCase names and the reference's snake_case aliases). */
export function createDasMethods(index: AssetIndex): MethodTable {
  // DAS clients send named params (an object); positional params are accepted too.
  const table: MethodTable = {
    getAsset: withNamedParams((params) => {
      const p = parseGetAsset(params);
      return getAsset(index, p.id, p.options);
    }),
    getAssets: withNamedParams((params) => getAssets(index, params)),
    getAssetsByGroup: withNamedParams((params) => getAssetsByGroup(index, params)),
    getAssetsByOwner: withNamedParams((params) => getAssetsByOwner(index, params)),
    getGrouping: withNamedParams((params) => getGrouping(index, params)),
  };
  return {
    ...table,
    get_asset: table.getAsset,
    get_assets: table.getAssets,
    get_assets_by_group: table.getAssetsByGroup,
    get_assets_by_owner: table.getAssetsByOwner,
    get_grouping: table.getGrouping,
  };
}
