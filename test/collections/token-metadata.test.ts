/**
 * The collections core's own Metadata reader against real mainnet accounts (SMB Gen3 members,
 * Mad Lads #9964) and against the localnet's independent codec, which writes the generated
 * collection's sized collection NFT.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Address } from "@solana/kit";
import { cleanString, decodeCollectionMetadata, metadataAddress } from "../../src/collections/token-metadata.ts";
import { TOKEN_METADATA_PROGRAM } from "../../src/solana/program-ids.ts";
import { decodeMetadata, encodeMetadata, trimNul } from "@solgate/localnet/testing";
import { buildGeneratedCollection } from "@solgate/localnet/testing";
import { DEFAULT_WORLD_OPTIONS } from "@solgate/localnet/testing";
import { deriveKey } from "@solgate/localnet/testing";

interface Fixture {
  pubkey: string;
  owner: string;
  data: [string, "base64"];
}

const DIR = new URL("../fixtures/solana/das-accounts/", import.meta.url);
const fixtures: Fixture[] = readdirSync(DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) =>
    readdirSync(new URL(`${d.name}/`, DIR)).map(
      (f) => JSON.parse(readFileSync(new URL(`${d.name}/${f}`, DIR), "utf8")) as Fixture,
    ),
  );
const metadataAccounts = fixtures.filter((f) => f.owner === TOKEN_METADATA_PROGRAM);
const bytes = (f: Fixture) => new Uint8Array(Buffer.from(f.data[0], "base64"));

describe("decodeCollectionMetadata on real mainnet accounts", () => {
  it("has the four real Metadata accounts to read", () => {
    expect(metadataAccounts).toHaveLength(4);
  });

  it("reads Mad Lads #9964: a verified programmable member of J1S9..., no collection details", () => {
    const account = metadataAccounts.find((f) => f.pubkey === "52J4tmbP9o3GHQrkts8vhXm84CLzM7KSXboKGnrw3YTW")!;
    const m = decodeCollectionMetadata(bytes(account))!;
    expect(m).toMatchObject({
      mint: "CMVuYDS9nTeujfTPJb8ik7CRhAqZv4DfjfdamFLkJgxE",
      name: "Mad Lads #9964",
      symbol: "MAD",
      tokenStandard: 4,
      collection: { key: "J1S9H3QjnRtBbbuD4HjPV6RpRhwuk4zKbxsnCHuTgh9w", verified: true },
      collectionDetails: null,
    });
    expect(m.uri).toMatch(/^https:\/\//u);
  });

  it("agrees with the localnet's codec on every real account, and each sits at its mint's PDA", async () => {
    for (const account of metadataAccounts) {
      const ours = decodeCollectionMetadata(bytes(account))!;
      const theirs = decodeMetadata(bytes(account));
      expect(ours).toEqual({
        mint: theirs.mint,
        updateAuthority: theirs.updateAuthority,
        name: trimNul(theirs.name).trim(),
        symbol: trimNul(theirs.symbol).trim(),
        uri: trimNul(theirs.uri).trim(),
        tokenStandard: theirs.tokenStandard,
        collection: theirs.collection,
        collectionDetails:
          theirs.collectionDetails === null
            ? null
            : { kind: "V1", size: (theirs.collectionDetails as { size: bigint }).size },
      });
      expect(await metadataAddress(ours.mint as Address)).toBe(account.pubkey);
    }
  });
});

describe("decodeCollectionMetadata on a sized collection NFT", () => {
  it("reads collection_details V1 with the size the localnet world wrote", () => {
    const options = { ...DEFAULT_WORLD_OPTIONS, collectionSize: 37, unverifiedSpoofs: 0, lookalikeMembers: 0 };
    const generated = buildGeneratedCollection(options, deriveKey("t", "demo"));
    const collectionMetadata = generated.accounts
      .filter((a) => a.owner === TOKEN_METADATA_PROGRAM)
      .map((a) => decodeCollectionMetadata(a.data)!)
      .find((m) => m.mint === generated.collection.mint)!;
    expect(collectionMetadata).toMatchObject({
      name: "Solgate Sentinels",
      symbol: "SNTL",
      collection: null,
      collectionDetails: { kind: "V1", size: 37n },
    });
  });

  it("reads a V2 marker, and treats an unreadable tail as no details (old accounts)", () => {
    const real = decodeMetadata(bytes(metadataAccounts[0]));
    const v2 = encodeMetadata({ ...real, collectionDetails: { __kind: "V2", padding: new Uint8Array(8) } });
    expect(decodeCollectionMetadata(v2)?.collectionDetails).toEqual({ kind: "V2" });
    const sized = encodeMetadata({ ...real, collectionDetails: { __kind: "V1", size: 18446744073709551615n } });
    expect(decodeCollectionMetadata(sized)?.collectionDetails).toEqual({ kind: "V1", size: 18446744073709551615n });
    // Cut right after the flags: an account from before token_standard existed.
    const creators = real.creators === null ? 1 : 1 + 4 + 34 * real.creators.length;
    const strings = [real.name, real.symbol, real.uri].reduce((n, s) => n + 4 + Buffer.byteLength(s, "utf8"), 0);
    const flagsEnd = 1 + 32 + 32 + strings + 2 + creators + 2;
    const legacy = decodeCollectionMetadata(encodeMetadata(real).slice(0, flagsEnd))!;
    expect(legacy).toMatchObject({
      name: trimNul(real.name),
      tokenStandard: null,
      collection: null,
      collectionDetails: null,
    });
    // Garbage after the flags (an invalid option tag) reads as absent too.
    const garbage = encodeMetadata(real);
    garbage[flagsEnd] = 7;
    expect(decodeCollectionMetadata(garbage)).toMatchObject({ tokenStandard: null, collectionDetails: null });
  });

  it("refuses what is not a MetadataV1 account", () => {
    expect(decodeCollectionMetadata(new Uint8Array(0))).toBeNull();
    expect(decodeCollectionMetadata(new Uint8Array(679))).toBeNull();
    const master = bytes(metadataAccounts[0]);
    expect(decodeCollectionMetadata(Uint8Array.of(6, ...master.subarray(1)))).toBeNull();
    expect(decodeCollectionMetadata(master.subarray(0, 40))).toBeNull();
  });

  it("cleans NUL padding for display", () => {
    expect(cleanString("SMB\0\0\0\0\0\0\0")).toBe("SMB");
    expect(cleanString("  A\0 ")).toBe("A");
  });
});
