/**
 * getProgramAccounts: filters (decode, verify, AND), the token owner/mint index against a full
 * scan, encodings, errors, and recorded mainnet responses.
 */
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
  SLOT,
  TOKEN,
  TOKEN_2022,
  tokenAccountData,
} from "./helpers.ts";
import { toJson } from "../../src/accounts/json.ts";

/** A chain with two mints, token accounts over a few owners, plus junk under the token program. */
function tokenWorld() {
  const chain = createTestChain();
  const mints = [randomAddress(), randomAddress()];
  const owners = [randomAddress(), randomAddress(), randomAddress()];
  const accounts: Address[] = [];
  chain.index.seedAccounts(
    mints.map((mint) => ({ address: mint, owner: TOKEN, lamports: 1_461_600n, data: mintData({ decimals: 6 }) })),
  );
  for (let i = 0; i < 60; i++) {
    const address = randomAddress();
    accounts.push(address);
    const data = tokenAccountData({
      mint: mints[i % 2],
      owner: owners[i % 3],
      amount: BigInt(i),
      state: i % 10 === 9 ? 0 : i % 7 === 0 ? 2 : 1,
    });
    chain.index.seedAccount({ address, owner: TOKEN, lamports: 2_039_280n, data });
  }
  // Same mint bytes at offset 0 but not a token account (wrong size), and a Token-2022 account.
  const lookalike = new Uint8Array(200);
  lookalike.set(bs58.decode(mints[0]));
  chain.index.seedAccount({ address: randomAddress(), owner: TOKEN, lamports: 5_000_000n, data: lookalike });
  chain.index.seedAccount({
    address: randomAddress(),
    owner: TOKEN_2022,
    lamports: 2_039_280n,
    data: tokenAccountData({ mint: mints[0], owner: owners[0], amount: 1n }),
  });
  return { chain, mints, owners, accounts };
}

const memcmp = (offset: number, bytes: string, encoding?: string) => ({
  memcmp: { offset, bytes, ...(encoding ? { encoding } : {}) },
});

describe("getProgramAccounts filters", () => {
  it("returns the same accounts through the token index as a scan that cannot use it", async () => {
    const { chain, mints, owners } = tokenWorld();
    const pubkeys = async (filters: unknown[]) =>
      (await chain.call("getProgramAccounts", TOKEN, { encoding: "base64", filters })).map((k: any) => k.pubkey);
    for (const mint of mints) {
      // dataSize 165 / tokenAccountState make agave use (and filter like) its by-mint index.
      const indexed = await pubkeys([{ dataSize: 165 }, memcmp(0, mint)]);
      const viaState = await pubkeys(["tokenAccountState", memcmp(0, mint)]);
      // memcmp on the state byte keeps the scan off the index: initialized (1) or frozen (2) only.
      const scanned = [
        ...(await pubkeys([memcmp(0, mint), { dataSize: 165 }, memcmp(108, bs58.encode([1]))])),
        ...(await pubkeys([memcmp(0, mint), { dataSize: 165 }, memcmp(108, bs58.encode([2]))])),
      ].sort(byPubkeyBytes);
      expect(indexed.length).toBeGreaterThan(20);
      expect(indexed).toEqual(scanned);
      expect(viaState).toEqual(scanned);
    }
    for (const owner of owners) {
      const indexed = await pubkeys([{ dataSize: 165 }, memcmp(32, owner)]);
      const scanned = [
        ...(await pubkeys([memcmp(32, owner), { dataSize: 165 }, memcmp(108, bs58.encode([1]))])),
        ...(await pubkeys([memcmp(32, owner), { dataSize: 165 }, memcmp(108, bs58.encode([2]))])),
      ].sort(byPubkeyBytes);
      expect(indexed).toEqual(scanned);
    }
    // Without a dataSize the scan also sees the 200-byte look-alike that starts with mint 0, and
    // the six uninitialized accounts of mint 1 (i % 10 === 9) the token index leaves out.
    const loose = [await pubkeys([memcmp(0, mints[0])]), await pubkeys([memcmp(0, mints[1])])];
    const strict = [
      await pubkeys([{ dataSize: 165 }, memcmp(0, mints[0])]),
      await pubkeys([{ dataSize: 165 }, memcmp(0, mints[1])]),
    ];
    expect(loose[0].length - strict[0].length).toBe(1);
    expect(loose[1].length - strict[1].length).toBe(6);
  });

  it("returns results sorted by pubkey bytes and ANDs all filters", async () => {
    const { chain, mints, owners } = tokenWorld();
    const all = await chain.call("getProgramAccounts", TOKEN, { encoding: "base64" });
    expect(all.map((k: any) => k.pubkey)).toEqual([...all.map((k: any) => k.pubkey)].sort(byPubkeyBytes));
    const both = await chain.call("getProgramAccounts", TOKEN, {
      encoding: "base64",
      filters: [{ dataSize: 165 }, memcmp(0, mints[1]), memcmp(32, owners[2]), "tokenAccountState"],
    });
    for (const keyed of both) {
      const data = Buffer.from(keyed.account.data[0], "base64");
      expect(bs58.encode(data.subarray(0, 32))).toBe(mints[1]);
      expect(bs58.encode(data.subarray(32, 64))).toBe(owners[2]);
    }
    expect(both.length).toBeGreaterThan(0);
  });

  it("accepts memcmp bytes as base58, base64 and raw arrays, alone or with an encoding", async () => {
    const { chain, mints } = tokenWorld();
    const mintBytes = bs58.decode(mints[0]);
    const run = async (filter: unknown) =>
      (await chain.call("getProgramAccounts", TOKEN, { encoding: "base64", filters: [{ dataSize: 165 }, filter] }))
        .length;
    const expected = await run(memcmp(0, mints[0]));
    expect(expected).toBeGreaterThan(0);
    expect(await run(memcmp(0, mints[0], "base58"))).toBe(expected);
    expect(await run(memcmp(0, Buffer.from(mintBytes).toString("base64"), "base64"))).toBe(expected);
    expect(await run({ memcmp: { offset: 0, bytes: [...mintBytes] } })).toBe(expected);
    expect(await run({ memcmp: { offset: 0, bytes: mints[0], encoding: "bytes" } })).toBe(expected);
    // Offsets past the end or overruns match nothing.
    expect(await run(memcmp(165, bs58.encode([0])))).toBe(0);
    expect(await run(memcmp(160, bs58.encode([0, 0, 0, 0, 0, 0])))).toBe(0);
  });

  it("refuses bad filters with agave's errors", async () => {
    const { chain } = tokenWorld();
    const fail = (config: unknown) => chain.fail("getProgramAccounts", TOKEN, config);
    // agave 4.4: a token program's owner (offset 32) or mint (offset 0) memcmp must be a 32-byte key.
    const short = bs58.encode(new Uint8Array(16).fill(3));
    expect(await fail({ filters: [{ dataSize: 165 }, memcmp(32, short)] })).toEqual({
      code: -32602,
      message: "Incorrect byte length 16 for SPL token owner filter, expected 32",
    });
    expect(await fail({ filters: [memcmp(0, short)] })).toEqual({
      code: -32602,
      message: "Incorrect byte length 16 for SPL token mint filter, expected 32",
    });
    expect(await fail({ filters: Array(5).fill({ dataSize: 165 }) })).toMatchObject({
      code: -32602,
      message: "Too many filters provided; max 4",
    });
    expect(await fail({ filters: [memcmp(0, "1".repeat(176))] })).toMatchObject({
      message: "Invalid param: DataTooLarge",
    });
    expect(await fail({ filters: [memcmp(0, bs58.encode(new Uint8Array(129).fill(1)))] })).toMatchObject({
      message: "Invalid param: DataTooLarge",
    });
    expect(await fail({ filters: [memcmp(0, Buffer.alloc(129).toString("base64"), "base64")] })).toMatchObject({
      message: "Invalid param: DataTooLarge",
    });
    expect(await fail({ filters: [{ memcmp: { offset: 0, bytes: Array(129).fill(0) } }] })).toMatchObject({
      message: "Invalid param: DataTooLarge",
    });
    expect(await fail({ filters: [memcmp(0, "abc0")] })).toMatchObject({
      message: "Invalid param: Base58DecodeError(InvalidCharacter { character: '0', index: 3 })",
    });
    expect(await fail({ filters: [memcmp(0, "ab!c", "base64")] })).toMatchObject({
      // agave 4.4's base64 0.23 prints its DecodeError's Display under {:?} (0.22: InvalidByte(2, 33)).
      message: "Invalid param: Base64DecodeError(Invalid symbol 33, offset 2.)",
    });
    expect(await fail({ filters: [memcmp(0, "abc", "base64")] })).toMatchObject({
      message: "Invalid param: Base64DecodeError(Invalid padding)",
    });
    expect(await fail({ filters: [memcmp(0, "abc", "binary")] })).toMatchObject({
      message: "Invalid params: unknown variant `binary`, expected one of `base58`, `base64`, `bytes`.",
    });
    expect(await fail({ filters: [{ memcmp: { bytes: "abc" } }] })).toMatchObject({
      message: "Invalid params: missing field `offset`.",
    });
    expect(await fail({ filters: [{ size: 165 }] })).toMatchObject({
      message: "Invalid params: unknown variant `size`, expected one of `dataSize`, `memcmp`, `tokenAccountState`.",
    });
    expect(await fail({ filters: [{ dataSize: 165, memcmp: {} }] })).toMatchObject({
      message: "Invalid params: invalid value: map, expected map with a single key.",
    });
    expect(await fail({ filters: [{ dataSize: "165" }] })).toMatchObject({
      message: 'Invalid params: invalid type: string "165", expected u64.',
    });
    // Serde errors come before the pubkey check, the pubkey before the filter count.
    expect(await chain.fail("getProgramAccounts", "bad", { filters: [{ size: 1 }] })).toMatchObject({
      message: expect.stringContaining("unknown variant"),
    });
    expect(await chain.fail("getProgramAccounts", "bad", { filters: Array(5).fill({ dataSize: 1 }) })).toMatchObject({
      message: "Invalid param: WrongSize",
    });
  });
});

describe("getProgramAccounts responses", () => {
  it("reproduces a recorded mainnet response (withContext, base64) from the same accounts", async () => {
    const recorded = fixture("rpc/getProgramAccounts.json");
    const program = recorded.result.value[0].account.owner;
    const chain = createTestChain();
    chain.index.seedAccounts(recorded.result.value.map((k: any) => seedFromValue(k.pubkey, k.account)));
    const result = await chain.call("getProgramAccounts", program, { encoding: "base64", withContext: true });
    expect(shapeDiff(result, recorded.result)).toEqual([]);
    expect(result.context.slot).toBe(Number(SLOT));
    // The node's answer is in pubkey byte order, and so is ours: equal as lists.
    expect(result.value).toEqual(recorded.result.value);
    // Without withContext the list comes bare; the default encoding is legacy base58, refused for big data.
    expect(await chain.call("getProgramAccounts", program, { encoding: "base64" })).toEqual(recorded.result.value);
    expect((await chain.fail("getProgramAccounts", program)).code).toBe(-32600);
  });

  it("has the recorded shape for base64+zstd with a dataSlice", async () => {
    const recorded = fixture("rpc/getProgramAccountsBase64Zstd.json");
    const chain = createTestChain();
    const result = await chain.call("getProgramAccounts", "Sysvar1111111111111111111111111111111111111", {
      encoding: "base64+zstd",
      withContext: true,
      filters: [{ dataSize: 40 }],
    });
    expect(result.value.map((k: any) => k.pubkey)).toEqual(["SysvarC1ock11111111111111111111111111111111"]);
    expect(shapeDiff(result, recorded.result)).toEqual([]);
  });

  it("re-reads volatile sysvars instead of serving stale copies", async () => {
    const chain = createTestChain();
    const clockData = async () =>
      Buffer.from(
        (
          await chain.call("getProgramAccounts", "Sysvar1111111111111111111111111111111111111", {
            encoding: "base64",
            filters: [{ dataSize: 40 }],
          })
        )[0].account.data[0],
        "base64",
      );
    const before = (await clockData()).readBigUInt64LE(0);
    chain.svm.warpToSlot(before + 1000n);
    expect((await clockData()).readBigUInt64LE(0)).toBe(before + 1000n);
  });

  it("answers each dataSlice with its own bytes, the same slice again included, and follows data changes", async () => {
    const { chain, mints, accounts } = tokenWorld();
    const filters = [{ dataSize: 165 }, memcmp(0, mints[0])];
    const full = async () =>
      new Map<string, Buffer>(
        (await chain.call("getProgramAccounts", TOKEN, { encoding: "base64", filters })).map((k: any) => [
          k.pubkey,
          Buffer.from(k.account.data[0], "base64"),
        ]),
      );
    const sliced = async (offset: number, length: number) =>
      (
        await chain.call("getProgramAccounts", TOKEN, { encoding: "base64", dataSlice: { offset, length }, filters })
      ).map((k: any) => [k.pubkey, k.account.data[0]]);
    const expected = (data: Map<string, Buffer>, offset: number, length: number) =>
      [...data].map(([pubkey, bytes]) => [pubkey, bytes.subarray(offset, offset + length).toString("base64")]);
    let data = await full();
    expect(data.size).toBeGreaterThan(10);
    // Twice the holder slice (owner and amount), another in between, and one past the end.
    for (const [offset, length] of [
      [32, 40],
      [32, 40],
      [64, 8],
      [32, 40],
      [160, 40],
      [200, 4],
    ]) {
      expect(await sliced(offset, length)).toEqual(expected(data, offset, length));
    }
    // A transfer: the amount changes, and the same slice shows the new amount.
    const changed = accounts.find((a) => data.has(a)) as Address;
    const owner = data.get(changed)?.subarray(32, 64) as Buffer;
    chain.svm.setAccount({
      address: changed,
      programAddress: TOKEN,
      lamports: 2_039_280n as never,
      executable: false,
      data: tokenAccountData({ mint: mints[0], owner: bs58.encode(owner) as Address, amount: 777_777n }),
      space: 165n,
    } as never);
    chain.index.record([changed]);
    data = await full();
    expect(data.get(changed)?.readBigUInt64LE(64)).toBe(777_777n);
    expect(await sliced(32, 40)).toEqual(expected(data, 32, 40));
  });

  it("writes a sliced scan (memoised texts per account) byte for byte as serialising its accounts would", async () => {
    const { chain, mints, owners } = tokenWorld();
    const filters = [{ dataSize: 165 }, memcmp(0, mints[0])];
    const cases: [string, unknown[]][] = [
      ["getProgramAccounts", [TOKEN, { encoding: "base64", dataSlice: { offset: 32, length: 40 }, filters }]],
      ["getProgramAccounts", [TOKEN, { encoding: "base64", dataSlice: { offset: 64, length: 8 }, filters }]],
      [
        "getProgramAccounts",
        [TOKEN, { encoding: "base64", dataSlice: { offset: 32, length: 40 }, filters, withContext: true }],
      ],
      [
        "getTokenAccountsByOwner",
        [owners[0], { programId: TOKEN }, { encoding: "base64", dataSlice: { offset: 0, length: 72 } }],
      ],
    ];
    for (const [method, params] of cases) {
      for (let round = 0; round < 2; round++) {
        const result = (await chain.methods[method](params, chain.ctx)) as any;
        const accounts = Array.isArray(result) ? result : result.value;
        expect(accounts.length).toBeGreaterThan(5);
        // The same tree as plain objects, serialised the ordinary way.
        const plain = Array.isArray(result) ? [...result] : { ...result, value: [...result.value] };
        expect(toJson(result)).toBe(JSON.stringify(plain));
        expect(toJson({ jsonrpc: "2.0", result, id: 7 })).toBe(
          JSON.stringify({ jsonrpc: "2.0", result: plain, id: 7 }),
        );
      }
    }
  });

  it("follows accounts through owner changes, data changes and closes via record()", async () => {
    const { chain, mints, owners } = tokenWorld();
    const count = async (mint: string) =>
      (
        await chain.call("getProgramAccounts", TOKEN, {
          encoding: "base64",
          filters: [{ dataSize: 165 }, memcmp(0, mint)],
        })
      ).length;
    const [before0, before1] = [await count(mints[0]), await count(mints[1])];
    const address = randomAddress();
    // A write straight into LiteSVM is invisible until recorded...
    chain.svm.setAccount({
      address,
      programAddress: TOKEN,
      lamports: 2_039_280n as never,
      executable: false,
      data: tokenAccountData({ mint: mints[0], owner: owners[0], amount: 1n }),
      space: 165n,
    } as never);
    expect(await count(mints[0])).toBe(before0);
    chain.index.record([address]);
    expect(await count(mints[0])).toBe(before0 + 1);
    // ...moves between mint buckets when its data changes...
    chain.svm.setAccount({
      address,
      programAddress: TOKEN,
      lamports: 2_039_280n as never,
      executable: false,
      data: tokenAccountData({ mint: mints[1], owner: owners[0], amount: 1n }),
      space: 165n,
    } as never);
    chain.index.record([address]);
    expect([await count(mints[0]), await count(mints[1])]).toEqual([before0, before1 + 1]);
    // ...leaves the program when its owner changes...
    const other = randomAddress();
    chain.svm.setAccount({
      address,
      programAddress: other,
      lamports: 2_039_280n as never,
      executable: false,
      data: new Uint8Array(165),
      space: 165n,
    } as never);
    chain.index.record([address]);
    expect(await count(mints[1])).toBe(before1);
    expect((await chain.call("getProgramAccounts", other, { encoding: "base64" })).map((k: any) => k.pubkey)).toEqual([
      address,
    ]);
    // ...and disappears once closed to zero lamports.
    chain.svm.setAccount({
      address,
      programAddress: other,
      lamports: 0n as never,
      executable: false,
      data: new Uint8Array(0),
      space: 0n,
    } as never);
    chain.index.record([address]);
    expect(await chain.call("getProgramAccounts", other, { encoding: "base64" })).toEqual([]);
  });
});
