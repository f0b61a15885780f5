/**
 * The full-size world: the generated collection with 10,000 members, listed with limit 1,000 and
 * compared with the chain's Metadata accounts and the compressed leaves of its Merkle tree.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCollections } from "../../src/collections/collections.ts";
import type { Collections } from "../../src/collections/collections.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";
import { startCollectionWorld } from "./collection-world.ts";
import type { CollectionWorld } from "./collection-world.ts";

let world: CollectionWorld;
let upstream: Upstream;
let collections: Collections;

beforeAll(async () => {
  world = await startCollectionWorld(10_000);
  upstream = createUpstream({ chain: "localnet", rpcUrls: [world.localnet.rpcUrl], maxRetries: 0 });
  collections = createCollections({ upstream });
}, 180_000);
afterAll(async () => {
  await upstream?.close();
  await world?.stop();
});

describe("the 10,000-member collection", () => {
  it("GetCollection reports the on-chain size", async () => {
    const info = await collections.get(world.generated.mint);
    expect(info).toMatchObject({ name: "Solgate Sentinels", symbol: "SNTL", itemCount: 10_000n });
    expect(world.metadata.get(world.generated.mint)!.collectionDetails).toEqual({ __kind: "V1", size: 10_000n });
  });

  it("limit 1000 lists every verified member exactly once, spoofs excluded, compressed ones flagged", async () => {
    const ids: string[] = [];
    const compressed: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await collections.list({ address: world.generated.mint, limit: 1000, cursor });
      for (const item of page.items) {
        ids.push(item.id);
        if (item.compressed) compressed.push(item.id);
      }
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBeLessThanOrEqual(11);
    expect(ids).toHaveLength(10_000);
    expect([...ids].sort()).toEqual([...world.verifiedMembers(world.generated.mint)].sort());
    expect(compressed.sort()).toEqual([...world.compressedIds].sort());
    const spoofs = new Set(world.manifest.spoofs.unverifiedMembers);
    expect(ids.some((id) => spoofs.has(id))).toBe(false);
    expect(spoofs.size).toBeGreaterThan(0);
  });
});
