/**
 * agave 4.2's fee-payer validation (svm/src/account_loader.rs `validate_fee_payer`, rent_calculator.rs
 * `check_static_account_rent_state_transition`): a transaction whose fee payer fails it is not
 * processed at all: no fee, nothing recorded, a nonce not advanced. LiteSVM runs the same check but
 * reports InsufficientFundsForRent alike for the fee payer (before execution: nothing processed) and
 * for an account left below rent after execution (fee charged); this tells the two apart.
 */
import type { TransactionErrorJson } from "../wire/transaction-error.ts";
import { NONCE_ACCOUNT_SIZE } from "./durable-nonce.ts";
import { SYSTEM_PROGRAM } from "../accounts/program-ids.ts";

/** The fee payer as loaded (null when it does not exist). */
export interface FeePayerAccount {
  lamports: bigint;
  owner: string;
  data: Uint8Array;
}

/** Is the account a System account (no data) or an initialized nonce account (agave's `get_system_account_kind`)? */
function systemAccountKind(account: FeePayerAccount): "system" | "nonce" | null {
  if (account.owner !== SYSTEM_PROGRAM) return null;
  if (account.data.length === 0) return "system";
  if (account.data.length !== NONCE_ACCOUNT_SIZE) return null;
  // Either nonce version (legacy or current) counts here; only the state must be Initialized.
  const view = new DataView(account.data.buffer, account.data.byteOffset, 8);
  return view.getUint32(0, true) <= 1 && view.getUint32(4, true) === 1 ? "nonce" : null;
}

type RentState = "uninitialized" | "exempt" | "paying";
const rentState = (lamports: bigint, minimum: bigint): RentState =>
  lamports === 0n ? "uninitialized" : lamports >= minimum ? "exempt" : "paying";

/**
 * The error that stops the transaction before it is processed, or null when the payer can pay `fee`.
 * `minimumBalance` is the rent-exempt minimum of a data size.
 */
export function feePayerError(
  payer: FeePayerAccount | null,
  fee: bigint,
  minimumBalance: (size: number) => bigint,
): TransactionErrorJson | null {
  if (payer === null || payer.lamports === 0n) return "AccountNotFound";
  const kind = systemAccountKind(payer);
  if (kind === null) return "InvalidAccountForFee";
  // A nonce account pays only from what lies above its rent-exempt minimum.
  const reserved = kind === "nonce" ? minimumBalance(NONCE_ACCOUNT_SIZE) : 0n;
  if (payer.lamports < reserved + fee) return "InsufficientFundsForFee";
  const minimum = minimumBalance(payer.data.length);
  const before = rentState(payer.lamports, minimum);
  const after = rentState(payer.lamports - fee, minimum);
  // A rent-paying account may stay rent-paying if it is not credited; nothing may become rent-paying.
  if (after === "paying" && before !== "paying") return { InsufficientFundsForRent: { account_index: 0 } };
  return null;
}
