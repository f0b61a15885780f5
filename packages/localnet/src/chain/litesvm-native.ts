/**
 * The one module that reaches into litesvm's private surface, `litesvm/dist/internal.js` (the napi
 * binding that the public `LiteSVM` class wraps). Everything else imports what litesvm exports
 * publicly (`Account`, `Clock`, `EpochSchedule`, `FailedTransactionMetadata`, `TransactionMetadata`,
 * ...) from "litesvm". What stays private, and why:
 *
 * - `LiteSvm`, the binding's class, reached as the wrapper's private `inner`: the chain drives it
 *   directly because the public wrapper takes and returns kit types (base58 addresses, kit
 *   transactions) and re-encodes every key and account on every call, which the block producer, the
 *   executor and the account index cannot afford per transaction; the wrapper offers no raw-bytes API.
 * - `SimulatedTransactionInfo` of the binding (its `meta()` and raw `postAccounts()`): the public class
 *   of that name wraps it into kit accounts.
 * - The `TransactionError*` / `InstructionError*` enums: the public entry does not export them, and a
 *   failed transaction's error is only readable through their codes (see wire/transaction-error.ts).
 *
 * test/chain/litesvm-native.test.ts fails, naming the member, if an upgrade drops any of these.
 */
import type { LiteSVM } from "litesvm";
import type { LiteSvm } from "litesvm/dist/internal.js";

export type { LiteSvm, SimulatedTransactionInfo as NativeSimulatedTransactionInfo } from "litesvm/dist/internal.js";
export {
  InstructionErrorBorshIo,
  InstructionErrorCustom,
  TransactionErrorDuplicateInstruction,
  TransactionErrorInsufficientFundsForRent,
  TransactionErrorInstructionError,
  TransactionErrorProgramExecutionTemporarilyRestricted,
} from "litesvm/dist/internal.js";

/** The native binding under a `LiteSVM` (its private `inner`); throws, naming it, when an upgrade removed it. */
export function nativeSvm(wrapper: LiteSVM): LiteSvm {
  const inner = (wrapper as unknown as { inner?: LiteSvm }).inner;
  if (inner === undefined || typeof inner.getAccount !== "function") {
    throw new Error("litesvm: the LiteSVM wrapper has no native binding `inner` (litesvm version changed?)");
  }
  return inner;
}
