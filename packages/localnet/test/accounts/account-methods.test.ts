/**
 * getAccountInfo / getMultipleAccounts / getBalance / getMinimumBalanceForRentExemption against a
 * real LiteSVM, checked against recorded mainnet responses (values and shapes).
 */
import { zstdDecompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import bs58 from "bs58";
import type { Address } from "@solana/kit";
import { toJson } from "../../src/accounts/index.ts";
import {
  createTestChain,
  fixture,
  mintData,
  randomAddress,
  seedFromValue,
  shapeDiff,
  SLOT,
  TOKEN,
  tokenAccountData,
  U64_MAX,
} from "./helpers.ts";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" as Address;

describe("getAccountInfo", () => {
  it("answers the recorded USDC mint byte for byte in base64, and in base64+zstd that decodes to it", async () => {
    const recorded = fixture("rpc/getAccountInfo_USDC_mint_base64_slot239322946.json");
    const chain = createTestChain();
    chain.index.seedAccount(seedFromValue(USDC, recorded.result.value));

    const base64 = await chain.call("getAccountInfo", USDC, { encoding: "base64" });
    expect(base64.value).toEqual(recorded.result.value);
    expect(base64.context).toEqual({ slot: Number(SLOT), apiVersion: "2.2.7" });
    expect(shapeDiff(base64, recorded.result)).toEqual([]);

    const zstdRecorded = fixture("rpc/getAccountInfo_USDC_mint_base64zstd_slot239322949.json");
    const zstd = await chain.call("getAccountInfo", USDC, { encoding: "base64+zstd" });
    expect(shapeDiff(zstd, zstdRecorded.result)).toEqual([]);
    expect(zstd.value.data[1]).toBe("base64+zstd");
    const ours = zstdDecompressSync(Buffer.from(zstd.value.data[0], "base64"));
    const theirs = zstdDecompressSync(Buffer.from(zstdRecorded.result.value.data[0], "base64"));
    expect(ours.equals(theirs)).toBe(true);
    // Same frame header as agave's streaming encoder (no content size); only the window byte may differ.
    expect(Buffer.from(zstd.value.data[0], "base64").subarray(0, 5)).toEqual(
      Buffer.from(zstdRecorded.result.value.data[0], "base64").subarray(0, 5),
    );
  });

  it("answers recorded 2.1 and 1.10 responses (a 904-byte program account; a USDC token account as jsonParsed)", async () => {
    const recorded = fixture("rpc/getAccountInfo_base64.json");
    const chain = createTestChain();
    const address = randomAddress();
    chain.index.seedAccount(seedFromValue(address, recorded.result.value));
    const result = await chain.call("getAccountInfo", address, { encoding: "base64" });
    expect(result.value).toEqual(recorded.result.value);
    expect(shapeDiff(result, recorded.result)).toEqual([]);

    // The 1.10 node sent only the parsed form: rebuild the bytes from it, then parse them back.
    const parsedRecorded = fixture("rpc/getAccountInfo_jsonParsed_token_account_slot140702417.json").result.value;
    const info = parsedRecorded.data.parsed.info;
    const holder = randomAddress();
    chain.index.seedAccounts([
      { address: USDC, owner: TOKEN, lamports: 1n, data: mintData({ decimals: info.tokenAmount.decimals }) },
      {
        address: holder,
        owner: TOKEN,
        lamports: BigInt(parsedRecorded.lamports),
        rentEpoch: BigInt(parsedRecorded.rentEpoch),
        data: tokenAccountData({ mint: info.mint, owner: info.owner, amount: BigInt(info.tokenAmount.amount) }),
      },
    ]);
    const parsed = await chain.call("getAccountInfo", holder, { encoding: "jsonParsed" });
    const { space, ...rest } = parsed.value; // 1.10 predates the `space` field on accounts
    expect(rest).toEqual(parsedRecorded);
    expect(space).toBe(165);
    expect(JSON.stringify(parsed.value.data.parsed)).toBe(JSON.stringify(parsedRecorded.data.parsed));
  });

  it("writes a wrapped-SOL account byte for byte as a recent node did (field order included)", async () => {
    // A 2025 node's accountNotification: struct order outside, sorted keys inside `parsed`
    // (agave builds it as a serde_json map), rentEpoch as a bare u64.
    const recorded = fixture("rpc/ws_accountNotification_jsonParsed.json").params.result.value;
    const info = recorded.data.parsed.info;
    const chain = createTestChain();
    chain.svm.withNativeMints();
    chain.index.record([info.mint]);
    const address = randomAddress();
    chain.index.seedAccount({
      address,
      owner: TOKEN,
      lamports: BigInt(recorded.lamports),
      data: tokenAccountData({
        mint: info.mint,
        owner: info.owner,
        amount: BigInt(info.tokenAmount.amount),
        isNative: BigInt(info.rentExemptReserve.amount),
      }),
    });
    const result = await chain.methods.getAccountInfo([address, { encoding: "jsonParsed" }], chain.ctx);
    expect(toJson((result as { value: unknown }).value)).toBe(toJson(recorded));
  });

  it("encodes base58 and legacy binary up to 128 bytes and refuses more with agave's -32600", async () => {
    const recorded = fixture("rpc/getAccountInfo_USDC_mint_base64_slot239322946.json");
    const chain = createTestChain();
    chain.index.seedAccount(seedFromValue(USDC, recorded.result.value));
    const raw = Buffer.from(recorded.result.value.data[0], "base64");

    expect((await chain.call("getAccountInfo", USDC, { encoding: "base58" })).value.data).toEqual([
      bs58.encode(raw),
      "base58",
    ]);
    // No encoding means agave's legacy "binary": a bare base58 string.
    expect((await chain.call("getAccountInfo", USDC)).value.data).toBe(bs58.encode(raw));

    const big = randomAddress();
    chain.index.seedAccount({ address: big, owner: TOKEN, lamports: 2_039_280n, data: new Uint8Array(165) });
    const refused = await chain.fail("getAccountInfo", big, { encoding: "base58" });
    expect(refused).toEqual({
      code: -32600,
      message: "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.",
      data: undefined,
    });
    expect((await chain.fail("getAccountInfo", big)).code).toBe(-32600);
    // agave quirk: a slice under 128 bytes passes the check, then the full length trips encode_bs58.
    const sliced = await chain.call("getAccountInfo", big, { encoding: "base58", dataSlice: { offset: 0, length: 8 } });
    expect(sliced.value.data).toEqual(["error: data too large for bs58 encoding", "base58"]);
  });

  it("slices data as agave's slice_data does", async () => {
    const chain = createTestChain();
    const address = randomAddress();
    const data = Uint8Array.from({ length: 10 }, (_, i) => i);
    chain.index.seedAccount({ address, owner: randomAddress(), lamports: 1_000_000n, data });
    const slice = async (offset: number, length: number) =>
      Buffer.from(
        (await chain.call("getAccountInfo", address, { encoding: "base64", dataSlice: { offset, length } })).value
          .data[0],
        "base64",
      );
    expect([...(await slice(2, 3))]).toEqual([2, 3, 4]);
    expect([...(await slice(8, 100))]).toEqual([8, 9]);
    expect([...(await slice(10, 1))]).toEqual([]);
    expect([...(await slice(50, 0))]).toEqual([]);
    const full = await chain.call("getAccountInfo", address, {
      encoding: "base64",
      dataSlice: { offset: 2, length: 3 },
    });
    expect(full.value.space).toBe(10);
  });

  it("returns null for unknown accounts and for accounts closed to zero lamports", async () => {
    const recorded = fixture("rpc/getAccountInfo_null_value.json");
    const chain = createTestChain();
    const address = randomAddress();
    const missing = await chain.call("getAccountInfo", address, { encoding: "base64" });
    expect(missing.value).toBeNull();
    expect(shapeDiff(missing.value, recorded.result.value)).toEqual([]);

    chain.index.seedAccount({ address, owner: randomAddress(), lamports: 5n, data: new Uint8Array(3) });
    expect((await chain.call("getAccountInfo", address, { encoding: "base64" })).value.lamports).toBe(5);
    chain.index.seedAccount({ address, owner: randomAddress(), lamports: 0n, data: new Uint8Array(0) });
    expect((await chain.call("getAccountInfo", address, { encoding: "base64" })).value).toBeNull();
    expect(chain.index.get(address)).toBeUndefined();
  });

  it("reports accounts made by real transactions with rentEpoch u64::MAX as a bare JSON number", async () => {
    const chain = createTestChain();
    const address = randomAddress();
    chain.svm.airdrop(address, 1_000_000_000n as never);
    chain.index.record([address]);
    const result = await chain.methods.getAccountInfo([address, { encoding: "jsonParsed" }], chain.ctx);
    const text = JSON.stringify(result);
    expect(text).toContain('"rentEpoch":18446744073709551615');
    // A wallet has no data: jsonParsed falls back to base64 of nothing, like a node.
    expect((await chain.call("getAccountInfo", address, { encoding: "jsonParsed" })).value).toEqual({
      lamports: 1_000_000_000,
      data: ["", "base64"],
      owner: "11111111111111111111111111111111",
      executable: false,
      rentEpoch: U64_MAX,
      space: 0,
    });
  });

  it("parses a real durable nonce account as agave's nonce parser does", async () => {
    const accounts = fixture("rpc/accounts_usdc_mint_and_devnet_nonce.json");
    const key = Object.keys(accounts).find((k) => k.startsWith("8DedqKHx"))!;
    const value = accounts[key];
    const chain = createTestChain();
    const address = key.split(" ")[0];
    chain.index.seedAccount(seedFromValue(address, value));
    const raw = Buffer.from(value.data[0], "base64");
    const parsed = await chain.call("getAccountInfo", address, { encoding: "jsonParsed" });
    expect(parsed.value.data).toEqual({
      program: "nonce",
      parsed: {
        type: "initialized",
        info: {
          authority: bs58.encode(raw.subarray(8, 40)),
          blockhash: bs58.encode(raw.subarray(40, 72)),
          feeCalculator: { lamportsPerSignature: raw.readBigUInt64LE(72).toString() },
        },
      },
      space: 80,
    });
    expect(parsed.value.data.parsed.info.feeCalculator.lamportsPerSignature).toBe("5000");
    // The recorded base64 comes back unchanged.
    expect((await chain.call("getAccountInfo", address, { encoding: "base64" })).value).toEqual(value);
  });

  it("parses the SPL Token program account (upgradeable loader) as jsonParsed", async () => {
    const chain = createTestChain();
    const result = await chain.call("getAccountInfo", TOKEN, { encoding: "jsonParsed" });
    expect(result.value.executable).toBe(true);
    expect(result.value.data.program).toBe("bpf-upgradeable-loader");
    expect(result.value.data.parsed.type).toBe("program");
    expect(typeof result.value.data.parsed.info.programData).toBe("string");
  });

  it("parses sysvars by address, agreeing with LiteSVM's own typed getters", async () => {
    const chain = createTestChain();
    chain.svm.warpToSlot(123_456n);
    const parsed = async (address: string) =>
      (await chain.call("getAccountInfo", address, { encoding: "jsonParsed" })).value.data;
    const clock = chain.svm.getClock();
    expect(await parsed("SysvarC1ock11111111111111111111111111111111")).toEqual({
      program: "sysvar",
      parsed: {
        type: "clock",
        info: {
          slot: Number(clock.slot),
          epoch: Number(clock.epoch),
          epochStartTimestamp: Number(clock.epochStartTimestamp),
          leaderScheduleEpoch: Number(clock.leaderScheduleEpoch),
          unixTimestamp: Number(clock.unixTimestamp),
        },
      },
      space: 40,
    });
    expect(clock.slot).toBe(123_456n);
    const schedule = chain.svm.getEpochSchedule();
    expect((await parsed("SysvarEpochSchedu1e111111111111111111111111")).parsed.info).toEqual({
      slotsPerEpoch: Number(schedule.slotsPerEpoch),
      leaderScheduleSlotOffset: Number(schedule.leaderScheduleSlotOffset),
      warmup: schedule.warmup,
      firstNormalEpoch: Number(schedule.firstNormalEpoch),
      firstNormalSlot: Number(schedule.firstNormalSlot),
    });
    const rent = chain.svm.getRent();
    expect((await parsed("SysvarRent111111111111111111111111111111111")).parsed).toEqual({
      type: "rent",
      info: {
        lamportsPerByte: rent.lamportsPerByteYear.toString(),
      },
    });
    const hashes = (await parsed("SysvarS1otHashes111111111111111111111111111")).parsed.info;
    expect(hashes.map((h: { slot: number }) => BigInt(h.slot))).toEqual(chain.svm.getSlotHashes().map((h) => h.slot));
    // A sysvar-owned account at an unknown address does not parse.
    const stray = randomAddress();
    chain.index.seedAccount({
      address: stray,
      owner: "Sysvar1111111111111111111111111111111111111" as never,
      lamports: 1n,
      data: new Uint8Array(8),
    });
    expect(await parsed(stray)).toEqual(["AAAAAAAAAAA=", "base64"]);
  });

  it("rejects bad params with agave's messages and never reaches LiteSVM with them", async () => {
    const chain = createTestChain();
    const cases: Array<[unknown[], number, string]> = [
      [[], -32602, "`params` should have at least 1 argument(s)"],
      [["abc"], -32602, fixture("rpc/error_-32602_invalid_param_WrongSize.json").error.message],
      [["0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OI"], -32602, "Invalid param: Invalid"],
      [["x".repeat(45)], -32602, "Invalid param: WrongSize"],
      [["z".repeat(44)], -32602, "Invalid param: Invalid"], // decodes to more than 32 bytes
      [["💥"], -32602, "Invalid param: Invalid"],
      [[5], -32602, "Invalid params: invalid type: integer `5`, expected a string."],
      [[null], -32602, "Invalid params: invalid type: unit value, expected a string."],
      [
        [USDC, "base64"],
        -32602,
        'Invalid params: invalid type: string "base64", expected struct RpcAccountInfoConfig.',
      ],
      [
        [USDC, { encoding: "hex" }],
        -32602,
        "Invalid params: unknown variant `hex`, expected one of `binary`, `base58`, `base64`, `jsonParsed`, `base64+zstd`.",
      ],
      [
        [USDC, { commitment: "max" }],
        -32602,
        "Invalid params: unknown variant `max`, expected one of `processed`, `confirmed`, `finalized`.",
      ],
      [
        [USDC, { dataSlice: { offset: -1, length: 2 } }],
        -32602,
        "Invalid params: invalid value: integer `-1`, expected usize.",
      ],
      [[USDC, { dataSlice: { offset: 1 } }], -32602, "Invalid params: missing field `length`."],
      [[USDC, {}, 3], -32602, "Invalid params: invalid length 3, expected fewer elements in array."],
    ];
    for (const [params, code, message] of cases) {
      expect(await chain.fail("getAccountInfo", ...params), JSON.stringify(params)).toMatchObject({ code, message });
    }
  });

  it("enforces minContextSlot with agave's -32016 and contextSlot data", async () => {
    const chain = createTestChain();
    const error = await chain.fail("getAccountInfo", USDC, { minContextSlot: Number(SLOT) + 1 });
    expect(error).toEqual({
      code: -32016,
      message: "Minimum context slot has not been reached",
      data: { contextSlot: Number(SLOT) },
    });
    expect((await chain.call("getAccountInfo", USDC, { minContextSlot: Number(SLOT) })).value).toBeNull();
  });
});

describe("getMultipleAccounts", () => {
  it("answers a recorded mainnet response exactly, null for the missing key, base64 by default", async () => {
    const recorded = fixture("rpc/getMultipleAccounts_2.json");
    const [first, , second] = recorded.result.value;
    const chain = createTestChain();
    const a = randomAddress();
    const b = randomAddress();
    chain.index.seedAccounts([seedFromValue(a, first), seedFromValue(b, second)]);
    const result = await chain.call("getMultipleAccounts", [a, randomAddress(), b]);
    expect(result.value).toEqual(recorded.result.value);
    expect(shapeDiff(result, recorded.result)).toEqual([]);
    const one = fixture("rpc/getMultipleAccounts_1.json");
    expect(shapeDiff(await chain.call("getMultipleAccounts", [a, b], { encoding: "base64" }), one.result)).toEqual([]);
  });

  it("parses and falls back per account in one jsonParsed response (recorded mixed response)", async () => {
    const recorded = fixture("rpc/getMultipleAccounts_mixed_jsonParsed_and_base64_slot167617386.json");
    const [mintValue, rawValue] = recorded.result.value;
    const chain = createTestChain();
    const mint = randomAddress();
    const other = randomAddress();
    const info = mintValue.data.parsed.info;
    chain.index.seedAccounts([
      {
        address: mint,
        owner: TOKEN,
        lamports: BigInt(mintValue.lamports),
        rentEpoch: BigInt(mintValue.rentEpoch),
        data: mintData({ decimals: info.decimals, supply: BigInt(info.supply) }),
      },
      seedFromValue(other, rawValue),
    ]);
    const result = await chain.call("getMultipleAccounts", [mint, other], { encoding: "jsonParsed" });
    // This node (1.13) predates the `space` field on accounts; everything it did send matches.
    expect(result.value.map(({ space, ...rest }: { space: number }) => rest)).toEqual(recorded.result.value);
    expect(result.value[0].space).toBe(82);
  });

  it("caps the batch at 100 before looking at any key, then verifies every key", async () => {
    const chain = createTestChain();
    const keys = Array.from({ length: 101 }, () => "not-a-key");
    expect(await chain.fail("getMultipleAccounts", keys)).toMatchObject({
      code: -32602,
      message: "Too many inputs provided; max 100",
    });
    expect(await chain.fail("getMultipleAccounts", [USDC, "abc"])).toMatchObject({
      message: "Invalid param: WrongSize",
    });
    expect(await chain.fail("getMultipleAccounts", USDC)).toMatchObject({
      message:
        'Invalid params: invalid type: string "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", expected a sequence.',
    });
    expect((await chain.call("getMultipleAccounts", Array(100).fill(USDC))).value).toHaveLength(100);
  });
});

describe("getBalance and getMinimumBalanceForRentExemption", () => {
  it("reports lamports with context, 0 for unknown accounts", async () => {
    const chain = createTestChain();
    const address = randomAddress();
    chain.svm.airdrop(address, 1_234_567n as never);
    expect(await chain.call("getBalance", address)).toEqual({
      context: { slot: Number(SLOT), apiVersion: "2.2.7" },
      value: 1_234_567,
    });
    expect((await chain.call("getBalance", randomAddress(), { commitment: "processed" })).value).toBe(0);
    expect((await chain.fail("getBalance", "zz")).message).toBe("Invalid param: WrongSize");
  });

  it("matches the runtime's rent for small sizes and refuses lengths beyond 10 MiB as agave does", async () => {
    const chain = createTestChain();
    expect(await chain.call("getMinimumBalanceForRentExemption", 165)).toBe(2_039_280);
    expect(await chain.call("getMinimumBalanceForRentExemption", 0, { commitment: "confirmed" })).toBe(890_880);
    expect(await chain.call("getMinimumBalanceForRentExemption", 82)).toBe(
      Number(chain.svm.minimumBalanceForRentExemption(82n)),
    );
    // agave: data_len > MAX_PERMITTED_DATA_LENGTH is an invalid request (-32600), not a saturated sum.
    const max = 10 * 1024 * 1024;
    expect(await chain.call("getMinimumBalanceForRentExemption", max)).toBe(
      Number(chain.svm.minimumBalanceForRentExemption(BigInt(max))),
    );
    for (const length of [max + 1, 2 ** 52]) {
      expect(await chain.fail("getMinimumBalanceForRentExemption", length)).toMatchObject({
        code: -32600,
        message: "Invalid request",
      });
    }
    // The config is `Option<CommitmentConfig>`: an object must name `commitment`.
    expect((await chain.fail("getMinimumBalanceForRentExemption", 0, {})).message).toBe(
      "Invalid params: missing field `commitment`.",
    );
    expect((await chain.fail("getMinimumBalanceForRentExemption", "165")).message).toBe(
      'Invalid params: invalid type: string "165", expected usize.',
    );
  });
});
