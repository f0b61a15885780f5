/**
 * The cost model against agave 4.4's constants (unchanged from 3.0's) (cost-model/src/block_cost_limits.rs: 720 per signature,
 * 300 per write lock, data bytes / 4, 6,690 / 2,400 / 4,800 per secp256k1 / ed25519 / secp256r1 precompile
 * signature, 8 CU per 32 KiB of loaded data; compute budget defaults 200,000 / 3,000 capped at 1,400,000),
 * on transactions built and signed with @solana/kit and decoded by the localnet's own gate. The expected
 * figures are written out from the constants, not computed by the code under test.
 */
import { describe, expect, it } from "vitest";
import { address, generateKeyPairSigner, type Address, type Instruction, type KeyPairSigner } from "@solana/kit";
import { getAllocateInstruction, getCreateAccountInstruction, getTransferSolInstruction } from "@solana-program/system";
import {
  getRequestHeapFrameInstruction,
  getSetComputeUnitLimitInstruction,
  getSetComputeUnitPriceInstruction,
  getSetLoadedAccountsDataSizeLimitInstruction,
} from "@solana-program/compute-budget";
import {
  allocatedAccountsDataSize,
  computeBudgetLimits,
  transactionCost,
  transactionPriority,
  transactionReward,
} from "../../src/chain/cost-model.ts";
import { decodeTransaction, type DecodedTransaction } from "../../src/wire/decode-transaction.ts";
import { staticAccountKeys } from "../../src/wire/account-keys.ts";
import { signedTransaction } from "../helpers.ts";

const BLOCKHASH = { blockhash: "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N", lastValidBlockHeight: 150n };
/** 64 MiB default loaded-accounts limit: 2,048 pages x 8 CU. */
const DEFAULT_LOADED = 16_384n;
const MEMO = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

async function build(
  payer: KeyPairSigner,
  instructions: Instruction[],
): Promise<{ tx: DecodedTransaction; writable: number }> {
  const { base64 } = await signedTransaction(payer, instructions, BLOCKHASH);
  const tx = decodeTransaction(new Uint8Array(Buffer.from(base64, "base64")));
  return { tx, writable: staticAccountKeys(tx.message).writable.filter(Boolean).length };
}

const raw = (programAddress: Address, data: number[]): Instruction => ({
  programAddress,
  data: new Uint8Array(data),
});

describe("cost model (agave 4.4)", () => {
  it("costs a plain transfer with agave's defaults: a builtin asks 3,000 CU, loaded data 64 MiB", async () => {
    const payer = await generateKeyPairSigner();
    const to = (await generateKeyPairSigner()).address;
    const { tx, writable } = await build(payer, [
      getTransferSolInstruction({ source: payer, destination: to, amount: 1n }),
    ]);
    expect(writable).toBe(2);
    const cost = transactionCost(tx.message, writable);
    expect(cost).toEqual({
      signatureCost: 720n,
      writeLockCost: 600n,
      dataBytesCost: 3n, // 12 bytes / 4
      programsExecutionCost: 3_000n,
      loadedAccountsDataSizeCost: DEFAULT_LOADED,
      total: 720n + 600n + 3n + 3_000n + DEFAULT_LOADED,
    });
  });

  it("takes the requested limit and loaded-data size, and counts their data bytes", async () => {
    const payer = await generateKeyPairSigner();
    const to = (await generateKeyPairSigner()).address;
    const { tx, writable } = await build(payer, [
      getSetComputeUnitLimitInstruction({ units: 50_000 }),
      getSetComputeUnitPriceInstruction({ microLamports: 1_000n }),
      getSetLoadedAccountsDataSizeLimitInstruction({ accountDataSizeLimit: 100_000 }),
      getTransferSolInstruction({ source: payer, destination: to, amount: 1n }),
    ]);
    const cost = transactionCost(tx.message, writable);
    expect(cost.programsExecutionCost).toBe(50_000n);
    expect(cost.loadedAccountsDataSizeCost).toBe(32n); // ceil(100,000 / 32,768) = 4 pages x 8
    expect(cost.dataBytesCost).toBe(7n); // (5 + 9 + 5 + 12) = 31 bytes / 4
    expect(cost.total).toBe(720n + 600n + 7n + 50_000n + 32n);
    // reward = ceil(1,000 x 50,000 / 1e6) = 50 priority + half of the 5,000 signature fee.
    expect(transactionReward(tx.message)).toBe(50n + 2_500n);
    expect(transactionPriority(2_550n, cost.total)).toBe((2_550n * 1_000_000n) / (cost.total + 1n));
  });

  it("asks 200,000 per non-builtin instruction (compute budget instructions are builtins), capped at 1,400,000", async () => {
    const payer = await generateKeyPairSigner();
    const memo = raw(MEMO, [104, 105]);
    const one = await build(payer, [getSetComputeUnitPriceInstruction({ microLamports: 1n }), memo]);
    expect(transactionCost(one.tx.message, one.writable).programsExecutionCost).toBe(203_000n);
    const many = await build(
      payer,
      Array.from({ length: 8 }, () => memo),
    );
    expect(transactionCost(many.tx.message, many.writable).programsExecutionCost).toBe(1_400_000n);
    const requested = await build(payer, [getSetComputeUnitLimitInstruction({ units: 2_000_000 }), memo]);
    expect(transactionCost(requested.tx.message, requested.writable).programsExecutionCost).toBe(1_400_000n);
  });

  it("knows agave 4.4's builtins: the loaders are; Vote (SIMD-0387), Stake, Config, lookup tables and secp256r1 are not", async () => {
    const payer = await generateKeyPairSigner();
    const limitOf = async (program: string) => {
      const { tx } = await build(payer, [raw(address(program), [0])]);
      return computeBudgetLimits(tx.message)?.unitLimit;
    };
    // builtins-default-costs 4.4 lists Vote as migrating with bls_pubkey_management_in_vote_account, active at genesis.
    expect(await limitOf("Vote111111111111111111111111111111111111111")).toBe(200_000);
    expect(await limitOf("BPFLoaderUpgradeab1e11111111111111111111111")).toBe(3_000);
    expect(await limitOf("LoaderV411111111111111111111111111111111111")).toBe(3_000);
    expect(await limitOf("Stake11111111111111111111111111111111111111")).toBe(200_000);
    expect(await limitOf("Config1111111111111111111111111111111111111")).toBe(200_000);
    expect(await limitOf("AddressLookupTab1e1111111111111111111111111")).toBe(200_000);
    expect(await limitOf("Secp256r1SigVerify1111111111111111111111111")).toBe(200_000);
  });

  it("counts precompile signatures at their verify costs", async () => {
    const payer = await generateKeyPairSigner();
    const { tx, writable } = await build(payer, [
      raw(address("Ed25519SigVerify111111111111111111111111111"), [2, 0]),
      raw(address("KeccakSecp256k11111111111111111111111111111"), [1]),
      raw(address("Secp256r1SigVerify1111111111111111111111111"), [3, 0]),
    ]);
    const cost = transactionCost(tx.message, writable);
    expect(cost.signatureCost).toBe(720n + 2n * 2_400n + 6_690n + 3n * 4_800n);
    expect(cost.programsExecutionCost).toBe(3_000n + 3_000n + 200_000n);
    // The leader's half of 5,000 x (1 + 2 + 1 + 3) signatures.
    expect(transactionReward(tx.message)).toBe(17_500n);
  });

  it("costs nothing to execute when the compute budget does not sanitize (agave's (0, 0))", async () => {
    const payer = await generateKeyPairSigner();
    const twice = await build(payer, [
      getSetComputeUnitLimitInstruction({ units: 10_000 }),
      getSetComputeUnitLimitInstruction({ units: 20_000 }),
    ]);
    expect(computeBudgetLimits(twice.tx.message)).toBeNull();
    const cost = transactionCost(twice.tx.message, twice.writable);
    expect(cost.programsExecutionCost + cost.loadedAccountsDataSizeCost).toBe(0n);
    expect(cost.total).toBe(720n + 300n + 2n); // 10 bytes / 4
    const badHeap = await build(payer, [getRequestHeapFrameInstruction({ bytes: 1000 })]);
    expect(computeBudgetLimits(badHeap.tx.message)).toBeNull();
    const zeroLoaded = await build(payer, [getSetLoadedAccountsDataSizeLimitInstruction({ accountDataSizeLimit: 0 })]);
    expect(computeBudgetLimits(zeroLoaded.tx.message)).toBeNull();
  });

  it("reads the account data a transaction may allocate as agave 4.4's cost model does", async () => {
    const payer = await generateKeyPairSigner();
    const MIB = 1024n * 1024n;
    const SYSTEM = address("11111111111111111111111111111111");
    const allocate = async (space: bigint) =>
      getAllocateInstruction({ newAccount: await generateKeyPairSigner(), space });
    const create = async (space: bigint) =>
      getCreateAccountInstruction({
        payer,
        newAccount: await generateKeyPairSigner(),
        lamports: 1n,
        space,
        programAddress: SYSTEM,
      });
    const sizeOf = async (instructions: Instruction[]) =>
      allocatedAccountsDataSize((await build(payer, instructions)).tx.message);
    const to = (await generateKeyPairSigner()).address;
    expect(await sizeOf([getTransferSolInstruction({ source: payer, destination: to, amount: 1n })])).toBe(0n);
    expect(await sizeOf([await allocate(1_000n), await create(2_000n)])).toBe(3_000n);
    // At most 20 MiB a transaction (MAX_PERMITTED_ACCOUNTS_DATA_ALLOCATIONS_PER_TRANSACTION).
    expect(await sizeOf([await allocate(10n * MIB), await allocate(10n * MIB), await create(MIB)])).toBe(20n * MIB);
    // An instruction sure to fail (over 10 MiB, or data that does not decode): nothing the transaction allocates counts.
    expect(await sizeOf([await allocate(1_000n), await allocate(10n * MIB + 1n)])).toBe(0n);
    expect(await sizeOf([await allocate(1_000n), raw(SYSTEM, [8, 0, 0, 0, 1])])).toBe(0n);
  });
});
