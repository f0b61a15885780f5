/** The account index over a real LiteSVM: genesis, seeding (validated), record(), sorted buckets. */
import { describe, expect, it } from "vitest";
import { LiteSVM } from "litesvm";
import bs58 from "bs58";
import type { Address } from "@solana/kit";
import { createAccountIndex } from "../../src/accounts/account-index.ts";
import { SortedBucket } from "../../src/accounts/sorted-bucket.ts";
import { byPubkeyBytes, mintData, randomAddress, TOKEN, tokenAccountData, U64_MAX } from "./helpers.ts";

describe("createAccountIndex", () => {
  it("starts with the accounts LiteSVM has at genesis (programs, sysvars)", () => {
    const index = createAccountIndex(new LiteSVM());
    expect(index.get(TOKEN)?.executable).toBe(true);
    expect(index.get("SysvarC1ock11111111111111111111111111111111" as Address)?.owner).toBe(
      "Sysvar1111111111111111111111111111111111111",
    );
    expect(index.byOwner("BPFLoaderUpgradeab1e11111111111111111111111" as Address).length).toBeGreaterThan(3);
  });

  it("seeds LiteSVM and the index in one step, with a u64::MAX rent epoch unless told otherwise", () => {
    const svm = new LiteSVM();
    const index = createAccountIndex(svm);
    const [a, b] = [randomAddress(), randomAddress()];
    const written = index.seedAccounts([
      { address: a, owner: TOKEN, lamports: 10n, data: Uint8Array.of(1, 2, 3) },
      { address: bs58.decode(b), owner: bs58.decode(TOKEN), lamports: 20n, data: new Uint8Array(0), rentEpoch: 7n },
    ]);
    expect(written).toBe(2);
    expect(svm.getAccount(a as Address)).toMatchObject({ exists: true, lamports: 10n, data: Uint8Array.of(1, 2, 3) });
    expect(index.get(a)).toMatchObject({ lamports: 10n, rentEpoch: U64_MAX, owner: TOKEN });
    expect(index.get(b)).toMatchObject({ lamports: 20n, rentEpoch: 7n });
    expect(index.store.read(bs58.decode(b))?.rentEpoch).toBe(7n);
  });

  it("refuses malformed seeds before they reach LiteSVM, leaving both untouched", () => {
    const svm = new LiteSVM();
    const index = createAccountIndex(svm);
    const size = index.size;
    const good = { address: randomAddress(), owner: TOKEN, lamports: 1n, data: new Uint8Array(1) };
    const bad = [
      { ...good, address: new Uint8Array(31) },
      { ...good, address: "not base58 0OIl" as Address },
      { ...good, owner: new Uint8Array(33) },
      { ...good, lamports: -1n },
      { ...good, lamports: 2n ** 64n },
      { ...good, lamports: 5 as unknown as bigint },
      { ...good, rentEpoch: 2n ** 64n },
      { ...good, data: new Uint8Array(10 * 1024 * 1024 + 1) },
      { ...good, data: [1, 2] as unknown as Uint8Array },
    ];
    for (const seed of bad) expect(() => index.seedAccount(seed)).toThrow();
    expect(index.size).toBe(size);
    expect(() => index.record([new Uint8Array(5)])).toThrow("32 bytes");
  });

  it("keeps copies: mutating the seeded buffer changes neither LiteSVM nor the index", () => {
    const index = createAccountIndex(new LiteSVM());
    const address = randomAddress();
    const data = Uint8Array.of(9, 9, 9);
    index.seedAccount({ address, owner: TOKEN, lamports: 1n, data });
    data.fill(0);
    expect([...index.get(address)!.data]).toEqual([9, 9, 9]);
    expect([...index.store.read(bs58.decode(address))!.data]).toEqual([9, 9, 9]);
  });

  it("indexes token accounts by mint and owner, only while valid, in byte order", () => {
    const index = createAccountIndex(new LiteSVM());
    const mint = randomAddress();
    const owner = randomAddress();
    index.seedAccount({ address: mint, owner: TOKEN, lamports: 1n, data: mintData({ decimals: 0 }) });
    const accounts = Array.from({ length: 40 }, () => randomAddress());
    for (const address of accounts) {
      index.seedAccount({ address, owner: TOKEN, lamports: 1n, data: tokenAccountData({ mint, owner, amount: 1n }) });
    }
    const byMint = index.tokenAccountsByMint(TOKEN, bs58.decode(mint)).map((e) => e.address);
    expect(byMint).toEqual([...accounts].sort(byPubkeyBytes));
    expect(index.tokenAccountsByOwner(TOKEN, bs58.decode(owner)).map((e) => e.address)).toEqual(byMint);
    // Uninitializing an account (state 0) takes it out of the token buckets, not out of the program.
    index.seedAccount({
      address: accounts[0],
      owner: TOKEN,
      lamports: 1n,
      data: tokenAccountData({ mint, owner, amount: 1n, state: 0 }),
    });
    expect(index.tokenAccountsByMint(TOKEN, bs58.decode(mint))).toHaveLength(39);
    expect(index.byOwner(TOKEN).some((e) => e.address === accounts[0])).toBe(true);
  });
});

describe("SortedBucket", () => {
  it("keeps its cached order through updates, inserts and deletes, like a fresh sort", () => {
    const bucket = new SortedBucket<{ sortKey: string; v: number }>();
    const keys = Array.from({ length: 300 }, (_, i) => String.fromCharCode(65 + ((i * 7919) % 26)) + i.toString(36));
    for (const [i, key] of keys.entries()) bucket.upsert({ sortKey: key, v: i });
    const fresh = () => [...new Set(keys)].filter((k) => bucket.get(k) !== undefined).sort();
    expect(bucket.inOrder().map((e) => e.sortKey)).toEqual(fresh());
    bucket.upsert({ sortKey: keys[10], v: -1 }); // update in place
    expect(bucket.inOrder().find((e) => e.sortKey === keys[10])?.v).toBe(-1);
    for (let i = 0; i < 20; i++) bucket.delete(keys[i * 3]);
    for (let i = 0; i < 400; i++) bucket.upsert({ sortKey: `Z${i}`, v: i }); // past the splice budget
    keys.push(...Array.from({ length: 400 }, (_, i) => `Z${i}`));
    expect(bucket.inOrder().map((e) => e.sortKey)).toEqual(fresh());
    expect(bucket.size).toBe(fresh().length);
  });
});
