/**
 * The private members of litesvm the localnet depends on (src/chain/litesvm-native.ts), checked by
 * name so that an upgrade which renames or drops one fails here, saying which, rather than somewhere
 * deep in the chain.
 */
import { LiteSVM } from "litesvm";
import { expect, it } from "vitest";
import * as native from "../../src/chain/litesvm-native.ts";

/** Every method of the binding the localnet calls (chain, executor, genesis, cluster, sysvars, faucet). */
const METHODS = [
  "getAccount",
  "setAccount",
  "sendLegacyTransaction",
  "sendVersionedTransaction",
  "simulateLegacyTransaction",
  "simulateVersionedTransaction",
  "getBalance",
  "latestBlockhash",
  "expireBlockhash",
  "setClock",
  "setEpochSchedule",
  "getEpochSchedule",
  "setBlockhashCheck",
  "setTransactionHistory",
  "setSigverify",
  "minimumBalanceForRentExemption",
];

it("finds the native binding under LiteSVM, with every method the chain calls", () => {
  const svm = native.nativeSvm(new LiteSVM());
  for (const method of METHODS)
    expect(typeof (svm as unknown as Record<string, unknown>)[method], method).toBe("function");
});

it("finds the error enums the transaction-error decoder maps", () => {
  for (const name of [
    "InstructionErrorBorshIo",
    "InstructionErrorCustom",
    "TransactionErrorDuplicateInstruction",
    "TransactionErrorInsufficientFundsForRent",
    "TransactionErrorInstructionError",
    "TransactionErrorProgramExecutionTemporarilyRestricted",
  ]) {
    expect(name in native, name).toBe(true);
  }
});

it("says which member is missing when the wrapper has no binding", () => {
  expect(() => native.nativeSvm({} as LiteSVM)).toThrow("litesvm: the LiteSVM wrapper has no native binding `inner`");
});
