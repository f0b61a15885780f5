/**
 * Membership and token standards from DAS assets. The assets come from the localnet's DAS
 * renderer (the reference implementation's shape) over real mainnet accounts, then are altered the
 * way a wrong or hostile provider might.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isVerifiedMember, standardOf, toNftItem, imageOf } from "../../src/collections/asset-mapping.ts";
import type { DasAsset } from "../../src/collections/das-client.ts";
import { createAssetIndex } from "@solgate/localnet/testing";
import { renderAsset } from "@solgate/localnet/testing";

const SMB = "8Rt3Ayqth4DAiPnW9MDFi63TiQJHmohfTWLMQFHi4KZH";
const MAD_LADS = "J1S9H3QjnRtBbbuD4HjPV6RpRhwuk4zKbxsnCHuTgh9w";
const DIR = new URL("../fixtures/solana/das-accounts/", import.meta.url);

/** Real accounts through the localnet's DAS index and renderer. */
function realAssets(): Map<string, DasAsset> {
  const index = createAssetIndex();
  for (const folder of readdirSync(DIR)) {
    const accounts = readdirSync(new URL(`${folder}/`, DIR)).map((f) =>
      JSON.parse(readFileSync(new URL(`${folder}/${f}`, DIR), "utf8")),
    );
    index.applyAccounts(
      accounts.map((a) => [a.pubkey, { owner: a.owner, data: new Uint8Array(Buffer.from(a.data[0], "base64")) }]),
    );
  }
  const options = {
    showUnverifiedCollections: false,
    showCollectionMetadata: false,
    showZeroBalance: false,
    showInscription: false,
    showFungible: false,
    showGrandTotal: false,
  };
  const out = new Map<string, DasAsset>();
  for (const group of [SMB, MAD_LADS]) {
    for (const record of index.groupMembers(group, false))
      out.set(
        record.id,
        JSON.parse(
          JSON.stringify(renderAsset(record, index, options), (_k, v) => (typeof v === "bigint" ? Number(v) : v)),
        ),
      );
  }
  return out;
}

const assets = realAssets();
const madLad = assets.get("CMVuYDS9nTeujfTPJb8ik7CRhAqZv4DfjfdamFLkJgxE")!;
const smbMember = [...assets.values()].find((a) => a.id !== madLad.id)!;

describe("isVerifiedMember", () => {
  it("accepts real verified members of their own collection only", () => {
    expect(assets.size).toBe(4);
    expect(isVerifiedMember(madLad, MAD_LADS)).toBe(true);
    expect(isVerifiedMember(madLad, SMB)).toBe(false);
    expect(isVerifiedMember(smbMember, SMB)).toBe(true);
  });

  it("refuses an explicit verified:false, a foreign group, another group key, a burnt asset, no grouping", () => {
    const base = structuredClone(smbMember);
    expect(
      isVerifiedMember({ ...base, grouping: [{ group_key: "collection", group_value: SMB, verified: false }] }, SMB),
    ).toBe(false);
    expect(isVerifiedMember({ ...base, grouping: [{ group_key: "collection", group_value: MAD_LADS }] }, SMB)).toBe(
      false,
    );
    expect(isVerifiedMember({ ...base, grouping: [{ group_key: "creator", group_value: SMB }] }, SMB)).toBe(false);
    expect(isVerifiedMember({ ...base, burnt: true }, SMB)).toBe(false);
    expect(isVerifiedMember({ ...base, grouping: undefined }, SMB)).toBe(false);
    expect(isVerifiedMember({ ...base, grouping: "collection" as never }, SMB)).toBe(false);
    expect(
      isVerifiedMember(
        { ...base, grouping: [null as never, { group_key: "collection", group_value: SMB, verified: true }] },
        SMB,
      ),
    ).toBe(true);
  });
});

describe("standardOf", () => {
  it("reads real assets: Mad Lads and SMB Gen3 members are programmable", () => {
    expect(madLad.interface).toBe("ProgrammableNFT");
    expect(standardOf(madLad)).toBe("PROGRAMMABLE_NON_FUNGIBLE");
    expect(standardOf(smbMember)).toBe("PROGRAMMABLE_NON_FUNGIBLE");
  });

  it("maps every interface and token_standard the README documents", () => {
    const byInterface: [string, string][] = [
      ["V1_NFT", "NON_FUNGIBLE"],
      ["V2_NFT", "NON_FUNGIBLE"],
      ["LEGACY_NFT", "NON_FUNGIBLE"],
      ["ProgrammableNFT", "PROGRAMMABLE_NON_FUNGIBLE"],
      ["V1_PRINT", "EDITION"],
      ["MplCoreAsset", "CORE"],
      ["FungibleAsset", "FUNGIBLE_ASSET"],
      ["FungibleToken", "FUNGIBLE"],
      ["Custom", "UNSPECIFIED"],
      ["Identity", "UNSPECIFIED"],
      ["MplCoreCollection", "UNSPECIFIED"],
      ["toString", "UNSPECIFIED"],
    ];
    for (const [iface, standard] of byInterface)
      expect([iface, standardOf({ id: "x", interface: iface })]).toEqual([iface, standard]);
    const byTokenStandard: [string, string][] = [
      ["NonFungible", "NON_FUNGIBLE"],
      ["ProgrammableNonFungible", "PROGRAMMABLE_NON_FUNGIBLE"],
      ["NonFungibleEdition", "EDITION"],
      ["ProgrammableNonFungibleEdition", "EDITION"],
      ["FungibleAsset", "FUNGIBLE_ASSET"],
      ["Fungible", "FUNGIBLE"],
    ];
    // token_standard (the Metadata account's own value) wins over the interface DAS derived.
    for (const [ts, standard] of byTokenStandard) {
      expect([ts, standardOf({ id: "x", interface: "V1_NFT", content: { metadata: { token_standard: ts } } })]).toEqual(
        [ts, standard],
      );
    }
    expect(standardOf({ id: "x", interface: "MplCoreAsset", content: { metadata: { token_standard: "Bogus" } } })).toBe(
      "CORE",
    );
  });
});

describe("toNftItem", () => {
  it("lists a real member with its name, owner and no image (the localnet fetched no JSON for it)", () => {
    expect(toNftItem(madLad)).toEqual({
      id: "CMVuYDS9nTeujfTPJb8ik7CRhAqZv4DfjfdamFLkJgxE",
      name: "Mad Lads #9964",
      image: "",
      standard: "PROGRAMMABLE_NON_FUNGIBLE",
      compressed: false,
      owner: madLad.ownership!.owner,
    });
    expect(toNftItem(madLad).owner).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/u);
  });

  it("takes links.image, else an image file, and never a script URL", () => {
    expect(imageOf({ id: "x", content: { links: { image: "https://a/i.png" } } })).toBe("https://a/i.png");
    expect(
      imageOf({
        id: "x",
        content: {
          links: {},
          files: [
            { uri: "https://a/m.json", mime: "application/json" },
            { uri: "ipfs://cid", mime: "image/png" },
          ],
        },
      }),
    ).toBe("ipfs://cid");
    expect(imageOf({ id: "x", content: { links: { image: "javascript:alert(1)" } } })).toBe("");
    expect(
      toNftItem({ id: "x", compression: { compressed: "yes" }, content: { metadata: { name: 7 } } }),
    ).toMatchObject({ name: "", compressed: false, owner: "" });
  });
});
