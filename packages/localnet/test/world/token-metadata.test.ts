/**
 * The Token Metadata codec against the real mainnet accounts in the world's fixtures (SMB Gen3
 * members, Mad Lads #9964): field values as the chain holds them, and byte-exact round trips.
 */
import { describe, expect, it } from "vitest";
import { loadFixtureAccounts } from "../../src/world/real-fixtures.ts";
import { TOKEN_METADATA_PROGRAM } from "../../src/world/program-ids.ts";
import {
  decodeMetadata,
  encodeMetadata,
  METADATA_ACCOUNT_SIZE,
  padNul,
  tokenStandardName,
  trimNul,
  type TokenMetadata,
} from "../../src/world/token-metadata.ts";

const metadataOf = (dir: string) => loadFixtureAccounts(dir).filter((a) => a.owner === TOKEN_METADATA_PROGRAM);

describe("Token Metadata codec on real accounts", () => {
  it("decodes Mad Lads #9964 as the chain holds it", () => {
    const [account] = metadataOf("pnft-mad-lads-9964");
    expect(account.address).toBe("52J4tmbP9o3GHQrkts8vhXm84CLzM7KSXboKGnrw3YTW");
    expect(account.data.length).toBe(METADATA_ACCOUNT_SIZE);
    const m = decodeMetadata(account.data);
    expect(m.mint).toBe("CMVuYDS9nTeujfTPJb8ik7CRhAqZv4DfjfdamFLkJgxE");
    expect(m.updateAuthority).toBe("2RtGg6fsFiiF1EQzHqbd66AhW7R5bWeQGpTbv2UMkCdW");
    // stored padded with NULs to 32 / 10 / 200 bytes
    expect(m.name).toBe(padNul("Mad Lads #9964", 32));
    expect(trimNul(m.symbol)).toBe("MAD");
    expect(trimNul(m.uri)).toBe("https://madlads.s3.us-west-2.amazonaws.com/json/9964.json");
    expect(m.uri.length).toBe(200);
    expect(m.sellerFeeBasisPoints).toBe(420);
    expect(m.creators).toEqual([
      { address: "5XvhfmRjwXkGp3jHGmaKpqeerNYjkuZZBYLVQYdeVcRv", verified: true, share: 0 },
      { address: "2RtGg6fsFiiF1EQzHqbd66AhW7R5bWeQGpTbv2UMkCdW", verified: true, share: 100 },
    ]);
    expect(m.primarySaleHappened).toBe(true);
    expect(m.isMutable).toBe(true);
    expect(m.editionNonce).toBe(255);
    expect(tokenStandardName(m.tokenStandard)).toBe("ProgrammableNonFungible");
    expect(m.collection).toEqual({ verified: true, key: "J1S9H3QjnRtBbbuD4HjPV6RpRhwuk4zKbxsnCHuTgh9w" });
    expect(m.uses).toBeNull();
    expect(m.collectionDetails).toBeNull();
    expect(m.programmableConfig).toEqual({ __kind: "V1", ruleSet: "eBJLFYPxJmMGKuFwpDWkzxZeUrad92kZRC5BJLpzyT9" });
  });

  it("decodes the three SMB Gen3 members as verified members of 8Rt3…", () => {
    const decoded = metadataOf("collection-smb-gen3").map((a) => decodeMetadata(a.data));
    expect(decoded.map((m) => trimNul(m.name)).sort()).toEqual(["SMB Gen3 #13700", "SMB Gen3 #5518", "SMB Gen3 #6672"]);
    for (const m of decoded) {
      expect(trimNul(m.symbol)).toBe("");
      expect(m.collection).toEqual({ verified: true, key: "8Rt3Ayqth4DAiPnW9MDFi63TiQJHmohfTWLMQFHi4KZH" });
      expect(m.sellerFeeBasisPoints).toBe(500);
      expect(m.creators?.map((c) => c.share)).toEqual([0, 0, 100]);
      expect(tokenStandardName(m.tokenStandard)).toBe("ProgrammableNonFungible");
      expect(trimNul(m.uri)).toMatch(/^https:\/\/nftstorage\.link\/ipfs\/bafy[a-z0-9]+\/\d+\.json$/u);
    }
  });

  it("re-encodes every real metadata account byte for byte", () => {
    for (const account of [...metadataOf("collection-smb-gen3"), ...metadataOf("pnft-mad-lads-9964")]) {
      expect(Buffer.from(encodeMetadata(decodeMetadata(account.data))).equals(Buffer.from(account.data))).toBe(true);
    }
  });
});

describe("Token Metadata codec on generated values", () => {
  const base: TokenMetadata = {
    key: 4,
    updateAuthority: "2RtGg6fsFiiF1EQzHqbd66AhW7R5bWeQGpTbv2UMkCdW" as never,
    mint: "CMVuYDS9nTeujfTPJb8ik7CRhAqZv4DfjfdamFLkJgxE" as never,
    name: padNul("Sentinel #1", 32),
    symbol: padNul("SNTL", 10),
    uri: padNul("https://example.invalid/1.json", 200),
    sellerFeeBasisPoints: 500,
    creators: null,
    primarySaleHappened: false,
    isMutable: false,
    editionNonce: null,
    tokenStandard: 0,
    collection: null,
    uses: { useMethod: 1, remaining: 3n, total: 5n },
    collectionDetails: { __kind: "V1", size: 10_000n },
    programmableConfig: { __kind: "V1", ruleSet: null },
  };

  it("round-trips every optional field", () => {
    const bytes = encodeMetadata(base);
    expect(bytes.length).toBe(METADATA_ACCOUNT_SIZE);
    expect(decodeMetadata(bytes)).toEqual(base);
  });

  it("reads an unreadable tail as no collection details, as the program's lenient reader does", () => {
    const [real] = metadataOf("pnft-mad-lads-9964");
    const decoded = decodeMetadata(real.data);
    // Where programmable_config starts: the first byte that changes when it is dropped.
    const without = encodeMetadata({ ...decoded, programmableConfig: null });
    const configAt = real.data.findIndex((b, i) => b !== without[i]);
    expect(real.data[configAt - 1]).toBe(0); // collection_details: None
    const damaged = Uint8Array.from(real.data);
    damaged[configAt - 1] = 1; // Some(...)
    damaged[configAt] = 9; // no such CollectionDetails variant
    const m = decodeMetadata(damaged);
    expect(m.collectionDetails).toBeNull();
    expect(m.programmableConfig).toBeNull();
    expect(m.collection).toEqual(decoded.collection);
  });

  it("refuses accounts that are not MetadataV1", () => {
    expect(() => decodeMetadata(new Uint8Array(679))).toThrow(/MetadataV1/u);
    expect(() => decodeMetadata(Uint8Array.of(4, 1, 2))).toThrow();
    expect(() => padNul("x".repeat(33), 32)).toThrow(/longer/u);
  });
});
