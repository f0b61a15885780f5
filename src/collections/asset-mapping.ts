/**
 * From DAS assets to collection members: the membership rule (checked here again, whatever the
 * provider sends), the token standard, and the item a page lists.
 */
import { safeDescription, safeImageUrl } from "./offchain-json.ts";
import type { DasAsset } from "./das-client.ts";

/** Token standards as the API names them (the proto's TokenStandard without its prefix). */
export type NftStandard =
  | "UNSPECIFIED"
  | "NON_FUNGIBLE"
  | "PROGRAMMABLE_NON_FUNGIBLE"
  | "EDITION"
  | "FUNGIBLE_ASSET"
  | "FUNGIBLE"
  | "CORE";

/** One verified member of a collection. */
export interface NftItem {
  /** Mint address, or asset id of a compressed NFT. */
  id: string;
  name: string;
  /** Empty when unavailable. */
  image: string;
  standard: NftStandard;
  compressed: boolean;
  /** Empty when the provider gives none. */
  owner: string;
}

/**
 * Whether `asset` is a verified, unburnt member of `collection`: its grouping names the collection
 * under the `collection` key and does not say `verified: false`. DAS lists only verified groupings
 * unless asked for unverified ones (and then marks each with `verified`), so an entry without the
 * flag is a verified one; an explicit `false`, another collection's group, or a burnt asset is not
 * a member, whatever page it came in.
 */
export function isVerifiedMember(asset: DasAsset, collection: string): boolean {
  if (asset.burnt === true) return false;
  const grouping = Array.isArray(asset.grouping) ? asset.grouping : [];
  return grouping.some(
    (g) =>
      typeof g === "object" &&
      g !== null &&
      g.group_key === "collection" &&
      g.group_value === collection &&
      g.verified !== false,
  );
}

/** Token Metadata's `token_standard` names (DAS `content.metadata.token_standard`). */
const BY_TOKEN_STANDARD: Record<string, NftStandard> = {
  NonFungible: "NON_FUNGIBLE",
  ProgrammableNonFungible: "PROGRAMMABLE_NON_FUNGIBLE",
  NonFungibleEdition: "EDITION",
  // A print of a programmable master edition is still a print edition.
  ProgrammableNonFungibleEdition: "EDITION",
  FungibleAsset: "FUNGIBLE_ASSET",
  Fungible: "FUNGIBLE",
};

/** DAS `interface` values (the reference's and Metaplex Core's). */
const BY_INTERFACE: Record<string, NftStandard> = {
  V1_NFT: "NON_FUNGIBLE",
  V2_NFT: "NON_FUNGIBLE",
  LEGACY_NFT: "NON_FUNGIBLE",
  ProgrammableNFT: "PROGRAMMABLE_NON_FUNGIBLE",
  V1_PRINT: "EDITION",
  MplCoreAsset: "CORE",
  FungibleAsset: "FUNGIBLE_ASSET",
  FungibleToken: "FUNGIBLE",
};

/**
 * The asset's token standard: the on-chain `token_standard` when DAS reports one (it is what the
 * Metadata account says), else its `interface`; UNSPECIFIED for anything else (Custom, Identity,
 * Executable, MplCoreCollection, ...).
 */
export function standardOf(asset: DasAsset): NftStandard {
  const fromMetadata = asset.content?.metadata?.token_standard;
  if (typeof fromMetadata === "string" && Object.hasOwn(BY_TOKEN_STANDARD, fromMetadata))
    return BY_TOKEN_STANDARD[fromMetadata];
  const iface = asset.interface;
  if (typeof iface === "string" && Object.hasOwn(BY_INTERFACE, iface)) return BY_INTERFACE[iface];
  return "UNSPECIFIED";
}

/** A display string from provider data: a string, trimmed, NULs gone, bounded. */
export function displayString(value: unknown, max = 200): string {
  return typeof value === "string" ? value.replace(/\0/gu, "").trim().slice(0, max) : "";
}

/** The image DAS gives: `links.image`, else the first image file. */
export function imageOf(asset: DasAsset): string {
  const linked = safeImageUrl(asset.content?.links?.image);
  if (linked !== "") return linked;
  const files = Array.isArray(asset.content?.files) ? asset.content.files : [];
  for (const file of files) {
    if (typeof file !== "object" || file === null) continue;
    const mime = typeof file.mime === "string" ? file.mime : "";
    if (mime === "" || mime.startsWith("image/")) {
      const uri = safeImageUrl(file.uri);
      if (uri !== "") return uri;
    }
  }
  return "";
}

/** The description DAS gives, if any. */
export function descriptionOf(asset: DasAsset): string {
  return safeDescription(asset.content?.metadata?.description);
}

/** The asset's metadata JSON URI, if any. */
export function jsonUriOf(asset: DasAsset): string {
  return displayString(asset.content?.json_uri, 2048);
}

/** The listed form of a member. */
export function toNftItem(asset: DasAsset): NftItem {
  const owner = asset.ownership?.owner;
  return {
    id: asset.id,
    name: displayString(asset.content?.metadata?.name),
    image: imageOf(asset),
    standard: standardOf(asset),
    compressed: asset.compression?.compressed === true,
    owner: typeof owner === "string" ? owner : "",
  };
}
