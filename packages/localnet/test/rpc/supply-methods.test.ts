/**
 * getSupply and getLargestAccounts over the whole chain, with agave 4.4's non-circulating supply:
 * its fixed list of mainnet-beta addresses (listed even on a test validator, where they hold
 * nothing) and the stake accounts whose lockup is in force or whose withdrawer is on agave's list.
 * The stake accounts here are made by real System/Stake program transactions.
 */
import { AccountRole, generateKeyPairSigner, type Address, type KeyPairSigner } from "@solana/kit";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  NON_CIRCULATING_ACCOUNTS,
  NON_CIRCULATING_WITHDRAW_AUTHORITIES,
} from "../../src/rpc/non-circulating-accounts.ts";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

const STAKE_PROGRAM = "Stake11111111111111111111111111111111111111" as Address;
const SYSTEM_PROGRAM = "11111111111111111111111111111111" as Address;
const RENT_SYSVAR = "SysvarRent111111111111111111111111111111111" as Address;
const STAKE_SIZE = 200n;

let net: TestLocalnet;
let payer: KeyPairSigner;
beforeAll(async () => {
  net = await startTestLocalnet();
  payer = await fundedSigner(net, 50_000_000_000n);
}, 30_000);
afterAll(async () => {
  await net?.stop();
});

const supply = async (config: Record<string, unknown> = {}) =>
  (await net.call("getSupply", [{ commitment: "processed", ...config }])).result.value;

/** A stake account initialized by the Stake program with `withdrawer` and a lockup until `lockupEpoch`. */
async function initializedStake(withdrawer: string, lockupEpoch: bigint, lamports: bigint): Promise<string> {
  const stake = await generateKeyPairSigner();
  const create = Buffer.alloc(52);
  create.writeUInt32LE(0, 0); // SystemInstruction::CreateAccount
  create.writeBigUInt64LE(lamports, 4);
  create.writeBigUInt64LE(STAKE_SIZE, 12);
  Buffer.from(bs58.decode(STAKE_PROGRAM)).copy(create, 20);
  const init = Buffer.alloc(116);
  init.writeUInt32LE(0, 0); // StakeInstruction::Initialize(Authorized, Lockup)
  Buffer.from(bs58.decode(payer.address)).copy(init, 4);
  Buffer.from(bs58.decode(withdrawer)).copy(init, 36);
  init.writeBigInt64LE(0n, 68); // lockup unix timestamp
  init.writeBigUInt64LE(lockupEpoch, 76);
  const bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
  const tx = await signedTransaction(
    payer,
    [
      {
        programAddress: SYSTEM_PROGRAM,
        accounts: [
          { address: payer.address, role: AccountRole.WRITABLE_SIGNER, signer: payer },
          { address: stake.address, role: AccountRole.WRITABLE_SIGNER, signer: stake },
        ],
        data: new Uint8Array(create),
      },
      {
        programAddress: STAKE_PROGRAM,
        accounts: [
          { address: stake.address, role: AccountRole.WRITABLE },
          { address: RENT_SYSVAR, role: AccountRole.READONLY },
        ],
        data: new Uint8Array(init),
      },
    ] as never,
    bh,
  );
  const sent = await net.call("sendTransaction", [tx.base64, { encoding: "base64", preflightCommitment: "processed" }]);
  expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
  await waitFor("stake account", async () => {
    const status = (await net.call("getSignatureStatuses", [[tx.signature]])).result.value[0];
    return status !== null ? status : null;
  });
  const status = (await net.call("getSignatureStatuses", [[tx.signature]])).result.value[0];
  expect(status.err).toBeNull();
  return stake.address;
}

describe("supply", () => {
  it("lists agave 4.4's non-circulating addresses, holding nothing here, unless asked not to", async () => {
    const value = await supply();
    expect(value.nonCirculatingAccounts).toEqual([...NON_CIRCULATING_ACCOUNTS]);
    // Transcribed from solana-runtime 4.4.0's non_circulating_supply.rs: 214 distinct keys.
    expect(new Set(value.nonCirculatingAccounts).size).toBe(214);
    for (const address of value.nonCirculatingAccounts) expect(bs58.decode(address)).toHaveLength(32);
    expect(value.nonCirculating).toBe(0);
    expect(BigInt(value.total)).toBe(BigInt(value.circulating));
    // At least the stake account's million SOL and the identity's 500.
    expect(BigInt(value.total)).toBeGreaterThan(1_000_500n * 10n ** 9n);
    const excluded = await supply({ excludeNonCirculatingAccountsList: true });
    expect(excluded.nonCirculatingAccounts).toEqual([]);
    expect(excluded.total).toBe(excluded.circulating);
  });

  it("counts locked stake and stake withdrawable by a listed authority as non-circulating", async () => {
    const rent = BigInt((await net.call("getMinimumBalanceForRentExemption", [Number(STAKE_SIZE)])).result);
    const locked = await initializedStake((await generateKeyPairSigner()).address, 1_000_000n, rent + 3_000_000_000n);
    const listed = await initializedStake(NON_CIRCULATING_WITHDRAW_AUTHORITIES[0]!, 0n, rent + 2_000_000_000n);
    const free = await initializedStake((await generateKeyPairSigner()).address, 0n, rent + 4_000_000_000n);
    const value = await supply();
    // The listed addresses, then the stake accounts (in the index's order; agave's is a HashSet's).
    const listedCount = NON_CIRCULATING_ACCOUNTS.length;
    expect(value.nonCirculatingAccounts.slice(0, listedCount)).toEqual([...NON_CIRCULATING_ACCOUNTS]);
    expect(value.nonCirculatingAccounts.slice(listedCount).sort()).toEqual([locked, listed].sort());
    expect(value.nonCirculatingAccounts).not.toContain(free);
    const lockedLamports = rent + 3_000_000_000n + rent + 2_000_000_000n;
    expect(BigInt(value.nonCirculating)).toBe(lockedLamports);
    expect(BigInt(value.circulating)).toBe(BigInt(value.total) - lockedLamports);

    const largest = async (filter?: string) =>
      (
        await net.call("getLargestAccounts", [{ commitment: "processed", ...(filter ? { filter } : {}) }])
      ).result.value.map((a: { address: string }) => a.address);
    expect((await largest("nonCirculating")).sort()).toEqual([locked, listed].sort());
    const circulating = await largest("circulating");
    expect(circulating).not.toContain(locked);
    expect(circulating).not.toContain(listed);
    expect(await largest()).toContain(locked);
  });

  it("orders the largest accounts and refuses an unknown filter", async () => {
    const { value } = (await net.call("getSupply", [{ commitment: "processed" }])).result;
    const stakes = (
      await net.call("getProgramAccounts", [STAKE_PROGRAM, { encoding: "base64", dataSlice: { offset: 0, length: 0 } }])
    ).result;
    const largest = (await net.call("getLargestAccounts", [{ commitment: "processed" }])).result.value;
    expect(largest.length).toBeLessThanOrEqual(20);
    expect(largest.map((a: { address: string }) => a.address)).toEqual(expect.arrayContaining([expect.any(String)]));
    const cluster = stakes.find((s: { account: { lamports: number } }) => s.account.lamports >= 1e15);
    expect(largest.map((a: { address: string }) => a.address)).toContain(cluster.pubkey);
    const sum = largest.reduce((n: bigint, a: { lamports: number | bigint }) => n + BigInt(a.lamports), 0n);
    expect(sum).toBeLessThanOrEqual(BigInt(value.total));
    for (let i = 1; i < largest.length; i++)
      expect(BigInt(largest[i - 1].lamports) >= BigInt(largest[i].lamports)).toBe(true);
    expect((await net.call("getLargestAccounts", [{ filter: "other" }])).error.code).toBe(-32602);
  });
});
