/**
 * The wallets core over a seeded localnet: the demo wallet's fungible balances (named, NFTs left
 * out, each amount its account's bytes), paging by cursor, zero balances on request, and its NFTs
 * through DAS getAssetsByOwner.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address } from "@solana/kit";
import { SolgateError } from "../../src/errors.ts";
import { compareAddresses } from "../../src/programs/address-order.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";
import { createWallets } from "../../src/wallets/wallets.ts";
import type { WalletNft, Wallets, WalletToken } from "../../src/wallets/wallets.ts";
import { startSeededLocalnet } from "../programs/localnet-world.ts";
import type { SeededLocalnet } from "../programs/localnet-world.ts";

let world: SeededLocalnet;
let upstream: Upstream;
let wallets: Wallets;

beforeAll(async () => {
  world = await startSeededLocalnet({ tokenHolders: 50, smallHolders: 5 });
  upstream = createUpstream({ chain: "localnet", rpcUrls: [world.localnet.rpcUrl] });
  wallets = createWallets({ upstream });
});
afterAll(async () => {
  await upstream?.close();
  await world?.stop();
});

async function allTokens(owner: string, limit: number, includeZero = false): Promise<WalletToken[]> {
  const items: WalletToken[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await wallets.listTokens({ owner, limit, cursor, includeZero });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    items.push(...page.items);
    if (page.nextCursor === null) return items;
    cursor = page.nextCursor;
  }
  throw new Error("paging did not end");
}

describe("ListWalletTokens' core", () => {
  it("lists each fungible mint the demo wallet holds once, named, with its account's amount", async () => {
    const demo = world.manifest.demoWallet;
    const tokens = await allTokens(demo.address, 100);
    expect(tokens.map((t) => t.mint).sort()).toEqual(world.manifest.fungibleMints.map((m) => m.mint).sort());
    for (const token of tokens) {
      const mint = world.manifest.fungibleMints.find((m) => m.mint === token.mint)!;
      expect(token).toMatchObject({ program: "spl-token", symbol: mint.symbol, state: "initialized" });
      expect(token.name).toMatch(/\S/);
      const { value } = await upstream.rpc.getAccountInfo(address(token.tokenAccount), { encoding: "base64" }).send();
      const bytes = Buffer.from(value!.data[0], "base64");
      expect(token.amount.raw).toBe(bytes.readBigUInt64LE(64));
      expect(token.amount.decimals).toBe(mint.decimals);
    }
    for (let i = 1; i < tokens.length; i++)
      expect(compareAddresses(tokens[i - 1].tokenAccount, tokens[i].tokenAccount)).toBeLessThan(0);
  });

  it("pages one balance at a time to the same list, and refuses another wallet's cursor", async () => {
    const demo = world.manifest.demoWallet.address;
    const whole = await allTokens(demo, 100);
    expect(await allTokens(demo, 1)).toEqual(whole);
    const first = await wallets.listTokens({ owner: demo, limit: 1 });
    const holder = (await wallets.listNfts({ owner: demo, limit: 1 })).owner;
    expect(holder).toBe(demo);
    const other = world.manifest.spoofs.lookalikeCollection;
    const refused = await wallets.listTokens({ owner: other, cursor: first.nextCursor! }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SolgateError);
    expect((refused as SolgateError).details.field).toBe("cursor");
  });

  it("refuses a malformed owner and an out-of-range limit", async () => {
    expect(((await wallets.listTokens({ owner: "x" }).catch((e: unknown) => e)) as SolgateError).reason).toBe(
      "INVALID_ADDRESS",
    );
    expect(
      (
        (await wallets
          .listTokens({ owner: world.manifest.demoWallet.address, limit: 1001 })
          .catch((e: unknown) => e)) as SolgateError
      ).details.field,
    ).toBe("limit");
  });
});

describe("ListWalletNfts' core", () => {
  it("lists the demo wallet's regular and compressed NFTs with their verified collection, paged by id", async () => {
    const demo = world.manifest.demoWallet;
    const items: WalletNft[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const page = await wallets.listNfts({ owner: demo.address, limit: 2, cursor });
      items.push(...page.items);
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(new Set(items.map((i) => i.id))).toEqual(new Set([...demo.nfts, ...demo.compressedNfts]));
    expect(items.map((i) => i.id)).toHaveLength(demo.nfts.length + demo.compressedNfts.length);
    const sentinels = world.manifest.collections.find((c) => c.seeded)!.mint;
    for (const item of items) {
      expect(item.collection).toBe(sentinels);
      expect(item.compressed).toBe(demo.compressedNfts.includes(item.id));
      expect(item.name).toMatch(/\S/);
    }
  });
});
