/** getTokenAccountsByOwner, getTokenAccountBalance, getTokenSupply, getTokenLargestAccounts. */
import { describe, expect, it } from "vitest";
import bs58 from "bs58";
import type { Address } from "@solana/kit";
import {
  byPubkeyBytes,
  createTestChain,
  fixture,
  mintData,
  randomAddress,
  seedFromValue,
  shapeDiff,
  TOKEN,
  TOKEN_2022,
  tokenAccountData,
} from "./helpers.ts";

const NATIVE_MINT = "So11111111111111111111111111111111111111112";

describe("getTokenAccountsByOwner", () => {
  it("reproduces a recorded mainnet response from the same accounts (programId filter, base64)", async () => {
    const recorded = fixture("rpc/getTokenAccountsForProgramByOwner.json");
    const chain = createTestChain();
    chain.index.seedAccounts(recorded.result.value.map((k: any) => seedFromValue(k.pubkey, k.account)));
    const owner = bs58.encode(Buffer.from(recorded.result.value[0].account.data[0], "base64").subarray(32, 64));
    const result = await chain.call("getTokenAccountsByOwner", owner, { programId: TOKEN }, { encoding: "base64" });
    expect(shapeDiff(result, recorded.result)).toEqual([]);
    // The node answered in pubkey byte order; so do we.
    expect(result.value).toEqual(recorded.result.value);
    expect(
      (await chain.call("getTokenAccountsByOwner", owner, { programId: TOKEN_2022 }, { encoding: "base64" })).value,
    ).toEqual([]);
  });

  it("narrows to a mint, parses with the mint's decimals, and answers wrapped SOL without its account", async () => {
    const chain = createTestChain();
    const owner = randomAddress();
    const mint = randomAddress();
    const [a, b, c] = [randomAddress(), randomAddress(), randomAddress()];
    chain.index.seedAccounts([
      { address: mint, owner: TOKEN, lamports: 1_461_600n, data: mintData({ decimals: 2, supply: 1000n }) },
      { address: a, owner: TOKEN, lamports: 2_039_280n, data: tokenAccountData({ mint, owner, amount: 150n }) },
      {
        address: b,
        owner: TOKEN,
        lamports: 2_039_280n,
        data: tokenAccountData({ mint: NATIVE_MINT, owner, amount: 5n, isNative: 2_039_280n }),
      },
      {
        address: c,
        owner: TOKEN,
        lamports: 2_039_280n,
        data: tokenAccountData({ mint, owner: randomAddress(), amount: 1n }),
      },
    ]);
    const byMint = await chain.call("getTokenAccountsByOwner", owner, { mint }, { encoding: "jsonParsed" });
    expect(byMint.value.map((k: any) => k.pubkey)).toEqual([a]);
    expect(byMint.value[0].account.data.parsed.info.tokenAmount).toEqual({
      amount: "150",
      decimals: 2,
      uiAmount: 1.5,
      uiAmountString: "1.5",
    });
    const wrapped = await chain.call(
      "getTokenAccountsByOwner",
      owner,
      { mint: NATIVE_MINT },
      { encoding: "jsonParsed" },
    );
    expect(wrapped.value).toHaveLength(1);
    expect(wrapped.value[0].account.data.parsed.info).toMatchObject({
      isNative: true,
      rentExemptReserve: { amount: "2039280", decimals: 9, uiAmount: 0.00203928, uiAmountString: "0.00203928" },
      tokenAmount: { amount: "5", decimals: 9, uiAmountString: "0.000000005" },
    });
    const all = await chain.call(
      "getTokenAccountsByOwner",
      owner,
      { programId: TOKEN },
      { encoding: "base64", dataSlice: { offset: 64, length: 8 } },
    );
    expect(all.value.map((k: any) => k.pubkey).sort()).toEqual([a, b].sort());
    expect(all.value.map((k: any) => Buffer.from(k.account.data[0], "base64").length)).toEqual([8, 8]);
  });

  it("refuses bad filters with agave's messages", async () => {
    const chain = createTestChain();
    const owner = randomAddress();
    const notMint = randomAddress();
    chain.index.seedAccount({ address: notMint, owner: TOKEN, lamports: 1n, data: new Uint8Array(10) });
    const foreignMint = randomAddress();
    chain.index.seedAccount({
      address: foreignMint,
      owner: randomAddress(),
      lamports: 1n,
      data: mintData({ decimals: 0 }),
    });
    const fail = (...params: unknown[]) => chain.fail("getTokenAccountsByOwner", ...params);
    expect(await fail(owner, { mint: randomAddress() })).toMatchObject({
      code: -32602,
      message: "Invalid param: could not find mint",
    });
    expect(await fail(owner, { mint: notMint })).toMatchObject({
      message: "Invalid param: Token mint could not be unpacked",
    });
    expect(await fail(owner, { mint: foreignMint })).toMatchObject({ message: "Invalid param: not a Token mint" });
    expect(await fail(owner, { programId: randomAddress() })).toMatchObject({
      message: "Invalid param: unrecognized Token program id",
    });
    expect(await fail(owner, { programId: "xyz" })).toMatchObject({ message: "Invalid param: WrongSize" });
    expect(await fail(owner, { owner: TOKEN })).toMatchObject({
      message: "Invalid params: unknown variant `owner`, expected `mint` or `programId`.",
    });
    expect(await fail(owner)).toMatchObject({ message: "`params` should have at least 2 argument(s)" });
    expect(await fail(owner, { mint: 1 })).toMatchObject({
      message: "Invalid params: invalid type: integer `1`, expected a string.",
    });
  });
});

describe("getTokenAccountBalance and getTokenSupply", () => {
  it("answer UiTokenAmounts from the account and its mint", async () => {
    const chain = createTestChain();
    const mint = randomAddress();
    const account = randomAddress();
    chain.index.seedAccounts([
      { address: mint, owner: TOKEN_2022, lamports: 1_461_600n, data: mintData({ decimals: 6, supply: 123_456_789n }) },
      {
        address: account,
        owner: TOKEN_2022,
        lamports: 2_039_280n,
        data: tokenAccountData({ mint, owner: randomAddress(), amount: 36_010_000_000n }),
      },
    ]);
    const balance = await chain.call("getTokenAccountBalance", account);
    expect(balance.value).toEqual({ amount: "36010000000", decimals: 6, uiAmount: 36010, uiAmountString: "36010" });
    expect(typeof balance.context.slot).toBe("number");
    const supply = await chain.call("getTokenSupply", mint, { commitment: "confirmed" });
    expect(supply.value).toEqual({
      amount: "123456789",
      decimals: 6,
      uiAmount: 123.456789,
      uiAmountString: "123.456789",
    });
  });

  it("apply a Token-2022 interest-bearing mint's rate at the clock's time, in every amount view", async () => {
    const chain = createTestChain();
    const year = 31_556_736n; // spl-token-2022's 365.24-day year
    const mint = randomAddress();
    const account = randomAddress();
    // Base mint, zero padding to 165, account type 1 (mint), then one TLV: InterestBearingConfig (10).
    const config = new Uint8Array(52);
    const view = new DataView(config.buffer);
    view.setBigInt64(32, 0n, true); // initialization timestamp
    view.setInt16(40, 500, true); // 5% before the last update
    view.setBigInt64(42, year, true); // last update
    view.setInt16(50, 500, true); // 5% since
    const data = new Uint8Array(166 + 4 + 52);
    data.set(mintData({ decimals: 6, supply: 2_000_000n }));
    data[165] = 1;
    data.set([10, 0, 52, 0], 166);
    data.set(config, 170);
    chain.index.seedAccounts([
      { address: mint, owner: TOKEN_2022, lamports: 3_000_000n, data },
      {
        address: account,
        owner: TOKEN_2022,
        lamports: 2_039_280n,
        data: tokenAccountData({ mint, owner: randomAddress(), amount: 1_000_000n }),
      },
    ]);
    const clock = chain.svm.getClock();
    clock.unixTimestamp = year; // one year of 5% since initialization: exp(0.05) = 1.0512710963760241
    chain.svm.setClock(clock);
    const expected = { amount: "1000000", decimals: 6, uiAmount: 1.051271, uiAmountString: "1.051271" };
    expect((await chain.call("getTokenAccountBalance", account)).value).toEqual(expected);
    expect((await chain.call("getTokenSupply", mint)).value).toEqual({
      amount: "2000000",
      decimals: 6,
      uiAmount: 2.102542,
      uiAmountString: "2.102542",
    });
    const parsed = await chain.call("getAccountInfo", account, { encoding: "jsonParsed" });
    expect(parsed.value.data.parsed.info.tokenAmount).toEqual(expected);
    const mintParsed = await chain.call("getAccountInfo", mint, { encoding: "jsonParsed" });
    expect(mintParsed.value.data.parsed.info.extensions).toEqual([
      {
        extension: "interestBearingConfig",
        state: {
          rateAuthority: null,
          initializationTimestamp: 0,
          preUpdateAverageRate: 500,
          lastUpdateTimestamp: Number(year),
          currentRate: 500,
        },
      },
    ]);
    // Scans are not memoised for such mints: a year later the same scan shows the new interest.
    const scan = async () =>
      (
        await chain.call(
          "getTokenAccountsByOwner",
          parsed.value.data.parsed.info.owner,
          { mint },
          { encoding: "jsonParsed" },
        )
      ).value[0].account.data.parsed.info.tokenAmount.uiAmountString;
    expect(await scan()).toBe("1.051271");
    clock.unixTimestamp = 2n * year;
    chain.svm.setClock(clock);
    expect(await scan()).toBe("1.105171"); // exp(0.10)
  });

  it("refuse what is not a token account or mint", async () => {
    const chain = createTestChain();
    const wallet = randomAddress();
    chain.svm.airdrop(wallet, 1_000_000n as never);
    const mint = randomAddress();
    const orphan = randomAddress();
    chain.index.seedAccounts([
      { address: mint, owner: TOKEN, lamports: 1_461_600n, data: mintData({ decimals: 0 }) },
      {
        address: orphan,
        owner: TOKEN,
        lamports: 2_039_280n,
        data: tokenAccountData({ mint: randomAddress(), owner: wallet, amount: 1n }),
      },
    ]);
    expect(await chain.fail("getTokenAccountBalance", randomAddress())).toMatchObject({
      message: "Invalid param: could not find account",
    });
    expect(await chain.fail("getTokenAccountBalance", wallet)).toMatchObject({
      message: "Invalid param: not a Token account",
    });
    expect(await chain.fail("getTokenAccountBalance", mint)).toMatchObject({
      message: "Invalid param: not a Token account",
    });
    expect(await chain.fail("getTokenAccountBalance", orphan)).toMatchObject({
      message: "Invalid param: could not find mint",
    });
    expect(await chain.fail("getTokenSupply", wallet)).toMatchObject({ message: "Invalid param: not a Token mint" });
    expect(await chain.fail("getTokenSupply", orphan)).toMatchObject({
      message: "Invalid param: mint could not be unpacked",
    });
  });
});

describe("getTokenLargestAccounts", () => {
  it("returns the 20 largest by amount (ties by larger pubkey) in the recorded shape", async () => {
    const recorded = fixture("rpc/getTokenLargestAccounts.json");
    const chain = createTestChain();
    const mint = randomAddress();
    chain.index.seedAccount({
      address: mint,
      owner: TOKEN,
      lamports: 1_461_600n,
      data: mintData({ decimals: 8, supply: 10n ** 15n }),
    });
    const amounts = new Map<Address, bigint>();
    for (let i = 0; i < 30; i++) {
      const address = randomAddress();
      const amount = i < 4 ? 10n ** 12n : BigInt(i) * 123_456_789n; // the four largest tie
      amounts.set(address, amount);
      chain.index.seedAccount({
        address,
        owner: TOKEN,
        lamports: 2_039_280n,
        data: tokenAccountData({ mint, owner: randomAddress(), amount }),
      });
    }
    const result = await chain.call("getTokenLargestAccounts", mint);
    expect(shapeDiff(result, recorded.result)).toEqual([]);
    expect(result.value).toHaveLength(20);
    const expected = [...amounts.entries()]
      .sort(([ka, a], [kb, b]) => (a !== b ? (a > b ? -1 : 1) : -byPubkeyBytes(ka, kb)))
      .slice(0, 20)
      .map(([address]) => address);
    expect(result.value.map((e: any) => e.address)).toEqual(expected);
    expect(result.value[0]).toEqual({
      address: expected[0],
      amount: "1000000000000",
      decimals: 8,
      uiAmount: 10000,
      uiAmountString: "10000",
    });
    expect(result.value[4]).toEqual({
      address: expected[4],
      amount: "3580246881",
      decimals: 8,
      uiAmount: 35.80246881,
      uiAmountString: "35.80246881",
    });
    expect(await chain.fail("getTokenLargestAccounts", randomAddress())).toMatchObject({
      message: "Invalid param: could not find mint",
    });
  });
});
