/**
 * The world builder: deterministic from its seed, internally consistent (mint supplies equal the
 * balances, every NFT held once), with the members, spoofs and look-alikes the issue asks for, and
 * a demo keypair that really signs for the demo wallet.
 */
import { createHash, createPublicKey, sign, verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import bs58 from "bs58";
import { buildWorld } from "../../src/world/world-builder.ts";
import {
  DEFAULT_WORLD_CACHE_DIR,
  DEFAULT_WORLD_OPTIONS,
  parseWorldConfig,
  type WorldOptions,
} from "../../src/world/world-options.ts";
import { TOKEN_METADATA_PROGRAM, TOKEN_PROGRAM } from "../../src/world/program-ids.ts";
import { decodeMetadata, TokenStandard, trimNul } from "../../src/world/token-metadata.ts";
import {
  decodeMint,
  decodeTokenAccount,
  MINT_SIZE,
  TOKEN_ACCOUNT_SIZE,
  TokenAccountState,
} from "../../src/world/spl-token-layout.ts";
import { keypairFromSeed, solanaCliKeypairJson } from "../../src/world/seeded-random.ts";
import type { World } from "../../src/world/world-types.ts";

const small: WorldOptions = {
  ...DEFAULT_WORLD_OPTIONS,
  collectionSize: 600,
  tokenHolders: 700,
  smallMintHolders: [40, 9],
  nftOwners: 90,
};

function digest(world: World): string {
  const hash = createHash("sha256");
  for (const a of world.accounts) hash.update(a.address).update(a.owner).update(a.lamports.toString()).update(a.data);
  for (const c of world.compressedAssets) hash.update(c.id).update(c.owner);
  return hash.digest("hex");
}

describe("buildWorld", () => {
  const world = buildWorld(small);
  const byAddress = new Map(world.accounts.map((a) => [a.address, a]));
  const metadata = world.accounts.filter((a) => a.owner === TOKEN_METADATA_PROGRAM).map((a) => decodeMetadata(a.data));
  const [collection, lookalike] = world.manifest.collections;

  it("is the same world, byte for byte, for the same seed, and another for another seed", () => {
    expect(digest(buildWorld(small))).toBe(digest(world));
    expect(digest(buildWorld({ ...small, seed: "other" }))).not.toBe(digest(world));
  });

  it("keeps addresses stable when an unrelated size changes", () => {
    const fewerHolders = buildWorld({ ...small, tokenHolders: 10 });
    expect(fewerHolders.manifest.collections[0]).toEqual(collection);
    expect(fewerHolders.manifest.demoWallet.address).toBe(world.manifest.demoWallet.address);
  });

  it("has a sized collection whose verified members (accounts and compressed) number collectionSize", () => {
    const parent = metadata.find((m) => m.mint === collection.mint)!;
    expect(parent.collectionDetails).toEqual({ __kind: "V1", size: 600n });
    expect(trimNul(parent.name)).toBe(collection.name);
    const verified = metadata.filter((m) => m.collection?.key === collection.mint && m.collection.verified);
    expect(verified.length + world.compressedAssets.length).toBe(600);
    expect(collection.verifiedMembers).toBe(600);
    expect(world.compressedAssets.length).toBeGreaterThan(30); // ~10%
    expect(
      world.compressedAssets.every(
        (c) => c.metadata.collection?.key === collection.mint && c.metadata.collection.verified,
      ),
    ).toBe(true);
    const programmable = verified.filter((m) => m.tokenStandard === TokenStandard.ProgrammableNonFungible);
    expect(programmable.length).toBe(collection.programmableMembers);
    expect(programmable.length).toBeGreaterThan(50); // ~20% of ~540
  });

  it("adds spoofs: unverified claims on the collection and a look-alike with the same name and symbol", () => {
    const unverified = metadata.filter((m) => m.collection?.key === collection.mint && !m.collection.verified);
    expect(unverified.map((m) => m.mint).sort()).toEqual([...world.manifest.spoofs.unverifiedMembers].sort());
    expect(unverified).toHaveLength(small.unverifiedSpoofs);
    const parent = metadata.find((m) => m.mint === collection.mint)!;
    const fake = metadata.find((m) => m.mint === lookalike.mint)!;
    expect(fake.name).toBe(parent.name);
    expect(fake.symbol).toBe(parent.symbol);
    expect(fake.updateAuthority).not.toBe(parent.updateAuthority);
    const fakeMembers = metadata.filter((m) => m.collection?.key === lookalike.mint);
    expect(fakeMembers).toHaveLength(small.lookalikeMembers);
    expect(fakeMembers.every((m) => m.collection!.verified && trimNul(m.name).startsWith("Solgate Sentinel #"))).toBe(
      true,
    );
  });

  it("gives every NFT a supply-1 mint held by exactly one token account, frozen for pNFTs", () => {
    const nfts = metadata.filter(
      (m) => m.tokenStandard === TokenStandard.NonFungible || m.tokenStandard === TokenStandard.ProgrammableNonFungible,
    );
    const holders = new Map<string, number>();
    for (const a of world.accounts) {
      if (a.owner !== TOKEN_PROGRAM || a.data.length !== TOKEN_ACCOUNT_SIZE) continue;
      const t = decodeTokenAccount(a.data)!;
      const mint = bs58.encode(t.mint);
      holders.set(mint, (holders.get(mint) ?? 0) + Number(t.amount));
    }
    for (const m of nfts) {
      const mint = decodeMint(byAddress.get(m.mint)!.data)!;
      expect(mint.supply).toBe(1n);
      expect(mint.decimals).toBe(0);
      expect(holders.get(m.mint)).toBe(1);
    }
    const frozen = world.accounts.filter(
      (a) =>
        a.owner === TOKEN_PROGRAM && a.data.length === TOKEN_ACCOUNT_SIZE && a.data[108] === TokenAccountState.Frozen,
    );
    expect(frozen.length).toBe(collection.programmableMembers! + 4); // + the 4 real pNFT holdings
  });

  it("has fungible mints whose supply is the sum of their holders' balances", () => {
    expect(world.manifest.fungibleMints.map((m) => m.holders)).toEqual([700, 40, 9]);
    for (const m of world.manifest.fungibleMints) {
      const mint = decodeMint(byAddress.get(m.mint)!.data)!;
      let sum = 0n;
      let count = 0;
      for (const a of world.accounts) {
        if (a.owner !== TOKEN_PROGRAM || a.data.length !== TOKEN_ACCOUNT_SIZE) continue;
        const t = decodeTokenAccount(a.data)!;
        if (bs58.encode(t.mint) !== m.mint) continue;
        sum += t.amount;
        count++;
      }
      expect(sum).toBe(mint.supply);
      expect(String(mint.supply)).toBe(m.supply);
      expect(count).toBe(m.holders + 1); // + the demo wallet
      expect(mint.decimals).toBe(m.decimals);
    }
    expect(
      world.accounts.filter((a) => a.owner === TOKEN_PROGRAM && a.data.length === MINT_SIZE).length,
    ).toBeGreaterThan(600);
  });

  it("funds a demo wallet whose solana-cli keypair signs for it, holding NFTs and tokens", () => {
    const demo = byAddress.get(world.manifest.demoWallet.address)!;
    expect(demo.lamports).toBe(small.demoWalletLamports);
    const bytes = JSON.parse(solanaCliKeypairJson(world.demoWallet)) as number[];
    expect(bytes).toHaveLength(64);
    const again = keypairFromSeed(Uint8Array.from(bytes.slice(0, 32)));
    expect(again.address).toBe(world.manifest.demoWallet.address);
    expect(bs58.encode(Uint8Array.from(bytes.slice(32)))).toBe(world.manifest.demoWallet.address);
    const message = Buffer.from("hello");
    const signature = sign(null, message, again.privateKey);
    const publicKey = createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(bytes.slice(32)).toString("base64url") },
      format: "jwk",
    });
    expect(verify(null, message, publicKey, signature)).toBe(true);
    expect(world.manifest.demoWallet.nfts).toHaveLength(3);
    for (const nft of world.manifest.demoWallet.nfts) {
      const holding = world.accounts.find(
        (a) => a.owner === TOKEN_PROGRAM && a.data.length === 165 && bs58.encode(a.data.subarray(0, 32)) === nft,
      )!;
      expect(bs58.encode(holding.data.subarray(32, 64))).toBe(world.manifest.demoWallet.address);
      expect(holding.data[108]).toBe(TokenAccountState.Initialized); // movable with a plain SPL transfer
    }
    expect(world.compressedAssets.find((c) => c.id === world.manifest.demoWallet.compressedNfts[0])?.owner).toBe(
      world.manifest.demoWallet.address,
    );
  });

  it("includes the real fixtures unchanged", () => {
    expect(byAddress.get("52J4tmbP9o3GHQrkts8vhXm84CLzM7KSXboKGnrw3YTW")?.owner).toBe(TOKEN_METADATA_PROGRAM);
    expect(world.manifest.collections.slice(2).map((c) => [c.name, c.verifiedMembers])).toEqual([
      ["SMB Gen3", 3],
      ["Mad Lads", 1],
    ]);
    expect(
      buildWorld({ ...small, realAccounts: false }).accounts.some(
        (a) => a.address === "52J4tmbP9o3GHQrkts8vhXm84CLzM7KSXboKGnrw3YTW",
      ),
    ).toBe(false);
  });
});

describe("parseWorldConfig", () => {
  it("defaults to the issue's sizes, on unless told otherwise", () => {
    expect(parseWorldConfig({})).toEqual({
      enabled: true,
      outDir: undefined,
      cacheDir: DEFAULT_WORLD_CACHE_DIR,
      options: DEFAULT_WORLD_OPTIONS,
    });
    expect(parseWorldConfig({}, false).enabled).toBe(false);
    expect(DEFAULT_WORLD_OPTIONS.collectionSize).toBe(10_000);
    expect(DEFAULT_WORLD_OPTIONS.tokenHolders).toBe(100_000);
  });

  it("reads sizes and switches from the environment", () => {
    const c = parseWorldConfig(
      {
        LOCALNET_WORLD: "0",
        LOCALNET_COLLECTION_SIZE: "250",
        LOCALNET_TOKEN_HOLDERS: "12",
        LOCALNET_SMALL_MINT_HOLDERS: "3, 4",
        LOCALNET_WORLD_SEED: "s",
        LOCALNET_WORLD_DIR: "/tmp/x",
      },
      true,
    );
    expect(c.enabled).toBe(false);
    expect(c.outDir).toBe("/tmp/x");
    expect(c.options).toMatchObject({ collectionSize: 250, tokenHolders: 12, smallMintHolders: [3, 4], seed: "s" });
  });

  it("names the bad variable", () => {
    expect(() => parseWorldConfig({ LOCALNET_COLLECTION_SIZE: "ten" })).toThrow(/LOCALNET_COLLECTION_SIZE/u);
    expect(() => parseWorldConfig({ LOCALNET_WORLD: "yes" })).toThrow(/LOCALNET_WORLD/u);
    expect(() => parseWorldConfig({ LOCALNET_COMPRESSED_SHARE: "2" })).toThrow(/LOCALNET_COMPRESSED_SHARE/u);
  });
});
