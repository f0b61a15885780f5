/**
 * Loading accounts and programs at start, as solana-test-validator's `--account-dir`, `--account`
 * and `--upgradeable-program`: recorded mainnet accounts converted into the test validator's file
 * format and read back byte for byte; a real SBF program (SPL Token, from the LiteSVM addon)
 * deployed under the upgradeable loader and run by a real transaction; bad files stop the start
 * with an error naming them.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { generateKeyPairSigner, type Address } from "@solana/kit";
import { getCreateAccountInstruction } from "@solana-program/system";
import { getInitializeMint2Instruction } from "@solana-program/token";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalnet } from "../../src/launcher.ts";
import { programdataAddress } from "../../src/loading/upgradeable-program.ts";
import { parseJson, stringifyJson } from "../../src/rpc/json.ts";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";
import { splTokenElf } from "./litesvm-programs.ts";

const FIXTURES = new URL("../../../../test/fixtures/solana/rpc/", import.meta.url);
// u64-exact JSON: the recorded rentEpoch 2^64-1 must survive the round trip into the file.
const recorded = (name: string) => (parseJson(readFileSync(new URL(name, FIXTURES), "utf8")) as any).result.value;
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const LOADER = "BPFLoaderUpgradeab1e11111111111111111111111";

/** A recorded getAccountInfo value written as the test validator's account file. */
function validatorFile(pubkey: string, value: Record<string, unknown>): string {
  const { lamports, data, owner, executable, rentEpoch, space } = value;
  return stringifyJson({ pubkey, account: { lamports, data, owner, executable, rentEpoch, space } });
}

const dir = mkdtempSync(path.join(tmpdir(), "localnet-load-"));
const write = (name: string, text: string | Uint8Array) => {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
};

describe("loaded accounts and programs", () => {
  let net: TestLocalnet;
  const usdc = recorded("getAccountInfo_USDC_mint_base64_slot239322946.json");
  const usdcZstd = recorded("getAccountInfo_USDC_mint_base64zstd_slot239322949.json");
  const plain = recorded("getAccountInfo_base64.json");
  let zstdAt: string;
  let plainAt: string;
  let programId: string;
  let finalId: string;
  let authority: string;
  const elf = splTokenElf();

  beforeAll(async () => {
    const accountsDir = mkdtempSync(path.join(dir, "accounts-"));
    writeFileSync(path.join(accountsDir, "usdc.json"), validatorFile(USDC, usdc));
    zstdAt = (await generateKeyPairSigner()).address;
    plainAt = (await generateKeyPairSigner()).address;
    programId = (await generateKeyPairSigner()).address;
    finalId = (await generateKeyPairSigner()).address;
    authority = (await generateKeyPairSigner()).address;
    net = await startTestLocalnet({
      accountsDir,
      accounts: [
        { address: zstdAt, file: write("usdc-zstd.json", validatorFile(USDC, usdcZstd)) },
        // The file names another pubkey; the given address wins, as `--account ADDRESS FILE`.
        { address: plainAt, file: write("plain.json", validatorFile(USDC, plain)) },
      ],
      programs: [
        { address: programId, file: write("spl_token.so", elf), upgradeAuthority: authority },
        // Not upgradeable (`@none`): no authority in its programdata.
        { address: finalId, file: write("spl_token_final.so", elf) },
      ],
    });
  });
  afterAll(async () => {
    await net?.stop();
  });

  it("serves the recorded accounts byte for byte", async () => {
    const read = async (address: string) =>
      (await net.call("getAccountInfo", [address, { encoding: "base64", commitment: "processed" }])).result.value;
    expect(await read(USDC)).toEqual(usdc);
    expect(await read(plainAt)).toEqual(plain);
    const zstd = await read(zstdAt);
    const recordedBytes = zlib.zstdDecompressSync(Buffer.from(usdcZstd.data[0], "base64"));
    expect(Buffer.from(zstd.data[0], "base64").equals(recordedBytes)).toBe(true);
    expect({ ...zstd, data: null }).toEqual({ ...usdcZstd, data: null });
    // The loaded mint parses as a mint (it is a real Token account).
    const parsed = (await net.call("getAccountInfo", [USDC, { encoding: "jsonParsed" }])).result.value.data;
    expect(parsed.parsed.type).toBe("mint");
    expect(parsed.parsed.info.decimals).toBe(6);
  });

  it("deploys the program under the upgradeable loader with its authority", async () => {
    const programdata = programdataAddress(programId);
    const program = (await net.call("getAccountInfo", [programId, { encoding: "base64" }])).result.value;
    expect(program).toMatchObject({ owner: LOADER, executable: true, space: 36 });
    const bytes = Buffer.from(program.data[0], "base64");
    expect(bytes.readUInt32LE(0)).toBe(2);
    expect(bs58.encode(bytes.subarray(4))).toBe(programdata);
    const parsed = (await net.call("getAccountInfo", [programId, { encoding: "jsonParsed" }])).result.value.data;
    expect(parsed).toEqual({
      program: "bpf-upgradeable-loader",
      parsed: { type: "program", info: { programData: programdata } },
      space: 36,
    });

    const data = (await net.call("getAccountInfo", [programdata, { encoding: "base64" }])).result.value;
    expect(data).toMatchObject({ owner: LOADER, executable: false, space: 45 + elf.length });
    const raw = Buffer.from(data.data[0], "base64");
    expect(raw.readUInt32LE(0)).toBe(3);
    expect(raw.readBigUInt64LE(4)).toBe(0n);
    expect(raw[12]).toBe(1);
    expect(bs58.encode(raw.subarray(13, 45))).toBe(authority);
    expect(raw.subarray(45).equals(elf)).toBe(true);
    const rent = (await net.call("getMinimumBalanceForRentExemption", [45 + elf.length])).result;
    expect(data.lamports).toBe(rent);
  });

  it("renders programdata in jsonParsed as agave's decoder does, with and without an authority", async () => {
    const parsed = async (program: string) =>
      (await net.call("getAccountInfo", [programdataAddress(program), { encoding: "jsonParsed" }])).result.value.data;
    // With an authority the data starts at the fixed metadata size (45): the ELF itself.
    const upgradeable = await parsed(programId);
    expect(upgradeable).toEqual({
      program: "bpf-upgradeable-loader",
      parsed: { type: "programData", info: { slot: 0, authority, data: [elf.toString("base64"), "base64"] } },
      space: 45 + elf.length,
    });
    // Without one, agave's parse_bpf_upgradeable_loader starts the data right after the bincode
    // `None` (byte 13): the 32 unused authority bytes, then the ELF (decoder-oracle cases
    // "programdata without an upgrade authority" and "... made final").
    const final = await parsed(finalId);
    expect(final.parsed.info.authority).toBeNull();
    const data = Buffer.from(final.parsed.info.data[0], "base64");
    expect(data.length).toBe(32 + elf.length);
    expect(data.subarray(0, 32).equals(Buffer.alloc(32))).toBe(true);
    expect(data.subarray(32).equals(elf)).toBe(true);
    // The raw account has the ELF at 45 either way (where the loader runs it from).
    const raw = (await net.call("getAccountInfo", [programdataAddress(finalId), { encoding: "base64" }])).result.value;
    const bytes = Buffer.from(raw.data[0], "base64");
    expect(bytes[12]).toBe(0);
    expect(bytes.subarray(45).equals(elf)).toBe(true);
  });

  it("runs the deployed program in a real transaction", async () => {
    const payer = await fundedSigner(net);
    const mint = await generateKeyPairSigner();
    const rent = BigInt((await net.call("getMinimumBalanceForRentExemption", [82])).result);
    const { value: bh } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
    const tx = await signedTransaction(
      payer,
      [
        getCreateAccountInstruction({
          payer,
          newAccount: mint,
          lamports: rent,
          space: 82n,
          programAddress: programId as Address,
        }),
        getInitializeMint2Instruction(
          { mint: mint.address, decimals: 9, mintAuthority: payer.address },
          { programAddress: programId as Address },
        ),
      ],
      bh,
    );
    expect(
      (await net.call("sendTransaction", [tx.base64, { encoding: "base64", preflightCommitment: "processed" }])).result,
    ).toBe(tx.signature);
    const landed = await waitFor(
      "transaction",
      async () =>
        (
          await net.call("getTransaction", [
            tx.signature,
            { commitment: "confirmed", maxSupportedTransactionVersion: 0 },
          ])
        ).result,
    );
    expect(landed.meta.err).toBeNull();
    expect(landed.meta.logMessages).toEqual(
      expect.arrayContaining([
        `Program ${programId} invoke [1]`,
        "Program log: Instruction: InitializeMint2",
        `Program ${programId} success`,
      ]),
    );
    const account = (await net.call("getAccountInfo", [mint.address, { encoding: "base64", commitment: "confirmed" }]))
      .result.value;
    const state = Buffer.from(account.data[0], "base64");
    expect(account.owner).toBe(programId);
    expect(state.readUInt32LE(0)).toBe(1); // mint authority: Some
    expect(bs58.encode(state.subarray(4, 36))).toBe(payer.address);
    expect(state[44]).toBe(9); // decimals
    expect(state[45]).toBe(1); // initialized
  });
});

describe("bad files stop the start with an error naming them", () => {
  const key = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
  const good = JSON.stringify({
    pubkey: key,
    account: {
      lamports: 1,
      data: ["AAE=", "base64"],
      owner: "11111111111111111111111111111111",
      executable: false,
      rentEpoch: 0,
      space: 2,
    },
  });
  const cases: [string, () => Parameters<typeof startLocalnet>[0], RegExp][] = [
    [
      "a missing file",
      () => ({ accounts: [{ file: path.join(dir, "nope.json") }] }),
      /account file .*nope\.json: cannot be read \(ENOENT\)/,
    ],
    [
      "bad JSON",
      () => ({ accounts: [{ file: write("bad-json.json", "{ pubkey: ") }] }),
      /account file .*bad-json\.json: not JSON/,
    ],
    [
      "bad base64",
      () => ({ accounts: [{ file: write("bad-b64.json", good.replace("AAE=", "AA*E")) }] }),
      /account file .*bad-b64\.json: "account\.data" is not valid base64/,
    ],
    [
      "a wrong pubkey",
      () => ({ accountsDir: mkdtempWith("wrong.json", good.replace(key, "not-a-key")) }),
      /account file .*wrong\.json: "pubkey" is not a valid address: "not-a-key"/,
    ],
    [
      "a space that disagrees",
      () => ({ accounts: [{ file: write("space.json", good.replace('"space":2', '"space":3')) }] }),
      /space\.json: "account\.space" is 3 but the data has 2 bytes/,
    ],
    [
      "a program that is not SBF",
      () => ({ programs: [{ address: key, file: write("not.so", "hello, not an ELF at all".repeat(4)) }] }),
      /program file .*not\.so: not an ELF file/,
    ],
    [
      "an executable account LiteSVM cannot load",
      () => ({
        accounts: [
          {
            file: write(
              "exe.json",
              good
                .replace('"executable":false', '"executable":true')
                .replace(/"owner":"1+"/, '"owner":"BPFLoader2111111111111111111111111111111111"'),
            ),
          },
        ],
      }),
      /exe\.json: LiteSVM refused account 9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin/,
    ],
    [
      "a missing account directory",
      () => ({ accountsDir: path.join(dir, "no-such-dir") }),
      /account directory .*no-such-dir: cannot be read \(ENOENT\)/,
    ],
  ];
  function mkdtempWith(name: string, text: string): string {
    const sub = mkdtempSync(path.join(dir, "bad-"));
    writeFileSync(path.join(sub, name), text);
    return sub;
  }
  for (const [what, options, message] of cases) {
    it(what, async () => {
      const error = await startLocalnet({ slotMs: 20, ...options() }).then(
        async (handle) => {
          await handle.stop();
          return null;
        },
        (e: Error) => e,
      );
      expect(error?.message).toMatch(message);
      expect(error?.message).toMatch(/localnet: /);
    });
  }
});
