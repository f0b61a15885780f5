/**
 * The seeded world end to end: a localnet launched with LOCALNET_WORLD=1 (the 10,000-item
 * collection, a smaller token population), read over JSON-RPC. Real mainnet accounts come back
 * byte for byte and through getAsset; paging the collection with cursors returns each verified
 * member once and no spoof; the demo wallet's keypair file signs a transfer and a burn that DAS
 * then shows.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import bs58 from "bs58";
import { createKeyPairSignerFromBytes, generateKeyPairSigner, type Address, type KeyPairSigner } from "@solana/kit";
import {
  findAssociatedTokenPda,
  getBurnCheckedInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import { loadRealAccounts } from "../../src/world/real-fixtures.ts";
import { decodeMetadata, tokenStandardName, trimNul } from "../../src/world/token-metadata.ts";
import { TOKEN_METADATA_PROGRAM } from "../../src/world/program-ids.ts";
import type { WorldManifest } from "../../src/world/world-types.ts";
import { signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

let net: TestLocalnet;
let dir: string;
let manifest: WorldManifest;
let stderr = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "solgate-world-test-"));
  net = await startTestLocalnet({
    slotMs: 20,
    startTimeoutMs: 120_000,
    onStderr: (text) => {
      stderr += text;
    },
    world: { collectionSize: 10_000, tokenHolders: 3000, smallMintHolders: [200, 20], dir },
    traffic: false,
  });
  manifest = JSON.parse(readFileSync(join(dir, "world-manifest.json"), "utf8")) as WorldManifest;
});

afterAll(async () => {
  await net?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One DAS call with the params object as the single positional param. */
async function das(method: string, params: Record<string, unknown>): Promise<any> {
  const response = await net.call(method, [params]);
  if (response.error) throw Object.assign(new Error(response.error.message), response.error);
  return response.result;
}

async function landed(signature: string) {
  return waitFor(`${signature} confirmed`, async () => {
    const s = (await net.call("getSignatureStatuses", [[signature]])).result.value[0];
    return s && s.confirmationStatus !== "processed" ? s : null;
  });
}

describe("seeded world over JSON-RPC", () => {
  it("loads the world after its first answer, and says when it has (launcher `loaded`, localnet_status)", async () => {
    // The ready line came first; the world's accounts are written after it (see the README's "Loading").
    await net.handle.loaded;
    expect((await net.handle.status()).loaded).toBe(true);
    expect(stderr).toMatch(/world (manifest )?read in [\d.]+ s, accounts loading in the background/);
    expect(stderr).toMatch(/world loaded in [\d.]+ s: \d+ accounts written/);
  });

  it("prints the manifest path and writes the manifest and the demo keypair", () => {
    expect(stderr).toContain(join(dir, "world-manifest.json"));
    expect(stderr).toContain(manifest.collections[0].mint);
    expect(manifest.demoWallet.keypairFile).toBe(join(dir, "demo-wallet.json"));
    expect(JSON.parse(readFileSync(manifest.demoWallet.keypairFile!, "utf8"))).toHaveLength(64);
  });

  it("serves the real SMB Gen3 and Mad Lads accounts exactly as loaded", async () => {
    const real = loadRealAccounts();
    expect(real).toHaveLength(12);
    const { result } = await net.call("getMultipleAccounts", [real.map((a) => a.address), { encoding: "base64" }]);
    result.value.forEach((value: any, i: number) => {
      expect(value.owner).toBe(real[i].owner);
      expect(BigInt(value.lamports)).toBe(real[i].lamports);
      expect(Buffer.from(value.data[0], "base64").equals(Buffer.from(real[i].data))).toBe(true);
    });
    const one = await net.call("getAccountInfo", [
      "52J4tmbP9o3GHQrkts8vhXm84CLzM7KSXboKGnrw3YTW",
      { encoding: "base64" },
    ]);
    expect(one.result.value.owner).toBe(TOKEN_METADATA_PROGRAM);
  });

  it("answers getAsset for them with what their metadata bytes hold", async () => {
    const metadata = loadRealAccounts().filter((a) => a.owner === TOKEN_METADATA_PROGRAM);
    for (const account of metadata) {
      const onChain = (await net.call("getAccountInfo", [account.address, { encoding: "base64" }])).result.value;
      const m = decodeMetadata(new Uint8Array(Buffer.from(onChain.data[0], "base64")));
      const asset = await das("getAsset", { id: m.mint });
      expect(asset.content.metadata.name).toBe(trimNul(m.name));
      expect(asset.content.metadata.symbol).toBe(trimNul(m.symbol));
      expect(asset.content.metadata.token_standard).toBe(tokenStandardName(m.tokenStandard));
      expect(asset.content.json_uri).toBe(trimNul(m.uri));
      expect(asset.grouping).toEqual([{ group_key: "collection", group_value: m.collection!.key }]);
      expect(m.collection!.verified).toBe(true);
      expect(asset.interface).toBe("ProgrammableNFT");
    }
  });

  it("pages the 10,000-item collection with cursors: every verified member once, no spoof", async () => {
    const collection = manifest.collections[0].mint;
    const ids: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await das("getAssetsByGroup", {
        groupKey: "collection",
        groupValue: collection,
        limit: 1000,
        cursor,
        sortBy: { sortBy: "id", sortDirection: "asc" },
      });
      ids.push(...page.items.map((item: { id: string }) => item.id));
      for (const item of page.items)
        expect(item.grouping).toEqual([{ group_key: "collection", group_value: collection }]);
      if (page.items.length < 1000) break;
      cursor = page.cursor;
    }
    expect(ids).toHaveLength(10_000);
    expect(new Set(ids).size).toBe(10_000);
    // What the chain says: every metadata account verified into the collection is served, plus the compressed members.
    const { result } = await net.call("getProgramAccounts", [TOKEN_METADATA_PROGRAM, { encoding: "base64" }]);
    const onChain = result.map((r: any) => decodeMetadata(new Uint8Array(Buffer.from(r.account.data[0], "base64"))));
    const verified = new Set(
      onChain.filter((m: any) => m.collection?.key === collection && m.collection.verified).map((m: any) => m.mint),
    );
    const spoofs = onChain
      .filter((m: any) => m.collection?.key === collection && !m.collection.verified)
      .map((m: any) => m.mint);
    expect(spoofs.length).toBe(manifest.spoofs.unverifiedMembers.length);
    const lookalikes = onChain
      .filter((m: any) => m.collection?.key === manifest.spoofs.lookalikeCollection)
      .map((m: any) => m.mint);
    expect(lookalikes.length).toBe(manifest.spoofs.lookalikeMembers);
    for (const id of [...spoofs, ...lookalikes]) expect(ids).not.toContain(id);
    const compressed = ids.filter((id) => !verified.has(id));
    expect(compressed.length + verified.size).toBe(10_000);
    expect(compressed.length).toBe(manifest.collections[0].compressedMembers);
    const sample = await das("getAsset", { id: compressed[0] });
    expect(sample.compression.compressed).toBe(true);
    expect((await das("getGrouping", { groupKey: "collection", groupValue: collection })).group_size).toBe(10_000);
  });

  it("lets the demo keypair move one NFT and burn another, and DAS follows", async () => {
    const secret = Uint8Array.from(JSON.parse(readFileSync(manifest.demoWallet.keypairFile!, "utf8")) as number[]);
    const demo: KeyPairSigner = await createKeyPairSignerFromBytes(secret);
    expect(demo.address).toBe(manifest.demoWallet.address);
    const [moved, burnt] = manifest.demoWallet.nfts as Address[];
    const friend = await generateKeyPairSigner();
    const [source] = await findAssociatedTokenPda({
      owner: demo.address,
      mint: moved,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const [destination] = await findAssociatedTokenPda({
      owner: friend.address,
      mint: moved,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const blockhash = (await net.rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value;
    const transfer = await signedTransaction(
      demo,
      [
        getCreateAssociatedTokenIdempotentInstruction({
          payer: demo,
          ata: destination,
          owner: friend.address,
          mint: moved,
        }),
        getTransferCheckedInstruction({ source, mint: moved, destination, authority: demo, amount: 1n, decimals: 0 }),
      ],
      blockhash,
    );
    const [burnFrom] = await findAssociatedTokenPda({
      owner: demo.address,
      mint: burnt,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const burn = await signedTransaction(
      demo,
      [getBurnCheckedInstruction({ account: burnFrom, mint: burnt, authority: demo, amount: 1n, decimals: 0 })],
      blockhash,
    );
    for (const tx of [transfer, burn]) {
      const sent = await net.call("sendTransaction", [
        tx.base64,
        { encoding: "base64", preflightCommitment: "confirmed" },
      ]);
      expect(sent.error).toBeUndefined();
      expect((await landed(tx.signature)).err).toBeNull();
    }
    expect((await das("getAsset", { id: moved })).ownership.owner).toBe(friend.address);
    expect((await das("getAsset", { id: burnt })).burnt).toBe(true);
    const collection = manifest.collections[0].mint;
    expect((await das("getGrouping", { groupKey: "collection", groupValue: collection })).group_size).toBe(9_999);
    const page = await das("getAssetsByGroup", {
      groupKey: "collection",
      groupValue: collection,
      limit: 1000,
      page: 1,
      sortBy: { sortBy: "id", sortDirection: "asc" },
    });
    const pages = [page];
    for (let p = 2; p <= 10; p++)
      pages.push(
        await das("getAssetsByGroup", { groupKey: "collection", groupValue: collection, limit: 1000, page: p }),
      );
    expect(pages.flatMap((x) => x.items.map((i: { id: string }) => i.id))).not.toContain(burnt);
    expect(bs58.decode(friend.address)).toHaveLength(32);
  });

  it("takes DAS named params (an object), as DAS SDKs send them, and positional ones alike", async () => {
    const mint = manifest.collections[0].mint;
    const named = await net.post({
      jsonrpc: "2.0",
      id: 1,
      method: "getAssetsByGroup",
      params: { groupKey: "collection", groupValue: mint, limit: 3, sortBy: { sortBy: "id" } },
    });
    const positional = await das("getAssetsByGroup", {
      groupKey: "collection",
      groupValue: mint,
      limit: 3,
      sortBy: { sortBy: "id" },
    });
    expect((named.json as any).result.items.map((a: any) => a.id)).toEqual(positional.items.map((a: any) => a.id));
    expect(positional.items).toHaveLength(3);
    // Solana's own methods keep agave's refusal of named params.
    const slot = await net.post({ jsonrpc: "2.0", id: 2, method: "getSlot", params: { commitment: "processed" } });
    expect((slot.json as any).error.code).toBe(-32602);
  });

  it("answers DAS errors as a provider does and keeps running", async () => {
    const unknown = await net.call("getAsset", [{ id: "11111111111111111111111111111111" }]);
    expect(unknown.error).toEqual({ code: -32000, message: "Database Error: RecordNotFound Error: Asset Not Found" });
    const tooMany = await net.call("getAssetsByGroup", [
      { groupKey: "collection", groupValue: manifest.collections[0].mint, limit: 5000 },
    ]);
    expect(tooMany.error.code).toBe(-32000);
    const badCursor = await net.call("getAssetsByGroup", [
      { groupKey: "collection", groupValue: manifest.collections[0].mint, cursor: "0IOl" },
    ]);
    expect(badCursor.error.message).toBe("Cursor Validation Err: 0IOl is invalid");
    expect((await net.call("getSlot", [])).result).toBeTypeOf("number");
  });
});
