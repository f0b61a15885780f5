/**
 * jsonParsed for SPL Token / Token-2022 against what real validators returned: kit's fixture
 * accounts (validator output), 22 real mainnet token accounts, and the real NFT accounts of the
 * DAS test data, all loaded into a real LiteSVM through the index and read back.
 */
import { describe, expect, it } from "vitest";
import type { Address } from "@solana/kit";
import { createTestChain, fixture, fixtureFiles, mintData, seedFromValue, TOKEN, wire } from "./helpers.ts";

const kit = fixture("tokens/spl_token_fixture_accounts_with_validator_jsonParsed.json");
const validatorGpa = fixture("tokens/getProgramAccounts_Tokenkeg_jsonParsed_validator_output_subset.json");

/** kit's accounts, plus the mints its validator output shows only in parsed form, rebuilt byte by byte. */
function kitChain() {
  const chain = createTestChain();
  for (const [address, entry] of Object.entries<any>(kit.accounts))
    chain.index.seedAccount(seedFromValue(address, entry.account));
  for (const { pubkey, account } of validatorGpa.result_subset) {
    if (account.data.parsed.type !== "mint" || chain.index.get(pubkey) !== undefined) continue;
    const info = account.data.parsed.info;
    chain.index.seedAccount({
      address: pubkey as Address,
      owner: TOKEN,
      lamports: BigInt(account.lamports),
      data: mintData({
        decimals: info.decimals,
        supply: BigInt(info.supply),
        mintAuthority: info.mintAuthority,
        freezeAuthority: info.freezeAuthority,
      }),
    });
  }
  return chain;
}

describe("jsonParsed token accounts as a validator renders them (kit fixtures)", () => {
  it("getAccountInfo matches the validator for a token account, a mint, a multisig and a Token-2022 mint with transfer fees", async () => {
    const chain = kitChain();
    for (const [address, entry] of Object.entries<any>(kit.accounts)) {
      const expected = entry.expected_getAccountInfo_jsonParsed;
      if (expected === undefined) continue;
      const result = await chain.call("getAccountInfo", address, { encoding: "jsonParsed" });
      expect(result.value, `${entry.test} (${address})`).toEqual(expected.value);
    }
  });

  it("getTokenAccountsByDelegate matches the validator's entry for the delegated account", async () => {
    const chain = kitChain();
    const entry =
      kit.accounts["6uGCrvzPAta1nc6wP9oHvM6sRDu1kXTMuJSJvro4R4xS"]
        .expected_getTokenAccountsByDelegate_jsonParsed_value_entry;
    const delegate = entry.account.data.parsed.info.delegate;
    const byProgram = await chain.call(
      "getTokenAccountsByDelegate",
      delegate,
      { programId: TOKEN },
      { encoding: "jsonParsed" },
    );
    expect(byProgram.value).toEqual([entry]);
    const byMint = await chain.call(
      "getTokenAccountsByDelegate",
      delegate,
      { mint: entry.account.data.parsed.info.mint },
      { encoding: "jsonParsed" },
    );
    expect(byMint.value).toEqual([entry]);
  });

  it("getProgramAccounts(Tokenkeg, jsonParsed) contains every account of the validator's answer, parsed the same", async () => {
    const chain = kitChain();
    // The validator also created the wrapped-SOL mint; LiteSVM does not by default.
    chain.svm.withNativeMints();
    chain.index.record(["So11111111111111111111111111111111111111112" as Address]);
    const result = await chain.call("getProgramAccounts", TOKEN, { encoding: "jsonParsed" });
    const byKey = new Map(result.map((keyed: any) => [keyed.pubkey, keyed.account]));
    for (const { pubkey, account } of validatorGpa.result_subset) {
      const ours: any = byKey.get(pubkey);
      expect(ours, pubkey).toBeDefined();
      expect(ours.data, pubkey).toEqual(account.data);
      expect(ours.owner).toBe(account.owner);
      expect(ours.space).toBe(account.space);
      if (kit.accounts[pubkey] !== undefined) expect(ours.lamports).toBe(account.lamports);
    }
  });

  it("drops token-program accounts that do not parse from jsonParsed scans, as agave does", async () => {
    const chain = kitChain();
    const orphan = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" as Address;
    const junk = "Junk111111111111111111111111111111111111111" as Address;
    chain.index.seedAccounts([
      // a token account whose mint does not exist
      {
        address: orphan,
        owner: TOKEN,
        lamports: 2_039_280n,
        data: Buffer.from(kit.accounts.AyGCwnwxQMCqaU4ixReHt8h5W4dwmxU7eM3BEQBdWVca.account.data[0], "base64").fill(
          7,
          0,
          32,
        ),
      },
      { address: junk, owner: TOKEN, lamports: 1_000_000n, data: new Uint8Array(40) },
    ]);
    const scan = await chain.call("getProgramAccounts", TOKEN, { encoding: "jsonParsed" });
    expect(scan.some((keyed: any) => keyed.pubkey === orphan || keyed.pubkey === junk)).toBe(false);
    // A single read falls back to the whole data in base64, even when a slice was asked for.
    const single = await chain.call("getAccountInfo", orphan, {
      encoding: "jsonParsed",
      dataSlice: { offset: 0, length: 4 },
    });
    expect(single.value.data[1]).toBe("base64");
    expect(Buffer.from(single.value.data[0], "base64")).toHaveLength(165);
  });
});

describe("real mainnet token accounts", () => {
  const real = fixture("tokens/real_mainnet_token_accounts_with_derived_jsonParsed.json");

  it("read back byte for byte in base64, and as the expected jsonParsed form", async () => {
    const chain = createTestChain();
    for (const account of real.accounts) {
      chain.index.seedAccounts([
        seedFromValue(account.pubkey, account.raw_getAccountInfo_base64_value),
        // Only the mint's decimals matter to the parser; the real mints are not in this file.
        {
          address: account.mint,
          owner: TOKEN,
          lamports: 1_461_600n,
          data: mintData({ decimals: account.mint_decimals }),
        },
      ]);
      const base64 = await chain.call("getAccountInfo", account.pubkey, { encoding: "base64" });
      expect(base64.value, account.pubkey).toEqual(account.raw_getAccountInfo_base64_value);
      const parsed = await chain.call("getAccountInfo", account.pubkey, { encoding: "jsonParsed" });
      expect(parsed.value, account.pubkey).toEqual(wire(account.derived_getAccountInfo_jsonParsed_value));
    }
  });
});

describe("real NFT accounts (DAS test data: SMB Gen3 members, Mad Lads #9964)", () => {
  const files = [
    ...fixtureFiles("das-accounts/collection-smb-gen3"),
    ...fixtureFiles("das-accounts/pnft-mad-lads-9964"),
  ];
  const accounts = files.map((file) => fixture(file));
  const realTokens = new Map<string, any>(
    fixture("tokens/real_mainnet_token_accounts_with_derived_jsonParsed.json").accounts.map((a: any) => [a.pubkey, a]),
  );

  it("load through the index and read back as getAccountInfo values, singly and in one getMultipleAccounts", async () => {
    const chain = createTestChain();
    chain.index.seedAccounts(accounts.map((a) => seedFromValue(a.pubkey, a)));
    const { pubkey: _p, plerkle: _pl, ...first } = accounts[0];
    expect(Object.keys(first).sort()).toEqual(["data", "executable", "lamports", "owner", "rentEpoch", "space"]);
    for (const { pubkey, plerkle: _plerkle, ...value } of accounts) {
      expect((await chain.call("getAccountInfo", pubkey, { encoding: "base64" })).value, pubkey).toEqual(value);
    }
    const many = await chain.call(
      "getMultipleAccounts",
      accounts.map((a) => a.pubkey),
    );
    expect(many.value).toEqual(accounts.map(({ pubkey: _pk, plerkle: _pl2, ...value }) => value));
  });

  it("parse their token accounts from the real mints exactly as the reference parser did", async () => {
    const chain = createTestChain();
    chain.index.seedAccounts(accounts.map((a) => seedFromValue(a.pubkey, a)));
    let compared = 0;
    for (const { pubkey } of accounts) {
      const expected = realTokens.get(pubkey);
      if (expected === undefined) continue;
      const parsed = await chain.call("getAccountInfo", pubkey, { encoding: "jsonParsed" });
      expect(parsed.value.data, pubkey).toEqual(wire(expected.derived_getAccountInfo_jsonParsed_value).data);
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(4);
    // Metaplex metadata has no agave parser: jsonParsed falls back to base64.
    const metadata = accounts.find((a) => a.owner === "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s");
    expect((await chain.call("getAccountInfo", metadata.pubkey, { encoding: "jsonParsed" })).value.data).toEqual(
      metadata.data,
    );
    // Every token account of the set is found by its owner, with the mint's real decimals.
    for (const token of accounts.filter((a) => a.space === 165)) {
      const info = (await chain.call("getAccountInfo", token.pubkey, { encoding: "jsonParsed" })).value.data.parsed
        .info;
      const byOwner = await chain.call(
        "getTokenAccountsByOwner",
        info.owner,
        { mint: info.mint },
        { encoding: "jsonParsed" },
      );
      expect(byOwner.value.map((k: any) => k.pubkey)).toContain(token.pubkey);
      expect(info.tokenAmount.decimals).toBe(0);
    }
  });
});
