/**
 * Which failures cost a fee, as agave 3.0's SVM decides (`svm/src/account_loader.rs`,
 * `transaction_processor.rs`): a fee payer that cannot pay (`InsufficientFundsForFee`, checked in
 * `validate_transaction_fee_payer`) leaves the transaction unprocessed: no fee, nothing recorded;
 * a transaction whose fee payer loads and pays but whose other accounts fail to load
 * (`ProgramAccountNotFound`, `InvalidProgramForExecution`) is a fees-only transaction: the fee
 * payer is debited, the transaction lands with its error and `meta.fee` is the fee. The poor fee
 * payer is a System account of 1,000 lamports loaded at start, as `solana-test-validator --account`.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateKeyPairSigner, type Address, type Instruction, type KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  balanceOf,
  fundedSigner,
  signedTransaction,
  startTestLocalnet,
  waitFor,
  type TestLocalnet,
} from "../helpers.ts";

const SYSTEM = "11111111111111111111111111111111";
let net: TestLocalnet;
let poor: KeyPairSigner;
let payer: KeyPairSigner;

beforeAll(async () => {
  poor = await generateKeyPairSigner();
  const dir = mkdtempSync(path.join(tmpdir(), "localnet-fees-"));
  const file = path.join(dir, "poor.json");
  writeFileSync(
    file,
    JSON.stringify({
      pubkey: poor.address,
      account: { lamports: 1000, data: ["", "base64"], owner: SYSTEM, executable: false, rentEpoch: 0, space: 0 },
    }),
  );
  net = await startTestLocalnet({ accounts: [{ file }] });
  payer = await fundedSigner(net);
}, 30_000);
afterAll(async () => {
  await net?.stop();
});

const processed = async () => (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;

/** An instruction to a program that is not there (or not a program). */
const callTo = (programAddress: string): Instruction => ({
  programAddress: programAddress as Address,
  accounts: [],
  data: new Uint8Array([1]),
});

describe("a fee payer with too little for the fee (InsufficientFundsForFee)", () => {
  it("is not processed: simulate reports no fee, balances, logs or units", async () => {
    const to = await generateKeyPairSigner();
    const tx = await signedTransaction(
      poor,
      [getTransferSolInstruction({ source: poor, destination: to.address, amount: 1n })],
      await processed(),
    );
    const simulated = await net.call("simulateTransaction", [
      tx.base64,
      { encoding: "base64", commitment: "processed" },
    ]);
    expect(simulated.result.value).toEqual({
      accounts: null,
      err: "InsufficientFundsForFee",
      fee: null,
      innerInstructions: null,
      loadedAccountsDataSize: 0,
      loadedAddresses: { readonly: [], writable: [] },
      logs: [],
      postBalances: null,
      postTokenBalances: null,
      preBalances: null,
      preTokenBalances: null,
      replacementBlockhash: null,
      returnData: null,
      unitsConsumed: 0,
    });
  });

  it("fails preflight with -32002 and agave's data; sent without preflight it never lands", async () => {
    const to = await generateKeyPairSigner();
    const tx = await signedTransaction(
      poor,
      [getTransferSolInstruction({ source: poor, destination: to.address, amount: 1n })],
      await processed(),
    );
    const sent = await net.call("sendTransaction", [
      tx.base64,
      { encoding: "base64", preflightCommitment: "processed" },
    ]);
    expect(sent.error).toEqual({
      code: -32002,
      message: "Transaction simulation failed: Insufficient funds for fee",
      data: {
        accounts: null,
        err: "InsufficientFundsForFee",
        fee: null,
        innerInstructions: null,
        loadedAccountsDataSize: 0,
        loadedAddresses: null,
        logs: [],
        postBalances: null,
        postTokenBalances: null,
        preBalances: null,
        preTokenBalances: null,
        replacementBlockhash: null,
        returnData: null,
        unitsConsumed: 0,
      },
    });
    const skipped = await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
    expect(skipped.result).toBe(tx.signature);
    // A few slots later: no status, no transaction, the balance untouched.
    const slot = (await net.call("getSlot", [{ commitment: "processed" }])).result;
    await waitFor(
      "three slots",
      async () => (await net.call("getSlot", [{ commitment: "confirmed" }])).result > slot + 2,
    );
    expect((await net.call("getSignatureStatuses", [[tx.signature]])).result.value).toEqual([null]);
    expect((await net.call("getTransaction", [tx.signature, { commitment: "confirmed" }])).result).toBeNull();
    expect(await balanceOf(net, poor.address)).toBe(1000n);
  });
});

describe("the fee payer is validated before the other accounts load", () => {
  it("answers InsufficientFundsForFee, not a load error, when a poor payer calls a missing program", async () => {
    const tx = await signedTransaction(poor, [callTo((await generateKeyPairSigner()).address)], await processed());
    const simulated = (
      await net.call("simulateTransaction", [tx.base64, { encoding: "base64", commitment: "processed" }])
    ).result.value;
    expect(simulated.err).toBe("InsufficientFundsForFee");
    expect(simulated.fee).toBeNull();
  });
});

describe("fees-only transactions: the fee payer loads, other accounts do not", () => {
  const cases: [string, () => Promise<string>, string][] = [
    ["a program that does not exist", async () => (await generateKeyPairSigner()).address, "ProgramAccountNotFound"],
    // A System account is no program: its owner is no loader.
    [
      "an account that is not a program",
      async () => (await fundedSigner(net, 1_000_000n)).address,
      "InvalidProgramForExecution",
    ],
  ];
  for (const [what, program, error] of cases) {
    it(`charges the fee for ${what} (${error}) and records the transaction`, async () => {
      const tx = await signedTransaction(payer, [callTo(await program())], await processed());
      const simulated = (
        await net.call("simulateTransaction", [tx.base64, { encoding: "base64", commitment: "processed" }])
      ).result.value;
      expect(simulated.err).toBe(error);
      expect(simulated.fee).toBe(5000);
      expect(simulated.logs).toEqual([]);
      expect(simulated.unitsConsumed).toBe(0);
      expect(simulated.loadedAccountsDataSize).toBe(0); // the rollback fee payer's data: none
      const sent = await net.call("sendTransaction", [
        tx.base64,
        { encoding: "base64", preflightCommitment: "processed" },
      ]);
      expect(sent.error.code).toBe(-32002);
      expect(sent.error.data.err).toBe(error);
      expect(sent.error.data.fee).toBe(5000);

      const before = await balanceOf(net, payer.address);
      expect((await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }])).result).toBe(
        tx.signature,
      );
      const landed = await waitFor(
        "the fees-only transaction",
        async () =>
          (
            await net.call("getTransaction", [
              tx.signature,
              { commitment: "confirmed", maxSupportedTransactionVersion: 0 },
            ])
          ).result,
      );
      expect(landed.meta.err).toBe(error);
      expect(landed.meta.status).toEqual({ Err: error });
      expect(landed.meta.fee).toBe(5000);
      expect(landed.meta.preBalances[0] - landed.meta.postBalances[0]).toBe(5000);
      // Nothing ran: agave records no logs or inner instructions.
      expect(landed.meta.logMessages).toBeNull();
      expect(landed.meta.innerInstructions).toBeNull();
      expect(landed.meta.computeUnitsConsumed).toBe(0);
      expect(await balanceOf(net, payer.address)).toBe(before - 5000n);
      const status = (await net.call("getSignatureStatuses", [[tx.signature]])).result.value[0];
      expect(status.err).toBe(error);
    });
  }
});
