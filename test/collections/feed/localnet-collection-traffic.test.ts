/**
 * The localnet's collection traffic read the way the gateway reads it: a localnet child process with its
 * world (a 60-member generated collection) and its collection traffic running real signed transactions
 * through its Token Metadata and Bubblegum programs; every block is fetched with `getBlock` (base64, full)
 * and parsed by the gateway's own parser (feed-block.ts, membership-instructions.ts). The verified size the
 * parsed events imply must be what DAS answers at the end (getAssetsByGroup), spoofed mints must never
 * appear in an event, every kind of change must have happened, and the marketplace's floor must move.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAddressEncoder, getProgramDerivedAddress, getU64Encoder } from "@solana/kit";
import type { Address } from "@solana/kit";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import { decodeMetadata, deriveKey } from "@solgate/localnet/testing";
import bs58 from "bs58";
import { feedBlockOf } from "../../../src/collections/feed/feed-block.ts";
import { membershipChangesOf } from "../../../src/collections/feed/membership-instructions.ts";
import type { MembershipChange } from "../../../src/collections/feed/membership-instructions.ts";
import { createMagicEdenSource } from "../../../src/collections/market/magic-eden.ts";

const TOKEN_METADATA = "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s" as Address;
const BUBBLEGUM = "BGUMAp9Gq7iTEuizy4pqaxsTyUCBK68MDfK752saRPUY" as Address;
const COLLECTION_SIZE = 60;
const SYMBOL = "solgate_sentinels";
const address = getAddressEncoder();

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

async function metadataAddress(mint: string): Promise<string> {
  const [pda] = await getProgramDerivedAddress({
    programAddress: TOKEN_METADATA,
    seeds: ["metadata", address.encode(TOKEN_METADATA), address.encode(mint as Address)],
  });
  return pda;
}

async function assetId(tree: string, nonce: bigint): Promise<string> {
  const [pda] = await getProgramDerivedAddress({
    programAddress: BUBBLEGUM,
    seeds: ["asset", address.encode(tree as Address), getU64Encoder().encode(nonce)],
  });
  return pda;
}

describe("the localnet's collection traffic, parsed from its blocks by the gateway's feed parser", () => {
  let localnet: LocalnetHandle;
  let dir: string;
  const collection = bs58.encode(deriveKey("solgate", "collection/mint"));
  const changes: (MembershipChange & { slot: bigint; signature: string })[] = [];
  const floors = new Set<string>();
  let failedTransactions = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "solgate-collection-traffic-"));
    localnet = await startLocalnet({
      startTimeoutMs: 120_000,
      slotMs: 60,
      // Blocks are read at `confirmed`: with no lag, the last block the chain made is readable after a freeze.
      confirmSlots: 0,
      world: { collectionSize: COLLECTION_SIZE, tokenHolders: 50, smallMintHolders: [5, 5], nftOwners: 50, dir },
      traffic: { ratePerSlot: 1, collectionOpsPerSlot: 1 },
    });
    await localnet.loaded;
    expect(localnet.marketplace?.collections[collection]).toBe(SYMBOL);
    const source = createMagicEdenSource({ url: localnet.marketplace!.url });
    // Run until every kind of change was seen (or the time runs out), reading the floor as it goes.
    const kinds = () => new Set(changes.map((c) => `${c.kind}:${c.compressed}`));
    let next = 0n;
    const deadline = Date.now() + 40_000;
    for (;;) {
      const floor = await source.fetchFloor(SYMBOL, AbortSignal.timeout(5_000));
      if (floor !== null) floors.add(floor.toString());
      const stop = kinds().size >= 8 || Date.now() > deadline;
      if (stop) await localnet.control({ freeze: true });
      const tip = await rpc<number>(localnet.rpcUrl, "getSlot", [{ commitment: "confirmed" }]);
      const slots = await rpc<number[]>(localnet.rpcUrl, "getBlocks", [Number(next), tip, { commitment: "confirmed" }]);
      for (const slot of slots) {
        const block = await rpc<{ transactions: { meta: { err: unknown } }[] }>(localnet.rpcUrl, "getBlock", [
          slot,
          {
            encoding: "base64",
            transactionDetails: "full",
            maxSupportedTransactionVersion: 0,
            rewards: false,
            commitment: "confirmed",
          },
        ]);
        failedTransactions += block.transactions.filter((t) => t.meta.err !== null).length;
        for (const tx of feedBlockOf(BigInt(slot), block).transactions)
          for (const change of membershipChangesOf(tx))
            changes.push({ ...change, slot: BigInt(slot), signature: tx.signature });
      }
      next = BigInt(tip) + 1n;
      if (stop) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }, 180_000);

  afterAll(async () => {
    await localnet?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("makes every kind of membership change, classic and compressed", () => {
    const seen = new Set(changes.map((c) => `${c.kind}:${c.compressed ? "compressed" : "classic"}`));
    for (const kind of [
      "added:classic",
      "removed:classic",
      "burned:classic",
      "transferred:classic",
      "added:compressed",
      "transferred:compressed",
      "burned:compressed",
      "removed:compressed",
    ])
      expect(seen, kind).toContain(kind);
    // Spoofers' verify attempts fail on chain, and failed transactions are never read.
    expect(failedTransactions).toBeGreaterThan(0);
  });

  it("names only the world's collection, and never a spoofed mint", async () => {
    for (const change of changes) if (change.collection !== undefined) expect(change.collection).toBe(collection);
    const named = new Set<string>();
    for (const change of changes) {
      if (change.metadata !== undefined) named.add(change.metadata);
      if (change.asset !== undefined) named.add(change.asset);
    }
    type DasAsset = { id: string; grouping: { verified?: boolean }[]; authorities: { address: string }[] };
    const listed = await rpc<{ items: DasAsset[] }>(localnet.rpcUrl, "getAssetsByGroup", {
      groupKey: "collection",
      groupValue: collection,
      page: 1,
      limit: 1000,
      options: { showUnverifiedCollections: true },
    } as never);
    // The traffic's own items (their authority is its collection delegate) come and go by events; the rest
    // of the unverified ones are spoofs: the world's and the traffic spoofer's.
    const namedAuthorities = new Set<string>();
    for (const asset of listed.items)
      if (named.has(asset.id) || named.has(await metadataAddress(asset.id)))
        namedAuthorities.add(asset.authorities[0]!.address);
    const spoofs = listed.items.filter(
      (a) => a.grouping[0]?.verified === false && !namedAuthorities.has(a.authorities[0]!.address),
    );
    expect(spoofs.length).toBeGreaterThan(0);
    for (const asset of spoofs) {
      expect(named.has(asset.id)).toBe(false);
      expect(named.has(await metadataAddress(asset.id))).toBe(false);
    }
  });

  it("implies the verified size DAS answers once the chain stops", async () => {
    // Membership from the events alone, starting from the seeded collection's verified members.
    const verified = new Map<string, boolean>(); // metadata address or asset id -> verified
    let size = COLLECTION_SIZE;
    // Bubblegum (v1) leaves a sized collection's count alone when a compressed member burns.
    let compressedBurns = 0;
    for (const change of changes) {
      if (change.kind === "added") {
        const key = change.metadata ?? change.asset!;
        if (verified.get(key) !== true) size++;
        verified.set(key, true);
      } else if (change.kind === "removed") {
        const key = change.metadata ?? change.asset!;
        if (verified.get(key) === true) size--;
        verified.set(key, false);
      } else if (change.kind === "burned") {
        const key = change.compressed
          ? await assetId(change.leaf!.tree, change.leaf!.nonce)
          : await metadataAddress(change.asset!);
        if (verified.get(key) === true) {
          size--;
          if (change.compressed) compressedBurns++;
        }
        verified.delete(key);
      }
    }
    const das = await rpc<{ total: number }>(localnet.rpcUrl, "getAssetsByGroup", {
      groupKey: "collection",
      groupValue: collection,
      page: 1,
      limit: 1000,
    } as never);
    expect(das.total).toBe(size);
    expect(size).not.toBe(COLLECTION_SIZE);
    // And the collection's own count on chain (its Metadata's collection_details), kept by the programs.
    const account = await rpc<{ value: { data: [string, string] } }>(localnet.rpcUrl, "getAccountInfo", [
      await metadataAddress(collection),
      { encoding: "base64", commitment: "confirmed" },
    ]);
    const parent = decodeMetadata(new Uint8Array(Buffer.from(account.value.data[0], "base64")));
    expect(parent.collectionDetails).toEqual({ __kind: "V1", size: BigInt(size + compressedBurns) });
  });

  it("moves the marketplace's floor, read through the gateway's Magic Eden adapter", () => {
    expect(floors.size).toBeGreaterThan(1);
  });
});
