/**
 * Reading a collection NFT's Metaplex Token Metadata account: the on-chain name, symbol and uri,
 * and `collection_details`, which a sized collection keeps its verified member count in. DAS does
 * not report that field, so it is read from the chain directly.
 *
 * Layout (Borsh), as far as read here: key u8 (4 = MetadataV1), update_authority [32], mint [32],
 * name, symbol, uri (u32 length + UTF-8, NUL-padded by the program), seller_fee_basis_points u16,
 * creators Option<Vec<{address [32], verified bool, share u8}>>, primary_sale_happened bool,
 * is_mutable bool, edition_nonce Option<u8>, token_standard Option<u8>,
 * collection Option<{verified bool, key [32]}>, uses Option<{use_method u8, remaining u64, total u64}>,
 * collection_details Option<V1 {size u64} | V2 {padding [8]}>.
 */
import { getAddressEncoder, getProgramDerivedAddress } from "@solana/kit";
import type { Address } from "@solana/kit";
import { base58OfKey } from "../solana/base58-key.ts";
import { TOKEN_METADATA_PROGRAM } from "../solana/program-ids.ts";

const METADATA_V1 = 4;

/** What Solgate reads from a Metadata account. */
export interface CollectionMetadata {
  mint: string;
  updateAuthority: string;
  /** NULs and surrounding whitespace removed. */
  name: string;
  symbol: string;
  uri: string;
  tokenStandard: number | null;
  /** The collection this NFT itself belongs to, if any. */
  collection: { key: string; verified: boolean } | null;
  /** V1 holds the verified member count; V2 marks a collection whose size is not tracked. */
  collectionDetails: { kind: "V1"; size: bigint } | { kind: "V2" } | null;
}

const encoder = getAddressEncoder();
const utf8 = new TextDecoder("utf-8", { fatal: false });

/** The Metadata account address of `mint`: PDA of ["metadata", program id, mint]. */
export async function metadataAddress(mint: Address): Promise<Address> {
  const [pda] = await getProgramDerivedAddress({
    programAddress: TOKEN_METADATA_PROGRAM,
    seeds: ["metadata", encoder.encode(TOKEN_METADATA_PROGRAM), encoder.encode(mint)],
  });
  return pda;
}

/** Display form of a stored string: the program pads with NULs. */
export function cleanString(value: string): string {
  return value.replace(/\0/gu, "").trim();
}

class Reader {
  offset = 0;
  readonly data: Uint8Array;
  constructor(data: Uint8Array) {
    this.data = data;
  }
  need(n: number): void {
    if (this.offset + n > this.data.length) throw new RangeError("truncated metadata account");
  }
  u8(): number {
    this.need(1);
    return this.data[this.offset++];
  }
  bool(): boolean {
    const v = this.u8();
    if (v > 1) throw new RangeError("invalid bool");
    return v === 1;
  }
  u32(): number {
    this.need(4);
    const v = new DataView(this.data.buffer, this.data.byteOffset + this.offset, 4).getUint32(0, true);
    this.offset += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = new DataView(this.data.buffer, this.data.byteOffset + this.offset, 8).getBigUint64(0, true);
    this.offset += 8;
    return v;
  }
  key(): string {
    this.need(32);
    const v = base58OfKey(this.data, this.offset);
    this.offset += 32;
    return v;
  }
  string(maxBytes: number): string {
    const length = this.u32();
    if (length > maxBytes) throw new RangeError("string longer than the program allows");
    this.need(length);
    const v = utf8.decode(this.data.subarray(this.offset, this.offset + length));
    this.offset += length;
    return v;
  }
  skip(n: number): void {
    this.need(n);
    this.offset += n;
  }
  option<T>(read: () => T): T | null {
    const tag = this.u8();
    if (tag === 0) return null;
    if (tag !== 1) throw new RangeError("invalid option tag");
    return read();
  }
}

/**
 * Decodes a Metadata account, or returns null when `data` is not a readable MetadataV1. Like the
 * program's own lenient reader, fields after `creators`/flags that do not parse (accounts written
 * before those fields existed) read as absent.
 */
export function decodeCollectionMetadata(data: Uint8Array): CollectionMetadata | null {
  const r = new Reader(data);
  let head: Omit<CollectionMetadata, "tokenStandard" | "collection" | "collectionDetails">;
  try {
    if (r.u8() !== METADATA_V1) return null;
    const updateAuthority = r.key();
    const mint = r.key();
    // The program caps these at 32, 10 and 200 bytes; a little slack tolerates old padding quirks.
    const name = r.string(64);
    const symbol = r.string(32);
    const uri = r.string(256);
    r.skip(2); // seller_fee_basis_points
    r.option(() => {
      const count = r.u32();
      if (count > 5) throw new RangeError("too many creators");
      r.skip(count * 34);
    });
    r.skip(2); // primary_sale_happened, is_mutable
    head = { mint, updateAuthority, name: cleanString(name), symbol: cleanString(symbol), uri: cleanString(uri) };
  } catch {
    return null;
  }
  const tail: Pick<CollectionMetadata, "tokenStandard" | "collection" | "collectionDetails"> = {
    tokenStandard: null,
    collection: null,
    collectionDetails: null,
  };
  try {
    r.option(() => r.u8()); // edition_nonce
    tail.tokenStandard = r.option(() => r.u8());
    tail.collection = r.option(() => {
      const verified = r.bool();
      return { verified, key: r.key() };
    });
    r.option(() => r.skip(17)); // uses
    tail.collectionDetails = r.option(() => {
      const kind = r.u8();
      if (kind === 0) return { kind: "V1" as const, size: r.u64() };
      if (kind === 1) {
        r.skip(8);
        return { kind: "V2" as const };
      }
      throw new RangeError("unknown collection details");
    });
  } catch {
    // A tail that does not parse is an old account: keep whatever parsed before the failure.
  }
  return { ...head, ...tail };
}
