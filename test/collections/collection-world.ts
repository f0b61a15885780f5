/**
 * A localnet child process seeded with the world (its generated collection sized for the test,
 * few token holders, no traffic), its manifest, and what the chain holds read independently of
 * DAS: every Token Metadata account (getProgramAccounts) decoded by the localnet's own codec, and
 * the compressed members' ids derived with kit from the manifest's Merkle trees (Bubblegum asset
 * PDAs of each leaf), as a wallet would.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getAddressEncoder, getProgramDerivedAddress, getU64Encoder } from "@solana/kit";
import type { Address } from "@solana/kit";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import { decodeMetadata, trimNul } from "@solgate/localnet/testing";
import type { TokenMetadata } from "@solgate/localnet/testing";
import type { ManifestCollection, WorldManifest } from "@solgate/localnet";

export const SMB_GEN3 = "8Rt3Ayqth4DAiPnW9MDFi63TiQJHmohfTWLMQFHi4KZH";
const TOKEN_METADATA = "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s" as Address;
const BUBBLEGUM = "BGUMAp9Gq7iTEuizy4pqaxsTyUCBK68MDfK752saRPUY" as Address;
/** Leaves per tree in the world (Bubblegum max depth 14). */
const TREE_CAPACITY = 1 << 14;

export interface CollectionWorld {
  localnet: LocalnetHandle;
  manifest: WorldManifest;
  /** The generated collection, its look-alike, and the real SMB Gen3. */
  generated: ManifestCollection;
  lookalike: ManifestCollection;
  smb: ManifestCollection;
  /** Every Metadata account on the chain, by mint, as read with getProgramAccounts. */
  metadata: Map<string, TokenMetadata & { address: string }>;
  /** Ids of the generated collection's compressed members, derived from the manifest's trees. */
  compressedIds: string[];
  /** Verified members of `collection` the chain holds: metadata accounts plus compressed leaves. */
  verifiedMembers(collection: string): Set<string>;
  stop(): Promise<void>;
}

/** Starts the world with a generated collection of `collectionSize` members. */
export async function startCollectionWorld(collectionSize: number): Promise<CollectionWorld> {
  const dir = mkdtempSync(join(tmpdir(), "solgate-collections-"));
  const localnet = await startLocalnet({
    startTimeoutMs: 120_000,
    world: { collectionSize, tokenHolders: 50, smallMintHolders: [5, 5], nftOwners: 200, dir },
    traffic: false,
  });
  try {
    const manifest = JSON.parse(readFileSync(join(dir, "world-manifest.json"), "utf8")) as WorldManifest;
    // Raw JSON-RPC: kit's response walk is slow on 10,000 accounts, and only the bytes matter here.
    const response = await fetch(localnet.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "getProgramAccounts",
        params: [TOKEN_METADATA, { encoding: "base64", commitment: "confirmed" }],
      }),
    });
    const accounts = ((await response.json()) as { result: { pubkey: string; account: { data: [string, string] } }[] })
      .result;
    const metadata = new Map<string, TokenMetadata & { address: string }>();
    for (const { pubkey, account } of accounts) {
      const decoded = decodeMetadata(new Uint8Array(Buffer.from(account.data[0], "base64")));
      metadata.set(decoded.mint, {
        ...decoded,
        name: trimNul(decoded.name),
        symbol: trimNul(decoded.symbol),
        uri: trimNul(decoded.uri),
        address: pubkey,
      });
    }
    const byName = (predicate: (c: ManifestCollection) => boolean) => manifest.collections.find(predicate)!;
    const generated = manifest.collections[0];
    const trees = (generated.merkleTree ?? "").split(",").filter((t) => t !== "") as Address[];
    const compressedIds = await Promise.all(
      Array.from({ length: generated.compressedMembers ?? 0 }, async (_, i) => {
        const tree = trees[Math.floor(i / TREE_CAPACITY)];
        const seeds = ["asset", getAddressEncoder().encode(tree), getU64Encoder().encode(BigInt(i % TREE_CAPACITY))];
        return (await getProgramDerivedAddress({ programAddress: BUBBLEGUM, seeds }))[0] as string;
      }),
    );
    return {
      localnet,
      manifest,
      generated,
      lookalike: byName((c) => c.mint === manifest.spoofs.lookalikeCollection),
      smb: byName((c) => c.mint === SMB_GEN3),
      metadata,
      compressedIds,
      verifiedMembers(collection) {
        const ids = new Set(collection === generated.mint ? compressedIds : []);
        for (const m of metadata.values())
          if (m.collection?.verified && m.collection.key === collection) ids.add(m.mint);
        return ids;
      },
      async stop() {
        await localnet.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await localnet.stop();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
