/**
 * DAS methods over an in-memory index built from a generated world: the reference
 * implementation's response for a real account, keyset paging through a collection (each verified
 * member once, never a spoof), page and before/after paging, the reference's errors, and the
 * index following account changes (transfer, burn, un-verify).
 */
import { beforeAll, describe, expect, it } from "vitest";
import bs58 from "bs58";
import { createAssetIndex, type AssetIndex } from "../../src/das/asset-index.ts";
import { createDasMethods } from "../../src/das/das-methods.ts";
import type { MethodTable } from "../../src/rpc/protocol.ts";
import { JsonRpcError } from "../../src/rpc/protocol.ts";
import { buildWorld } from "../../src/world/world-builder.ts";
import { DEFAULT_WORLD_OPTIONS } from "../../src/world/world-options.ts";
import { TOKEN_METADATA_PROGRAM, TOKEN_PROGRAM } from "../../src/world/program-ids.ts";
import { decodeMetadata, encodeMetadata } from "../../src/world/token-metadata.ts";
import { decodeMint, decodeTokenAccount, encodeMint, encodeTokenAccount } from "../../src/world/spl-token-layout.ts";
import type { World } from "../../src/world/world-types.ts";

const ctx = { slotAt: () => 0n };
let world: World;
let index: AssetIndex;
let das: MethodTable;
let collection: string;
let verifiedIds: Set<string>;

async function call(method: string, params: unknown): Promise<any> {
  return das[method](Array.isArray(params) ? params : [params], ctx);
}

async function failure(method: string, params: unknown): Promise<JsonRpcError> {
  try {
    await call(method, params);
  } catch (err) {
    if (err instanceof JsonRpcError) return err;
    throw err;
  }
  throw new Error(`${method} did not fail`);
}

/** Pages through a group with cursors; returns the ids in the order served. */
async function pageAll(group: string, limit: number, extra: Record<string, unknown> = {}): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const res = await call("getAssetsByGroup", { groupKey: "collection", groupValue: group, limit, cursor, ...extra });
    expect(res.total).toBe(res.items.length);
    expect(res.limit).toBe(limit);
    ids.push(...res.items.map((i: { id: string }) => i.id));
    if (res.items.length < limit) break;
    expect(res.cursor).toBe(res.items.at(-1).id);
    cursor = res.cursor;
  }
  return ids;
}

beforeAll(() => {
  world = buildWorld({
    ...DEFAULT_WORLD_OPTIONS,
    collectionSize: 2_500,
    tokenHolders: 50,
    smallMintHolders: [5],
    nftOwners: 300,
  });
  index = createAssetIndex({ offchainJson: world.offchainJson });
  index.applyAccounts(world.accounts.map((a) => [a.address, a]));
  for (const c of world.compressedAssets) index.addCompressed(c);
  das = createDasMethods(index);
  collection = world.manifest.collections[0].mint;
  verifiedIds = new Set(world.compressedAssets.map((c) => c.id));
  for (const a of world.accounts) {
    if (a.owner !== TOKEN_METADATA_PROGRAM) continue;
    const m = decodeMetadata(a.data);
    if (m.collection?.key === collection && m.collection.verified) verifiedIds.add(m.mint);
  }
});

describe("getAsset", () => {
  it("answers for Mad Lads #9964 what the DAS reference implementation answers for the same accounts", async () => {
    // Field for field the reference's output for these three accounts (its regular_nft_tests snapshot).
    expect(await call("getAsset", { id: "CMVuYDS9nTeujfTPJb8ik7CRhAqZv4DfjfdamFLkJgxE" })).toEqual({
      interface: "ProgrammableNFT",
      id: "CMVuYDS9nTeujfTPJb8ik7CRhAqZv4DfjfdamFLkJgxE",
      content: {
        $schema: "https://schema.metaplex.com/nft1.0.json",
        json_uri: "https://madlads.s3.us-west-2.amazonaws.com/json/9964.json",
        files: [],
        metadata: { name: "Mad Lads #9964", symbol: "MAD", token_standard: "ProgrammableNonFungible" },
        links: {},
      },
      authorities: [{ address: "2RtGg6fsFiiF1EQzHqbd66AhW7R5bWeQGpTbv2UMkCdW", scopes: ["full"] }],
      compression: {
        eligible: false,
        compressed: false,
        data_hash: "",
        creator_hash: "",
        asset_hash: "",
        tree: "",
        seq: 0,
        leaf_id: 0,
      },
      grouping: [{ group_key: "collection", group_value: "J1S9H3QjnRtBbbuD4HjPV6RpRhwuk4zKbxsnCHuTgh9w" }],
      royalty: {
        royalty_model: "creators",
        target: null,
        percent: 0.042,
        basis_points: 420,
        primary_sale_happened: true,
        locked: false,
      },
      creators: [
        { address: "5XvhfmRjwXkGp3jHGmaKpqeerNYjkuZZBYLVQYdeVcRv", share: 0, verified: true },
        { address: "2RtGg6fsFiiF1EQzHqbd66AhW7R5bWeQGpTbv2UMkCdW", share: 100, verified: true },
      ],
      ownership: {
        frozen: true,
        delegated: true,
        delegate: "GBkD9WsmSPNBF7bnFxyC4BCC2ZiBzYq9iWStPZ9Kj9cU",
        ownership_model: "single",
        owner: "A59E2tNJEqNN9TDnzgGnmLmnTsdRDoPocGx3n1w2dqZw",
      },
      supply: { print_max_supply: 0, print_current_supply: 0, edition_nonce: 255 },
      mutable: true,
      burnt: false,
    });
  });

  it("answers SMB Gen3 #5518 with the name, uri and verified collection its metadata holds", async () => {
    const asset = await call("getAsset", ["7jFuJ73mBPDdLMvCYxzrpFTD9FeDudRxdXGDALP5Cp2W"]);
    expect(asset.content.metadata).toEqual({
      name: "SMB Gen3 #5518",
      symbol: "",
      token_standard: "ProgrammableNonFungible",
    });
    expect(asset.content.json_uri).toBe(
      "https://nftstorage.link/ipfs/bafybeidbjja4gycfx2ywaicfpdv2czog6qp75zasluknexukidqgnzby3y/5517.json",
    );
    expect(asset.grouping).toEqual([
      { group_key: "collection", group_value: "8Rt3Ayqth4DAiPnW9MDFi63TiQJHmohfTWLMQFHi4KZH" },
    ]);
    expect(asset.royalty.percent).toBe(0.05);
    expect(asset.supply.edition_nonce).toBe(254);
  });

  it("shows generated assets with their image link, compressed ones with their tree and leaf", async () => {
    const [nft] = world.manifest.demoWallet.nfts;
    const asset = await call("getAsset", { id: nft });
    expect(asset.interface).toBe("V1_NFT");
    expect(asset.content.links.image).toMatch(/^https:\/\/assets\.solgate\.localnet\/sentinels\/\d+\.png$/u);
    expect(asset.ownership.owner).toBe(world.manifest.demoWallet.address);
    const compressed = await call("getAsset", { id: world.manifest.demoWallet.compressedNfts[0] });
    expect(compressed.compression).toMatchObject({
      compressed: true,
      tree: world.compressedAssets[0].tree,
      leaf_id: 0,
      seq: 1,
    });
    expect(compressed.compression.data_hash).not.toBe("");
    expect(compressed.grouping[0].group_value).toBe(collection);
    const fungible = await call("getAsset", {
      id: world.manifest.fungibleMints[0].mint,
      options: { showFungible: true },
    });
    expect(fungible.interface).toBe("FungibleToken");
    expect(fungible.ownership).toMatchObject({ ownership_model: "token", owner: "" });
    expect(String(fungible.token_info.supply)).toBe(world.manifest.fungibleMints[0].supply);
  });

  it("keeps an unverified collection out of grouping, and shows `verified` on request", async () => {
    const spoof = world.manifest.spoofs.unverifiedMembers[0];
    expect((await call("getAsset", { id: spoof })).grouping).toEqual([]);
    const member = [...verifiedIds][0];
    const shown = await call("getAsset", { id: member, displayOptions: { showUnverifiedCollections: true } });
    expect(shown.grouping).toEqual([{ group_key: "collection", group_value: collection, verified: true }]);
  });
});

describe("getAssetsByGroup", () => {
  it("pages through the collection with cursors: each verified member once, no spoof", async () => {
    const ids = await pageAll(collection, 1000);
    expect(ids).toHaveLength(2_500);
    expect(new Set(ids)).toEqual(verifiedIds);
    for (const spoof of world.manifest.spoofs.unverifiedMembers) expect(ids).not.toContain(spoof);
    // default order: id bytes descending
    const bytes = ids.map((id) => Buffer.from(bs58.decode(id)));
    for (let i = 1; i < bytes.length; i++) expect(Buffer.compare(bytes[i - 1], bytes[i])).toBe(1);
  });

  it("serves the same members ascending, in odd page sizes", async () => {
    const ids = await pageAll(collection, 333, { sortBy: { sortBy: "id", sortDirection: "asc" } });
    expect(ids).toHaveLength(2_500);
    expect(new Set(ids)).toEqual(verifiedIds);
    expect(Buffer.compare(Buffer.from(bs58.decode(ids[0])), Buffer.from(bs58.decode(ids[1])))).toBe(-1);
  });

  it("includes unverified members only with showUnverifiedCollections, and never look-alike members", async () => {
    const all = await pageAll(collection, 1000, { options: { showUnverifiedCollections: true } });
    expect(all).toHaveLength(2_500 + world.manifest.spoofs.unverifiedMembers.length);
    const lookalike = await pageAll(world.manifest.spoofs.lookalikeCollection, 1000);
    expect(lookalike).toHaveLength(world.manifest.spoofs.lookalikeMembers);
    for (const id of lookalike) expect(verifiedIds.has(id)).toBe(false);
  });

  it("pages by number and by before/after as well", async () => {
    const byCursor = await pageAll(collection, 700);
    const byPage: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const res = await call("getAssetsByGroup", { groupKey: "collection", groupValue: collection, limit: 700, page });
      expect(res.page).toBe(page);
      expect(res.cursor).toBeUndefined();
      byPage.push(...res.items.map((i: { id: string }) => i.id));
    }
    expect(byPage).toEqual(byCursor);
    const after = await call("getAssetsByGroup", {
      groupKey: "collection",
      groupValue: collection,
      after: byCursor[10],
      before: byCursor[2],
      limit: 5,
    });
    expect(after.items.map((i: { id: string }) => i.id)).toEqual(byCursor.slice(3, 8));
  });

  it("reports sizes: getGrouping and showGrandTotal count verified members", async () => {
    expect(await call("getGrouping", { groupKey: "collection", groupValue: collection })).toEqual({
      group_key: "collection",
      group_name: collection,
      group_size: 2_500,
    });
    const res = await call("getAssetsByGroup", {
      groupKey: "collection",
      groupValue: collection,
      limit: 1,
      options: { showGrandTotal: true },
    });
    expect(res).toMatchObject({ total: 1, limit: 1, grand_total: 2_500 });
    const smb = await call("getAssetsByGroup", {
      groupKey: "collection",
      groupValue: "8Rt3Ayqth4DAiPnW9MDFi63TiQJHmohfTWLMQFHi4KZH",
    });
    expect(smb.items.map((i: { id: string }) => i.id).sort()).toEqual(world.manifest.collections[2].sampleMembers);
    expect((await call("getAssetsByGroup", { groupKey: "creator", groupValue: collection })).items).toEqual([]);
    expect(
      (await call("getAssetsByGroup", { groupKey: "collection", groupValue: world.manifest.demoWallet.address })).items,
    ).toEqual([]);
  });

  it("refuses what the reference refuses, with its codes and words", async () => {
    const group = { groupKey: "collection", groupValue: collection };
    const cases: [unknown, number, string][] = [
      [{ ...group, limit: 1001 }, -32000, "Pagination Error. Limit should not be greater than 1000."],
      [{ ...group, page: 0 }, -32000, "Pagination Error. No Pagination Method Selected"],
      [
        { ...group, page: 2, cursor: "abc" },
        -32000,
        "Pagination Error. Only one pagination parameter supported per query.",
      ],
      [{ ...group, cursor: "not-base58-0OIl" }, -32000, "Cursor Validation Err: not-base58-0OIl is invalid"],
      [
        { ...group, sortBy: { sortBy: "created" } },
        -32000,
        "Pagination Sorting Error. Only sorting based on id is supported for this pagination option.",
      ],
      [{ ...group, after: "xyz" }, -32000, "Pubkey Validation Err: xyz is invalid"],
      [{ groupKey: "collection", groupValue: "nope" }, -32000, "Pubkey Validation Err: nope is invalid"],
      [{ ...group, limit: -1 }, -32602, "Invalid params"],
      [{ ...group, limit: "10" }, -32602, "Invalid params"],
      [{ ...group, colour: "red" }, -32602, "Invalid params"],
      [{ groupKey: "collection" }, -32602, "Invalid params"],
      [{ ...group, options: { showEverything: true } }, -32602, "Invalid params"],
    ];
    for (const [params, code, message] of cases) {
      const err = await failure("getAssetsByGroup", params);
      expect([err.code, err.message]).toEqual([code, message]);
    }
    expect((await failure("getAsset", { id: "11111111111111111111111111111111" })).message).toBe(
      "Database Error: RecordNotFound Error: Asset Not Found",
    );
    expect((await failure("getAsset", { id: "CMVu" })).message).toBe("Pubkey Validation Err: CMVu is invalid");
    expect((await failure("getAsset", {})).code).toBe(-32602);
  });
});

describe("getAssetsByOwner", () => {
  it("lists what the demo wallet holds, regular and compressed, ascending by id, paged by cursor", async () => {
    const demo = world.manifest.demoWallet;
    const expected = [...demo.nfts, ...demo.compressedNfts];
    expect(expected.length).toBeGreaterThan(1);
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const res = await call("getAssetsByOwner", {
        ownerAddress: demo.address,
        sortBy: { sortBy: "id", sortDirection: "asc" },
        limit: 1,
        cursor,
      });
      expect(res.total).toBe(res.items.length);
      for (const item of res.items) expect(item.ownership.owner).toBe(demo.address);
      ids.push(...res.items.map((i: { id: string }) => i.id));
      if (res.items.length < 1) break;
      cursor = res.cursor;
    }
    expect(new Set(ids)).toEqual(new Set(expected));
    const order = ids.map((id) => Buffer.from(bs58.decode(id)).toString("hex"));
    expect(order).toEqual([...order].sort());
  });

  it("takes keyset bounds and positional params, and nothing for a wallet with no assets", async () => {
    const demo = world.manifest.demoWallet.address;
    const all = (
      await call("getAssetsByOwner", { ownerAddress: demo, sortBy: { sortBy: "id", sortDirection: "asc" } })
    ).items.map((i: { id: string }) => i.id);
    const after = await call("getAssetsByOwner", {
      ownerAddress: demo,
      sortBy: { sortBy: "id", sortDirection: "asc" },
      after: all[0],
    });
    expect(after.items.map((i: { id: string }) => i.id)).toEqual(all.slice(1));
    expect(after.after).toBe(all[0]);
    const positional = await call("getAssetsByOwner", [demo, { sortBy: "id", sortDirection: "asc" }, 2]);
    expect(positional.items.map((i: { id: string }) => i.id)).toEqual(all.slice(0, 2));
    expect((await call("getAssetsByOwner", { ownerAddress: bs58.encode(new Uint8Array(32).fill(7)) })).items).toEqual(
      [],
    );
    expect((await failure("getAssetsByOwner", { ownerAddress: "nope" })).message).toBe(
      "Pubkey Validation Err: nope is invalid",
    );
  });
});

describe("following the chain", () => {
  const entry = (address: string) => world.accounts.find((a) => a.address === address)!;
  const holding = (mint: string) =>
    world.accounts.find(
      (a) => a.owner === TOKEN_PROGRAM && a.data.length === 165 && bs58.encode(a.data.subarray(0, 32)) === mint,
    )!;

  it("moves ownership when the token moves to another account", async () => {
    const nft = world.manifest.demoWallet.nfts[0];
    const from = holding(nft);
    const fields = decodeTokenAccount(from.data)!;
    const newOwner = bs58.decode("A59E2tNJEqNN9TDnzgGnmLmnTsdRDoPocGx3n1w2dqZw");
    const to = "8qbHbw2BbbTHBW1sbeqakYXVKRQM8Ne7pLK7m6CVfeR"; // any address
    index.applyAccounts([
      [from.address, { owner: TOKEN_PROGRAM, data: encodeTokenAccount({ ...fields, amount: 0n }) }],
      [to, { owner: TOKEN_PROGRAM, data: encodeTokenAccount({ ...fields, owner: newOwner }) }],
    ]);
    expect((await call("getAsset", { id: nft })).ownership.owner).toBe("A59E2tNJEqNN9TDnzgGnmLmnTsdRDoPocGx3n1w2dqZw");
    index.applyAccounts([[to, null]]); // closed: nobody holds it any more
    expect((await call("getAsset", { id: nft })).ownership.owner).toBe("");
  });

  it("marks a burnt asset and drops it from its collection", async () => {
    const nft = world.manifest.demoWallet.nfts[1];
    const mint = entry(nft);
    index.applyAccounts([[nft, { owner: TOKEN_PROGRAM, data: encodeMint({ ...decodeMint(mint.data)!, supply: 0n }) }]]);
    expect((await call("getAsset", { id: nft })).burnt).toBe(true);
    expect(await pageAll(collection, 1000)).not.toContain(nft);
    expect((await call("getGrouping", { groupKey: "collection", groupValue: collection })).group_size).toBe(2_499);
  });

  it("drops a member whose verification is removed", async () => {
    const nft = world.manifest.demoWallet.nfts[2];
    const metadataAccount = world.accounts.find(
      (a) => a.owner === TOKEN_METADATA_PROGRAM && decodeMetadata(a.data).mint === nft,
    )!;
    const m = decodeMetadata(metadataAccount.data);
    index.applyAccounts([
      [
        metadataAccount.address,
        {
          owner: TOKEN_METADATA_PROGRAM,
          data: encodeMetadata({ ...m, collection: { ...m.collection!, verified: false } }),
        },
      ],
    ]);
    expect(await pageAll(collection, 1000)).not.toContain(nft);
    expect(await pageAll(collection, 1000, { options: { showUnverifiedCollections: true } })).toContain(nft);
  });
});

describe("getAssets", () => {
  it("answers a batch in order, null for unknown ids", async () => {
    const ids = [
      "CMVuYDS9nTeujfTPJb8ik7CRhAqZv4DfjfdamFLkJgxE",
      "11111111111111111111111111111111",
      "7jFuJ73mBPDdLMvCYxzrpFTD9FeDudRxdXGDALP5Cp2W",
    ];
    const res = await call("getAssets", { ids });
    expect(res.map((a: { id: string } | null) => a?.id ?? null)).toEqual([ids[0], null, ids[2]]);
    expect(
      (await failure("getAssets", { ids: Array.from({ length: 1001 }, (_, i) => (i % 2 ? ids[0] : ids[2])) })).message,
    ).toBe("Batch Size Error. Batch size should not be greater than 1000.");
    expect((await failure("getAssets", { ids: ["nope"] })).message).toBe("Pubkey Validation Err: nope is invalid");
    expect((await failure("getAssets", {})).code).toBe(-32602);
  });
});

describe("params forms", () => {
  it("takes positional params in the reference's field order, as clients fall back to", async () => {
    const byName = await call("getAssetsByGroup", {
      groupKey: "collection",
      groupValue: collection,
      sortBy: { sortBy: "id", sortDirection: "asc" },
      limit: 7,
    });
    const after = byName.items[2].id;
    const positional = await call("getAssetsByGroup", [
      "collection",
      collection,
      { sortBy: "id", sortDirection: "asc" },
      4,
      null,
      null,
      after,
    ]);
    expect(positional.items.map((i: { id: string }) => i.id)).toEqual(
      byName.items.slice(3, 7).map((i: { id: string }) => i.id),
    );
    expect((await call("getAsset", ["CMVuYDS9nTeujfTPJb8ik7CRhAqZv4DfjfdamFLkJgxE"])).id).toBe(
      "CMVuYDS9nTeujfTPJb8ik7CRhAqZv4DfjfdamFLkJgxE",
    );
    expect((await failure("getAsset", ["CMVuYDS9nTeujfTPJb8ik7CRhAqZv4DfjfdamFLkJgxE", null, 3])).code).toBe(-32602);
  });
});
