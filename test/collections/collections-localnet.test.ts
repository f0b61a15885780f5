/**
 * The collections core against the localnet world (a 1,000-member generated collection, its
 * spoofs and look-alike, the real SMB Gen3 members) through the real upstream, compared with what
 * the chain holds read independently; and behind a proxy that makes DAS lie.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import bs58 from "bs58";
import { createCollections } from "../../src/collections/collections.ts";
import type { Collections, NftItem } from "../../src/collections/collections.ts";
import { createOffchainJson } from "../../src/collections/offchain-json.ts";
import { SolgateError } from "../../src/errors.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";
import { startCollectionWorld } from "./collection-world.ts";
import type { CollectionWorld } from "./collection-world.ts";
import { startDasFaultProxy } from "./das-fault-proxy.ts";
import type { DasFaultProxy } from "./das-fault-proxy.ts";
import { json, startHttpFixture } from "./http-fixture.ts";
import type { HttpFixture } from "./http-fixture.ts";

let world: CollectionWorld;
let upstream: Upstream;
let collections: Collections;

beforeAll(async () => {
  world = await startCollectionWorld(1000);
  upstream = createUpstream({ chain: "localnet", rpcUrls: [world.localnet.rpcUrl], maxRetries: 0 });
  collections = createCollections({ upstream });
});
afterAll(async () => {
  await upstream?.close();
  await world?.stop();
});

async function refusal(promise: Promise<unknown>): Promise<SolgateError> {
  const e = await promise.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(SolgateError);
  return e as SolgateError;
}

/** Every page of a listing, in order. */
async function listAll(
  core: Collections,
  address: string,
  limit: number,
): Promise<{ items: NftItem[]; pages: number }> {
  const items: NftItem[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await core.list({ address, limit, cursor });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
    pages++;
  } while (cursor !== undefined && pages < 10_000);
  return { items, pages };
}

const byteOrder = (a: string, b: string) => Buffer.compare(bs58.decode(a), bs58.decode(b));

describe("GetCollection on the localnet world", () => {
  it("the generated collection: name and symbol from its Metadata account, size from collection_details", async () => {
    const onChain = world.metadata.get(world.generated.mint)!;
    const info = await collections.get(world.generated.mint);
    expect(info).toMatchObject({
      address: world.generated.mint,
      name: onChain.name,
      symbol: onChain.symbol,
      itemCount: 1000n,
      floorPrice: null,
    });
    expect(onChain.collectionDetails).toEqual({ __kind: "V1", size: 1000n });
    expect(world.verifiedMembers(world.generated.mint).size).toBe(1000);
    expect(info.name).toBe("Solgate Sentinels");
  });

  it("the look-alike: same name and symbol, its own 25 members", async () => {
    const info = await collections.get(world.lookalike.mint);
    expect(info).toMatchObject({
      name: "Solgate Sentinels",
      symbol: "SNTL",
      itemCount: BigInt(world.lookalike.verifiedMembers),
    });
    expect(world.verifiedMembers(world.lookalike.mint).size).toBe(25);
  });

  it("the real SMB Gen3: its NFT is not on this chain, so no name; its verified members counted through DAS", async () => {
    expect(world.metadata.has(world.smb.mint)).toBe(false);
    const info = await collections.get(world.smb.mint);
    expect(info).toMatchObject({
      address: world.smb.mint,
      name: "",
      symbol: "",
      itemCount: BigInt(world.verifiedMembers(world.smb.mint).size),
    });
    expect(info.itemCount).toBe(3n);
    expect(world.smb.verifiedMembers).toBe(3);
  });

  it("NOT_FOUND for a member (not a collection), a spoof, and an address with nothing; INVALID_ADDRESS for bad input", async () => {
    const member = world.manifest.demoWallet.nfts[0];
    expect((await refusal(collections.get(member))).message).toMatch(/is not a collection/u);
    expect((await refusal(collections.get(world.manifest.spoofs.unverifiedMembers[0]))).reason).toBe("NOT_FOUND");
    const nothing = await refusal(collections.get("So11111111111111111111111111111111111111112"));
    expect([nothing.reason, nothing.message]).toEqual([
      "NOT_FOUND",
      "no asset or collection exists at So11111111111111111111111111111111111111112",
    ]);
    for (const bad of ["", "nope", "0OIl", "1111111111111111111111111111111", bs58.encode(new Uint8Array(33))]) {
      expect((await refusal(collections.get(bad))).reason).toBe("INVALID_ADDRESS");
    }
  });

  it("fills description and image from the metadata JSON when DAS has none, and leaves them empty when the host is unreachable", async () => {
    // The generated collection NFT's uri points at a host that does not exist: the failure path, above.
    const web: HttpFixture = await startHttpFixture();
    web.routes.set(
      "/sentinels/collection.json",
      json({ name: "Solgate Sentinels", description: "Guards of the gate.", image: "https://img.example/c.png" }),
    );
    try {
      const uri = world.metadata.get(world.generated.mint)!.uri;
      const offchain = createOffchainJson({
        allowPrivateNetworks: true,
        get: (url, o) =>
          import("../../src/collections/http-get.ts").then((m) =>
            m.httpGet(url.replace("https://assets.solgate.localnet", web.url), o),
          ),
      });
      const core = createCollections({ upstream, offchain });
      const info = await core.get(world.generated.mint);
      expect(info).toMatchObject({ description: "Guards of the gate.", image: "https://img.example/c.png" });
      expect(uri).toBe("https://assets.solgate.localnet/sentinels/collection.json");
      expect(web.hitsOf("/sentinels/collection.json")).toBe(1);
      const plain = await collections.get(world.generated.mint);
      expect([plain.description, plain.image]).toEqual(["", ""]);
    } finally {
      await web.close();
    }
  });
});

describe("ListCollectionNfts on the localnet world", () => {
  let all: NftItem[];

  it("limit 1000: every verified member exactly once, in id order, no spoof, compressed ones flagged", async () => {
    const { items, pages } = await listAll(collections, world.generated.mint, 1000);
    all = items;
    expect(pages).toBeLessThanOrEqual(2);
    const expected = world.verifiedMembers(world.generated.mint);
    expect(items.map((i) => i.id).sort()).toEqual([...expected].sort());
    expect(items.map((i) => i.id)).toEqual([...items.map((i) => i.id)].sort(byteOrder));
    const spoofs = new Set([...world.manifest.spoofs.unverifiedMembers, ...world.lookalike.sampleMembers]);
    expect(items.filter((i) => spoofs.has(i.id))).toEqual([]);
    const compressed = items.filter((i) => i.compressed).map((i) => i.id);
    expect(compressed.sort()).toEqual([...world.compressedIds].sort());
    expect(compressed).toHaveLength(world.generated.compressedMembers!);
    expect(items.filter((i) => i.standard === "PROGRAMMABLE_NON_FUNGIBLE")).toHaveLength(
      world.generated.programmableMembers!,
    );
    expect(items.filter((i) => i.standard === "NON_FUNGIBLE")).toHaveLength(
      1000 - world.generated.programmableMembers!,
    );
  });

  it("matches each member's Metadata account: name, and the owner holds it", async () => {
    for (const item of all.filter((i) => !i.compressed)) {
      expect(item.name).toBe(world.metadata.get(item.id)!.name);
      expect(item.owner).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/u);
      expect(item.image).toMatch(/^https:\/\/assets\.solgate\.localnet\/sentinels\/\d+\.png$/u);
    }
    const demo = all.find((i) => i.id === world.manifest.demoWallet.nfts[0])!;
    expect(demo.owner).toBe(world.manifest.demoWallet.address);
  });

  it("limit 7: the same members in the same order, and the last page says so", async () => {
    const { items, pages } = await listAll(collections, world.generated.mint, 7);
    expect(items.map((i) => i.id)).toEqual(all.map((i) => i.id));
    expect(pages).toBe(Math.ceil(1000 / 7));
  });

  it("the default limit is 100; out-of-range limits and foreign or altered cursors are INVALID_PARAMETER", async () => {
    const first = await collections.list({ address: world.generated.mint, limit: 0 });
    expect(first.items).toHaveLength(100);
    for (const limit of [1001, -1, 1.5]) {
      const e = await refusal(collections.list({ address: world.generated.mint, limit }));
      expect([e.reason, e.details.field]).toEqual(["INVALID_PARAMETER", "limit"]);
    }
    const foreign = await refusal(collections.list({ address: world.lookalike.mint, cursor: first.nextCursor! }));
    expect([foreign.reason, foreign.details.field]).toEqual(["INVALID_PARAMETER", "cursor"]);
    const altered = `${first.nextCursor!.slice(0, -3)}AAA`;
    expect((await refusal(collections.list({ address: world.generated.mint, cursor: altered }))).details.field).toBe(
      "cursor",
    );
    expect((await refusal(collections.list({ address: "nope" }))).reason).toBe("INVALID_ADDRESS");
  });

  it("SMB Gen3's real members; NOT_FOUND for an address that is no collection", async () => {
    const page = await collections.list({ address: world.smb.mint });
    expect(page.items.map((i) => i.id).sort()).toEqual([...world.verifiedMembers(world.smb.mint)].sort());
    expect(page.items.every((i) => i.standard === "PROGRAMMABLE_NON_FUNGIBLE" && !i.compressed)).toBe(true);
    expect(page.nextCursor).toBeNull();
    expect((await refusal(collections.list({ address: world.manifest.demoWallet.nfts[0] }))).reason).toBe("NOT_FOUND");
  });
});

describe("behind a DAS provider that lies", () => {
  let proxy: DasFaultProxy;
  let lying: Upstream;
  let core: Collections;
  let truth: NftItem[];

  beforeAll(async () => {
    proxy = await startDasFaultProxy(world.localnet.rpcUrl);
    lying = createUpstream({ chain: "lying", rpcUrls: [world.localnet.rpcUrl], dasUrl: proxy.url, maxRetries: 0 });
    core = createCollections({ upstream: lying });
    truth = (await listAll(collections, world.generated.mint, 1000)).items;
  });
  afterAll(async () => {
    await lying?.close();
    await proxy?.close();
  });

  it("drops a member the provider marks verified:false, an injected foreign item and a burnt one, and still fills the page", async () => {
    const flipped = truth[3].id;
    const foreign = await lying.das.call<Record<string, any>>("getAsset", [world.lookalike.sampleMembers[0]]);
    const burnt = await lying.das.call<Record<string, any>>("getAsset", [world.manifest.spoofs.unverifiedMembers[0]]);
    burnt.grouping = [{ group_key: "collection", group_value: world.generated.mint }];
    burnt.burnt = true;
    proxy.rewrite = (result) => {
      for (const item of result.items)
        if (item.id === flipped)
          item.grouping = [{ group_key: "collection", group_value: world.generated.mint, verified: false }];
      // Injected in id order, so only the membership check can keep them out.
      result.items.push(structuredClone(foreign), structuredClone(burnt));
      result.items.sort((a, b) => byteOrder(a.id, b.id));
    };
    const first = await core.list({ address: world.generated.mint, limit: 10 });
    expect(first.items).toHaveLength(10);
    expect(first.items.map((i) => i.id)).toEqual(
      truth
        .filter((i) => i.id !== flipped)
        .slice(0, 10)
        .map((i) => i.id),
    );
    const { items } = await listAll(core, world.generated.mint, 50);
    expect(items.map((i) => i.id)).toEqual(truth.filter((i) => i.id !== flipped).map((i) => i.id));
    expect(items.some((i) => i.id === foreign.id || i.id === burnt.id)).toBe(false);
  });

  it("fetches again when filtering empties a page, within its bound", async () => {
    proxy.groupCalls.length = 0;
    proxy.rewrite = (result, call) => {
      if (call === 1) for (const item of result.items) item.grouping[0].verified = false;
    };
    const page = await core.list({ address: world.generated.mint, limit: 5 });
    expect(page.items.map((i) => i.id)).toEqual(truth.slice(6, 11).map((i) => i.id));
    expect(proxy.groupCalls).toHaveLength(2);

    proxy.groupCalls.length = 0;
    proxy.rewrite = (result) => {
      for (const item of result.items) item.grouping = [];
    };
    const empty = await core.list({ address: world.generated.mint, limit: 5, cursor: page.nextCursor! });
    // Nothing to show after four calls, but the cursor moved on: the client is never stuck.
    expect(empty.items).toEqual([]);
    expect(proxy.groupCalls).toHaveLength(4);
    expect(empty.nextCursor).not.toBe(page.nextCursor);
    proxy.rewrite = undefined;
    const next = await core.list({ address: world.generated.mint, limit: 5, cursor: empty.nextCursor! });
    expect(next.items.map((i) => i.id)).toEqual(truth.slice(11 + 4 * 6, 11 + 4 * 6 + 5).map((i) => i.id));
  });
});
