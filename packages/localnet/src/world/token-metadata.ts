/**
 * Codec for Metaplex Token Metadata `Metadata` accounts (key = MetadataV1), built from kit codecs.
 *
 * Layout (Borsh): key u8, update_authority, mint, data { name, symbol, uri (u32-prefixed strings,
 * padded with NULs to 32/10/200 bytes by the program), seller_fee_basis_points u16, creators
 * Option<Vec<Creator>> }, primary_sale_happened, is_mutable, edition_nonce Option<u8>,
 * token_standard Option<u8>, collection Option<{verified, key}>, uses Option<{use_method, remaining,
 * total}>, collection_details Option<V1{size u64} | V2{padding [u8;8]}>, programmable_config
 * Option<V1{rule_set Option<Pubkey>}>; the account is zero-padded to 679 bytes.
 *
 * Strings are kept raw (with their NUL padding) so decode -> encode is byte-exact; use
 * `trimNul` for display, as DAS does.
 */
import bs58 from "bs58";
import {
  addCodecSizePrefix,
  fixCodecSize,
  getArrayCodec,
  getBooleanCodec,
  getBytesCodec,
  getDiscriminatedUnionCodec,
  getNullableCodec,
  getStructCodec,
  getU16Codec,
  getU32Codec,
  getU64Codec,
  getU8Codec,
  transformCodec,
  type Address,
  type Codec,
} from "@solana/kit";

/** Size of a Metadata account as the program allocates it. */
export const METADATA_ACCOUNT_SIZE = 679;
/** `Key::MetadataV1`. */
export const METADATA_KEY = 4;
export const MAX_NAME_LENGTH = 32;
export const MAX_SYMBOL_LENGTH = 10;
export const MAX_URI_LENGTH = 200;

/** `TokenStandard` values, by discriminant. */
export const TOKEN_STANDARDS = [
  "NonFungible",
  "FungibleAsset",
  "Fungible",
  "NonFungibleEdition",
  "ProgrammableNonFungible",
  "ProgrammableNonFungibleEdition",
] as const;
export type TokenStandardName = (typeof TOKEN_STANDARDS)[number];
export const TokenStandard = {
  NonFungible: 0,
  FungibleAsset: 1,
  Fungible: 2,
  NonFungibleEdition: 3,
  ProgrammableNonFungible: 4,
  ProgrammableNonFungibleEdition: 5,
} as const;

export const USE_METHODS = ["Burn", "Multiple", "Single"] as const;

export interface MetadataCreator {
  address: Address;
  verified: boolean;
  share: number;
}

export type CollectionDetails = { __kind: "V1"; size: bigint } | { __kind: "V2"; padding: Uint8Array };
export type ProgrammableConfig = { __kind: "V1"; ruleSet: Address | null };

/** A decoded Metadata account. */
export interface TokenMetadata {
  key: number;
  updateAuthority: Address;
  mint: Address;
  name: string;
  symbol: string;
  uri: string;
  sellerFeeBasisPoints: number;
  creators: MetadataCreator[] | null;
  primarySaleHappened: boolean;
  isMutable: boolean;
  editionNonce: number | null;
  tokenStandard: number | null;
  collection: { verified: boolean; key: Address } | null;
  uses: { useMethod: number; remaining: bigint; total: bigint } | null;
  collectionDetails: CollectionDetails | null;
  programmableConfig: ProgrammableConfig | null;
}

type Head = Omit<TokenMetadata, "collectionDetails" | "programmableConfig">;
type Tail = Pick<TokenMetadata, "collectionDetails" | "programmableConfig">;

const utf8 = new TextDecoder("utf-8");

/**
 * A 32-byte public key as a base58 `Address`. Not kit's `getAddressCodec`: its BigInt base58
 * cost a second of the world build (five keys per account); `bs58` does the same work faster.
 */
const addressCodec = (): Codec<Address> =>
  transformCodec(
    fixCodecSize(getBytesCodec(), 32),
    (value: Address) => {
      const bytes = bs58.decode(value);
      if (bytes.length !== 32) throw new Error(`not a 32-byte address: ${value}`);
      return bytes;
    },
    (bytes) => bs58.encode(bytes as Uint8Array) as Address,
  );
/**
 * Borsh `String`: u32 length, then UTF-8. Not kit's `getUtf8Codec`, whose decoder drops NULs:
 * the padding is part of the account bytes and must survive a round trip.
 */
const borshString = (): Codec<string> =>
  transformCodec(
    addCodecSizePrefix(getBytesCodec(), getU32Codec()),
    (value: string) => Buffer.from(value, "utf8"),
    (bytes) => utf8.decode(bytes),
  );

const headCodec: Codec<Head> = getStructCodec([
  ["key", getU8Codec()],
  ["updateAuthority", addressCodec()],
  ["mint", addressCodec()],
  ["name", borshString()],
  ["symbol", borshString()],
  ["uri", borshString()],
  ["sellerFeeBasisPoints", getU16Codec()],
  [
    "creators",
    getNullableCodec(
      getArrayCodec(
        getStructCodec([
          ["address", addressCodec()],
          ["verified", getBooleanCodec()],
          ["share", getU8Codec()],
        ]),
      ),
    ),
  ],
  ["primarySaleHappened", getBooleanCodec()],
  ["isMutable", getBooleanCodec()],
  ["editionNonce", getNullableCodec(getU8Codec())],
  ["tokenStandard", getNullableCodec(getU8Codec())],
  [
    "collection",
    getNullableCodec(
      getStructCodec([
        ["verified", getBooleanCodec()],
        ["key", addressCodec()],
      ]),
    ),
  ],
  [
    "uses",
    getNullableCodec(
      getStructCodec([
        ["useMethod", getU8Codec()],
        ["remaining", getU64Codec()],
        ["total", getU64Codec()],
      ]),
    ),
  ],
]) as Codec<Head>;

const tailCodec: Codec<Tail> = getStructCodec([
  [
    "collectionDetails",
    getNullableCodec(
      getDiscriminatedUnionCodec([
        ["V1", getStructCodec([["size", getU64Codec()]])],
        ["V2", getStructCodec([["padding", fixCodecSize(getBytesCodec(), 8)]])],
      ]),
    ),
  ],
  [
    "programmableConfig",
    getNullableCodec(
      getDiscriminatedUnionCodec([["V1", getStructCodec([["ruleSet", getNullableCodec(addressCodec())]])]]),
    ),
  ],
]) as Codec<Tail>;

/**
 * Decodes a Metadata account. Throws on a wrong key or a truncated head. Like the program's own
 * lenient reader, an unreadable tail (accounts written before collection_details existed may hold
 * garbage there) decodes as no collection details and no programmable config.
 */
export function decodeMetadata(data: Uint8Array): TokenMetadata {
  if (data.length === 0 || data[0] !== METADATA_KEY) throw new Error("not a MetadataV1 account");
  const [head, offset] = headCodec.read(data, 0);
  let tail: Tail = { collectionDetails: null, programmableConfig: null };
  try {
    tail = tailCodec.read(data, offset)[0];
  } catch {
    // keep the lenient defaults
  }
  if (head.tokenStandard !== null && head.tokenStandard >= TOKEN_STANDARDS.length) {
    throw new Error(`unknown token standard ${head.tokenStandard}`);
  }
  return { ...head, ...tail };
}

/** Encodes a Metadata account, zero-padded to `METADATA_ACCOUNT_SIZE` bytes. */
export function encodeMetadata(metadata: TokenMetadata): Uint8Array {
  const head = headCodec.encode(metadata);
  const tail = tailCodec.encode(metadata);
  if (head.length + tail.length > METADATA_ACCOUNT_SIZE) throw new Error("metadata does not fit 679 bytes");
  const out = new Uint8Array(METADATA_ACCOUNT_SIZE);
  out.set(head, 0);
  out.set(tail, head.length);
  return out;
}

/** Pads a string with NULs to `length` bytes, as the program stores names, symbols and uris. */
export function padNul(value: string, length: number): string {
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes > length) throw new Error(`"${value}" is longer than ${length} bytes`);
  return value + "\0".repeat(length - bytes);
}

/** Strips the NUL padding the program stores (DAS shows names without it). */
export function trimNul(value: string): string {
  return value.replace(/\0+$/u, "");
}

/** Token standard name for a discriminant, or null. */
export function tokenStandardName(value: number | null): TokenStandardName | null {
  return value === null ? null : (TOKEN_STANDARDS[value] ?? null);
}
