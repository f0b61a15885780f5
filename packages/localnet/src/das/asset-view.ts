/**
 * Renders an indexed asset as the DAS reference implementation (metaplex-foundation/
 * digital-asset-rpc-infrastructure, `asset_to_rpc`) does: same fields, same order, same defaults.
 *
 * The localnet fetches no off-chain JSON. For assets the world generated, the JSON it would serve
 * is known and fills `links`/`files`/`description`/`attributes`; for others (the real mainnet
 * fixtures) those stay empty, as in the reference before its JSON download task has run.
 */
import bs58 from "bs58";
import { TOKEN_PROGRAM } from "../world/program-ids.ts";
import { tokenStandardName, trimNul, USE_METHODS } from "../world/token-metadata.ts";
import { isBurnt, isSingleOwner, type AssetIndex, type AssetRecord } from "./asset-index.ts";
import type { DisplayOptions } from "./das-params.ts";

type Json = Record<string, unknown>;

/** DAS `interface` from the token standard (the reference's specification_asset_class mapping). */
export function interfaceOf(record: AssetRecord): string {
  switch (tokenStandardName(record.metadata.tokenStandard)) {
    case "NonFungible":
    case "NonFungibleEdition":
      return "V1_NFT";
    case "ProgrammableNonFungible":
    case "ProgrammableNonFungibleEdition":
      return "ProgrammableNFT";
    case "FungibleAsset":
      return "FungibleAsset";
    case "Fungible":
      return "FungibleToken";
    default:
      // No standard: the reference calls a mint with supply > 1 fungible, anything else unknown.
      return record.mint !== null && record.mint.supply > 1n ? "FungibleToken" : "Custom";
  }
}

/** `sanitize` of the reference's chain data: NULs stripped, whitespace trimmed. */
const clean = (value: string): string => trimNul(value).replace(/\0/gu, "").trim();

function content(record: AssetRecord, index: AssetIndex): Json {
  const { metadata } = record;
  const uri = clean(metadata.uri);
  const json = index.offchain(uri);
  const meta: Json = {};
  // The reference's metadata map is a BTreeMap: keys come out sorted.
  if (json !== undefined) {
    meta.attributes = json.attributes;
    meta.description = json.description;
  }
  meta.name = clean(metadata.name);
  meta.symbol = clean(metadata.symbol);
  const standard = tokenStandardName(metadata.tokenStandard);
  if (standard !== null) meta.token_standard = standard;
  return {
    $schema: "https://schema.metaplex.com/nft1.0.json",
    json_uri: uri,
    files: json === undefined ? [] : [{ uri: json.image, mime: "image/png" }],
    metadata: meta,
    links: json === undefined ? {} : { image: json.image },
  };
}

function compression(record: AssetRecord): Json {
  const c = record.compressed;
  return {
    eligible: false,
    compressed: c !== null,
    data_hash: c?.dataHash ?? "",
    creator_hash: c?.creatorHash ?? "",
    asset_hash: c?.assetHash ?? "",
    tree: c?.tree ?? "",
    seq: c?.seq ?? 0,
    leaf_id: c?.leafIndex ?? 0,
  };
}

function ownership(record: AssetRecord): Json {
  if (!isSingleOwner(record.metadata, record.mint)) {
    return { frozen: false, delegated: false, delegate: null, ownership_model: "token", owner: "" };
  }
  const holding = record.holdings.values().next().value;
  return {
    frozen: holding?.frozen ?? false,
    delegated: holding?.delegate != null,
    delegate: holding?.delegate ?? null,
    ownership_model: "single",
    owner: holding?.owner ?? "",
  };
}

function tokenInfo(record: AssetRecord): Json | undefined {
  if (record.mint === null) return undefined;
  const info: Json = { supply: record.mint.supply, decimals: record.mint.decimals, token_program: TOKEN_PROGRAM };
  if (record.mint.mintAuthority !== null) info.mint_authority = bs58.encode(record.mint.mintAuthority);
  if (record.mint.freezeAuthority !== null) info.freeze_authority = bs58.encode(record.mint.freezeAuthority);
  return info;
}

/**
 * The asset as DAS returns it. `grouping` lists verified collections, and unverified ones too when
 * `showUnverifiedCollections` (`verified` is shown only then), as in the reference's list calls;
 * u64 values (token supply) stay bigint for the JSON writer.
 */
export function renderAsset(
  record: AssetRecord,
  index: AssetIndex,
  options: DisplayOptions,
  allowUnverified = true,
): Json {
  const m = record.metadata;
  const iface = interfaceOf(record);
  const grouping: Json[] = [];
  if (m.collection !== null && (m.collection.verified || (allowUnverified && options.showUnverifiedCollections))) {
    const group: Json = { group_key: "collection", group_value: m.collection.key };
    if (options.showUnverifiedCollections) group.verified = m.collection.verified;
    if (options.showCollectionMetadata) {
      const parent = index.get(m.collection.key);
      group.collection_metadata =
        parent === undefined ? {} : { name: clean(parent.metadata.name), symbol: clean(parent.metadata.symbol) };
    }
    grouping.push(group);
  }
  const asset: Json = {
    interface: iface,
    id: record.id,
    content: content(record, index),
    authorities: [{ address: m.updateAuthority, scopes: ["full"] }],
    compression: compression(record),
    grouping,
    royalty: {
      royalty_model: "creators",
      target: null,
      percent: m.sellerFeeBasisPoints * 0.0001,
      basis_points: m.sellerFeeBasisPoints,
      primary_sale_happened: m.primarySaleHappened,
      locked: false,
    },
    creators: (m.creators ?? []).map((c) => ({ address: c.address, share: c.share, verified: c.verified })),
    ownership: ownership(record),
  };
  if (m.uses !== null) {
    asset.uses = {
      use_method: USE_METHODS[m.uses.useMethod] ?? "Single",
      remaining: m.uses.remaining,
      total: m.uses.total,
    };
  }
  if (iface === "V1_NFT" || iface === "ProgrammableNFT" || iface === "Custom") {
    asset.supply = { print_max_supply: 0, print_current_supply: 0, edition_nonce: m.editionNonce };
  }
  asset.mutable = m.isMutable;
  asset.burnt = isBurnt(record);
  if (options.showFungible) {
    const info = tokenInfo(record);
    if (info !== undefined) asset.token_info = info;
  }
  return asset;
}
