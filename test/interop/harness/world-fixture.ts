/**
 * The collection the clients read: the localnet seeds a small generated world (sizes set through
 * `LOCALNET_*` before it starts) and writes its manifest; the verified members are read from the
 * localnet's own DAS (`getAssetsByGroup`, sorted by id), not from the gateway.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { CollectionFixture } from "./client-env.ts";

/** World sizes for the interop run: small, so the localnet starts in seconds. Existing values win. */
export const INTEROP_WORLD_ENV: Readonly<Record<string, string>> = {
  LOCALNET_WORLD: "1",
  LOCALNET_COLLECTION_SIZE: "9",
  LOCALNET_NFT_OWNERS: "4",
  LOCALNET_SPOOFS: "3",
  LOCALNET_TOKEN_HOLDERS: "40",
  LOCALNET_SMALL_MINT_HOLDERS: "8,4",
  // The collection stays as seeded (its members are read once at setup and checked against the manifest); its feed
  // still moves: the seeded collection's floor changes at every read of the harness's marketplace.
  LOCALNET_COLLECTION_TRAFFIC: "0",
};

interface ManifestCollection {
  name: string;
  mint: string;
  seeded: boolean;
  verifiedMembers: number;
}

/** Reads the seeded collection from `worldDir`'s manifest and its members from DAS at `rpcUrl`. */
export async function readCollectionFixture(worldDir: string, rpcUrl: string): Promise<CollectionFixture> {
  const manifest = JSON.parse(readFileSync(join(worldDir, "world-manifest.json"), "utf8")) as {
    collections: ManifestCollection[];
    demoWallet: { address: string };
  };
  const collection = manifest.collections.find((c) => c.seeded);
  if (collection === undefined) throw new Error(`no seeded collection in ${worldDir}/world-manifest.json`);
  const sortBy = { sortBy: "id", sortDirection: "asc" };
  // One object of named parameters inside the array: the localnet takes that form (and positional ones).
  const members = await dasIds(rpcUrl, "getAssetsByGroup", {
    groupKey: "collection",
    groupValue: collection.mint,
    page: 1,
    limit: 1000,
    sortBy,
  });
  const nftOwner = manifest.demoWallet.address;
  const nftOwnerIds = await dasIds(rpcUrl, "getAssetsByOwner", {
    ownerAddress: nftOwner,
    page: 1,
    limit: 1000,
    sortBy,
  });
  if (members.length !== collection.verifiedMembers) {
    throw new Error(`the manifest says ${collection.verifiedMembers} verified members, DAS lists ${members.length}`);
  }
  return {
    address: collection.mint,
    name: collection.name,
    itemCount: String(collection.verifiedMembers),
    members,
    nftOwner,
    nftOwnerIds,
  };
}

/** The ids of a DAS listing, from the localnet itself (not through the gateway). */
async function dasIds(rpcUrl: string, method: string, params: Record<string, unknown>): Promise<string[]> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [params] }),
  });
  const body = (await response.json()) as { result?: { items: { id: string }[] }; error?: { message: string } };
  if (body.result === undefined) throw new Error(`${method}: ${body.error?.message ?? "no result"}`);
  return body.result.items.map((item) => item.id);
}
