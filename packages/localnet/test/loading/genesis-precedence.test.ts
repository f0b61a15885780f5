/**
 * Genesis accounts beat loaded account files, as in solana-test-validator, whose genesis is built
 * from the user's accounts first and then its own written over them: a file at the faucet, the
 * identity, the vote and stake accounts, the native mint, the stake config or the epoch-rewards
 * sysvar changes nothing, while a file at a program's address (SPL, core BPF) replaces it. The
 * native mint, the stake config and the 288 feature accounts (one per feature solana-test-validator
 * activates) are compared with what agave's own crates build (test/decoder-oracle, `genesisAccounts`,
 * `featureAccounts`); there is no Token-2022 native mint.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateKeyPairSigner } from "@solana/kit";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LEDGER_FILES, publicKeyOf } from "../../src/ledger/ledger-dir.ts";
import { parseJson, stringifyJson } from "../../src/rpc/json.ts";
import { startTestLocalnet, type TestLocalnet } from "../helpers.ts";

interface OracleAccount {
  lamports: number | bigint;
  owner: string;
  rentEpoch: number | bigint;
  data: string;
}
// u64-exact: the stake config's rent epoch is u64::MAX.
const ORACLE = parseJson(readFileSync(new URL("../decoder-oracle/expected.json", import.meta.url), "utf8")) as {
  genesisAccounts: Record<string, OracleAccount>;
  featureAccounts: Record<string, OracleAccount>;
};
const FEATURE = Object.keys(ORACLE.featureAccounts)[0]!;

const NATIVE_MINT = "So11111111111111111111111111111111111111112";
const TOKEN_2022_NATIVE_MINT = "9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP";
const STAKE_CONFIG = "StakeConfig11111111111111111111111111111111";
const EPOCH_REWARDS = "SysvarEpochRewards1111111111111111111111111";
const TOKEN_2022 = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
const STRANGER = (await generateKeyPairSigner()).address;

const dir = mkdtempSync(path.join(tmpdir(), "localnet-genesis-"));
const ledger = path.join(dir, "ledger");
const keyAddress = (file: string) =>
  bs58.encode(publicKeyOf(Uint8Array.from(JSON.parse(readFileSync(path.join(ledger, file), "utf8")).slice(0, 32))));

/** A file claiming `address` with a recognisable balance and data. */
function claim(address: string): string {
  const file = path.join(dir, `${address}.json`);
  writeFileSync(
    file,
    stringifyJson({
      pubkey: address,
      account: {
        lamports: 4_242_424_242,
        data: [Buffer.from("from a file").toString("base64"), "base64"],
        owner: STRANGER,
        executable: false,
        rentEpoch: 7,
      },
    }),
  );
  return file;
}

describe("genesis accounts and loaded files", () => {
  let net: TestLocalnet;
  let claimed: string[];
  const saved = process.env.LOCALNET_LEDGER_DIR;

  beforeAll(async () => {
    // The ledger's keys name the faucet, the identity and the vote account before the start that loads the files.
    process.env.LOCALNET_LEDGER_DIR = ledger;
    const first = await startTestLocalnet();
    const stake = (
      await first.call("getProgramAccounts", ["Stake11111111111111111111111111111111111111", { encoding: "base64" }])
    ).result
      .map((a: any) => a.pubkey)
      .filter((a: string) => a !== STAKE_CONFIG);
    await first.stop();
    claimed = [
      keyAddress(LEDGER_FILES.faucet),
      keyAddress(LEDGER_FILES.identity),
      keyAddress(LEDGER_FILES.voteAccount),
      ...stake,
      NATIVE_MINT,
      STAKE_CONFIG,
      EPOCH_REWARDS,
      FEATURE,
    ];
    expect(stake).toHaveLength(1);
    net = await startTestLocalnet({
      accounts: [...claimed, TOKEN_2022].map((address) => ({ address, file: claim(address) })),
    });
  }, 60_000);
  afterAll(async () => {
    if (saved === undefined) delete process.env.LOCALNET_LEDGER_DIR;
    else process.env.LOCALNET_LEDGER_DIR = saved;
    await net?.stop();
  });

  it("keeps the genesis accounts a file claims", async () => {
    const { result } = await net.call("getMultipleAccounts", [claimed, { encoding: "base64" }]);
    result.value.forEach((account: any, i: number) => {
      expect(account, claimed[i]).not.toBeNull();
      expect(account.lamports, claimed[i]).not.toBe(4_242_424_242);
      expect(account.owner, claimed[i]).not.toBe(STRANGER);
    });
  });

  it("has agave's native mint, stake config and feature accounts, and no Token-2022 native mint", async () => {
    for (const address of [NATIVE_MINT, STAKE_CONFIG, ...Object.keys(ORACLE.featureAccounts)]) {
      const { value } = (await net.call("getAccountInfo", [address, { encoding: "base64" }])).result;
      const oracle = ORACLE.genesisAccounts[address] ?? ORACLE.featureAccounts[address]!;
      const want = { ...oracle, lamports: BigInt(oracle.lamports), rentEpoch: BigInt(oracle.rentEpoch) };
      expect({
        lamports: BigInt(value.lamports),
        owner: value.owner,
        rentEpoch: BigInt(value.rentEpoch),
        data: value.data[0],
      }).toEqual(want);
    }
    expect((await net.call("getAccountInfo", [TOKEN_2022_NATIVE_MINT])).result.value).toBeNull();
  });

  it("lets a file replace a program account", async () => {
    const { value } = (await net.call("getAccountInfo", [TOKEN_2022, { encoding: "base64" }])).result;
    expect(value).toMatchObject({ lamports: 4_242_424_242, owner: STRANGER, executable: false, rentEpoch: 7 });
  });
});
