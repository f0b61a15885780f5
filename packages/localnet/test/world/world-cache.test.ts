/**
 * The built-world cache: a second load of the same options reads the file and gives the very world a
 * build gives (accounts byte for byte, assets, manifest, a demo keypair that signs); other options are
 * another file; a file of another code version is removed when a new one is written; a damaged file is
 * rebuilt, and no folder means no cache.
 */
import { sign, verify, createPublicKey } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import bs58 from "bs58";
import { buildWorld } from "../../src/world/world-builder.ts";
import { loadOrBuildWorld, readCachedHead, worldCodeVersion } from "../../src/world/world-cache.ts";
import { DEFAULT_WORLD_OPTIONS, parseWorldConfig, type WorldOptions } from "../../src/world/world-options.ts";

const small: WorldOptions = {
  ...DEFAULT_WORLD_OPTIONS,
  collectionSize: 120,
  tokenHolders: 150,
  smallMintHolders: [10, 3],
  nftOwners: 20,
  realAccounts: false,
};
const dir = mkdtempSync(join(tmpdir(), "world-cache-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("loadOrBuildWorld", () => {
  it("builds and writes once, then reads back the same world", () => {
    const first = loadOrBuildWorld(small, dir);
    expect(first.source).toBe("built");
    expect(first.file).toBeDefined();
    const second = loadOrBuildWorld(small, dir);
    expect(second.source).toBe("hit");
    expect(second.file).toBe(first.file);
    const built = buildWorld(small);
    expect(second.world.accounts.length).toBe(built.accounts.length);
    // In key byte order, each with its key beside it.
    const byAddress = new Map(built.accounts.map((b) => [b.address, b]));
    for (let i = 1; i < second.keys.length / 32; i++) {
      expect(
        Buffer.compare(second.keys.subarray((i - 1) * 32, i * 32), second.keys.subarray(i * 32, i * 32 + 32)),
      ).toBe(-1);
    }
    expect(second.keys).toEqual(first.keys);
    second.world.accounts.forEach((a, i) => {
      expect(bs58.encode(second.keys.subarray(i * 32, i * 32 + 32))).toBe(a.address);
      const b = byAddress.get(a.address)!;
      expect([a.address, a.owner, a.lamports, a.executable]).toEqual([b.address, b.owner, b.lamports, b.executable]);
      expect(Buffer.from(a.data).equals(Buffer.from(b.data))).toBe(true);
    });
    expect(second.world.compressedAssets).toEqual(built.compressedAssets);
    // Its head (what a start prints before it reads the accounts) is the same manifest and demo wallet.
    const head = readCachedHead(small, dir);
    expect(head?.file).toBe(first.file);
    expect(head?.manifest).toEqual(built.manifest);
    expect(head?.demoWallet.address).toBe(built.demoWallet.address);
    expect(readCachedHead({ ...small, seed: "not cached" }, dir)).toBeUndefined();
    expect(readCachedHead(small, undefined)).toBeUndefined();
    expect(second.world.offchainJson).toEqual(built.offchainJson);
    expect(second.world.manifest).toEqual(built.manifest);
    // The demo keypair is rebuilt from its seed, and signs for the demo wallet.
    const message = Buffer.from("solgate");
    const signature = sign(null, message, second.world.demoWallet.privateKey);
    expect(second.world.demoWallet.address).toBe(built.demoWallet.address);
    expect(verify(null, message, createPublicKey(built.demoWallet.privateKey), signature)).toBe(true);
  });

  it("keys by options, drops files of other code versions, and rebuilds a damaged file", () => {
    const other = loadOrBuildWorld({ ...small, seed: "another" }, dir);
    expect(other.source).toBe("built");
    // Two worlds, each with its head file.
    expect(readdirSync(dir).filter((n) => n.endsWith(".v8") && !n.endsWith(".head.v8"))).toHaveLength(2);
    expect(readdirSync(dir).filter((n) => n.endsWith(".head.v8"))).toHaveLength(2);
    writeFileSync(join(dir, "world-0000000000000000-0000000000000000.v8"), "stale");
    writeFileSync(other.file as string, "damaged");
    const again = loadOrBuildWorld({ ...small, seed: "another" }, dir);
    expect(again.source).toBe("built");
    expect(again.world.manifest.seed).toBe("another");
    const names = readdirSync(dir);
    expect(names.every((n) => n.startsWith(`world-${worldCodeVersion()}-`))).toBe(true);
    expect(loadOrBuildWorld({ ...small, seed: "another" }, dir).source).toBe("hit");
  });

  it("has no cache without a folder, and LOCALNET_WORLD_CACHE=off gives none", () => {
    const uncached = loadOrBuildWorld(small, undefined);
    expect([uncached.source, uncached.file]).toEqual(["built", undefined]);
    expect(parseWorldConfig({ LOCALNET_WORLD_CACHE: "off" }).cacheDir).toBeUndefined();
    expect(parseWorldConfig({ LOCALNET_WORLD_CACHE: "/x/y" }).cacheDir).toBe("/x/y");
    expect(parseWorldConfig({}).cacheDir).toMatch(/solgate-localnet-cache$/);
  });
});
