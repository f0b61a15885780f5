/**
 * agave 3.0's failure shapes of sendTransaction and simulateTransaction: a signature that does not
 * verify is a -32002 preflight failure (send) or the simulation's `SignatureFailure` (simulate with
 * sigVerify), never -32003; a transaction refused before it runs (fee payer missing) reports no fee,
 * balances, logs, units or loaded size, as agave's `TransactionSimulationResult::new_error` and
 * unprocessed branch do; preflight data never carries balances or loaded addresses. Shapes against
 * the recorded 4.1 simulate response.
 */
import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixture, shapeDiff } from "../accounts/helpers.ts";
import { fundedSigner, signedTransaction, startTestLocalnet, type TestLocalnet } from "../helpers.ts";

let net: TestLocalnet;
let payer: KeyPairSigner;

beforeAll(async () => {
  net = await startTestLocalnet();
  payer = await fundedSigner(net);
}, 30_000);
afterAll(async () => {
  await net?.stop();
});

const processed = async () => (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;

/** A transfer from `payer` with its first signature corrupted. */
async function forged(): Promise<string> {
  const to = await generateKeyPairSigner();
  const tx = await signedTransaction(
    payer,
    [getTransferSolInstruction({ source: payer, destination: to.address, amount: 1_000_000n })],
    await processed(),
  );
  const bytes = Buffer.from(tx.base64, "base64");
  bytes[10]! ^= 0xff;
  return bytes.toString("base64");
}

/** What agave reports for a transaction it did not process. */
const UNPROCESSED = {
  fee: null,
  innerInstructions: null,
  loadedAccountsDataSize: 0,
  logs: [],
  postBalances: null,
  postTokenBalances: null,
  preBalances: null,
  preTokenBalances: null,
  returnData: null,
  unitsConsumed: 0,
};

describe("sendTransaction and simulateTransaction failure shapes (agave 3.0)", () => {
  it("answers a bad signature on sendTransaction with a -32002 preflight failure, SignatureFailure", async () => {
    const res = await net.call("sendTransaction", [
      await forged(),
      { encoding: "base64", preflightCommitment: "processed" },
    ]);
    expect(res.error).toEqual({
      code: -32002,
      message: "Transaction simulation failed: Transaction did not pass signature verification",
      data: {
        ...UNPROCESSED,
        accounts: null,
        err: "SignatureFailure",
        loadedAddresses: null,
        replacementBlockhash: null,
      },
    });
  });

  it("answers a bad signature on simulateTransaction with sigVerify as a result with err SignatureFailure", async () => {
    const res = await net.call("simulateTransaction", [
      await forged(),
      { encoding: "base64", sigVerify: true, commitment: "processed" },
    ]);
    expect(res.error).toBeUndefined();
    expect(res.result.value).toEqual({
      ...UNPROCESSED,
      accounts: null,
      err: "SignatureFailure",
      loadedAddresses: { readonly: [], writable: [] },
      replacementBlockhash: null,
    });
    // Without sigVerify the same bytes simulate fine.
    const unchecked = await net.call("simulateTransaction", [
      await forged(),
      { encoding: "base64", commitment: "processed" },
    ]);
    expect(unchecked.result.value.err).toBeNull();
  });

  it("reports no fee, balances, logs or loaded size for a fee payer that does not exist", async () => {
    const stranger = await generateKeyPairSigner();
    const tx = await signedTransaction(
      stranger,
      [getTransferSolInstruction({ source: stranger, destination: payer.address, amount: 1n })],
      await processed(),
    );
    const simulated = await net.call("simulateTransaction", [
      tx.base64,
      { encoding: "base64", commitment: "processed" },
    ]);
    expect(simulated.result.value).toEqual({
      ...UNPROCESSED,
      accounts: null,
      err: "AccountNotFound",
      loadedAddresses: { readonly: [], writable: [] },
      replacementBlockhash: null,
    });
    // Same keys and types as a recorded agave 4.1 simulate response (the nullable ones aside).
    const recorded = fixture("rpc/simulateTransaction_err_MissingAccount_apiVersion4.1.0.json").result;
    expect(Object.keys(simulated.result.value).sort()).toEqual(Object.keys(recorded.value).sort());
    const sent = await net.call("sendTransaction", [
      tx.base64,
      { encoding: "base64", preflightCommitment: "processed" },
    ]);
    expect(sent.error).toEqual({
      code: -32002,
      message: "Transaction simulation failed: Attempt to debit an account but found no record of a prior credit.",
      data: {
        ...UNPROCESSED,
        accounts: null,
        err: "AccountNotFound",
        loadedAddresses: null,
        replacementBlockhash: null,
      },
    });
  });

  it("keeps the fee and logs of a transaction that ran and failed, without preflight balances", async () => {
    const to = await generateKeyPairSigner();
    const tx = await signedTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: to.address, amount: 10n ** 18n })],
      await processed(),
    );
    const simulated = (
      await net.call("simulateTransaction", [tx.base64, { encoding: "base64", commitment: "processed" }])
    ).result.value;
    expect(simulated.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(simulated.fee).toBe(5000);
    expect(simulated.preBalances).toHaveLength(3);
    const recorded = fixture("rpc/simulateTransaction_err_MissingAccount_apiVersion4.1.0.json").result;
    expect(
      shapeDiff(
        { ...simulated, replacementBlockhash: null },
        { ...recorded.value, replacementBlockhash: null, err: simulated.err },
      ),
    ).toEqual([]);
    const sent = await net.call("sendTransaction", [
      tx.base64,
      { encoding: "base64", preflightCommitment: "processed" },
    ]);
    expect(sent.error.code).toBe(-32002);
    expect(sent.error.data.fee).toBe(5000);
    expect(sent.error.data.logs.length).toBeGreaterThan(0);
    for (const key of ["preBalances", "postBalances", "preTokenBalances", "postTokenBalances", "loadedAddresses"]) {
      expect(sent.error.data[key], key).toBeNull();
    }
  });
});
