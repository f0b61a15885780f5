/**
 * Durable nonces: a transaction whose first instruction is the System program's AdvanceNonceAccount
 * may use the blockhash its nonce account holds instead of a recent one.
 */
import bs58 from "bs58";
import type { DecodedTransaction } from "../wire/decode-transaction.ts";
import { SYSTEM_PROGRAM } from "../accounts/program-ids.ts";

/** Does `tx` advance a nonce account that holds its blockhash? `readAccount` reads the chain's current state. */
export function isNonceValid(
  tx: DecodedTransaction,
  readAccount: (address: string) => { owner: string; data: Uint8Array } | null,
): boolean {
  const ix = tx.message.instructions[0];
  if (!ix || tx.message.staticKeys[ix.programIdIndex] !== SYSTEM_PROGRAM) return false;
  if (ix.data.length < 4 || ix.data[0] !== 4 || ix.data[1] !== 0 || ix.data[2] !== 0 || ix.data[3] !== 0) return false;
  const nonceIndex = ix.accounts[0];
  if (nonceIndex === undefined || nonceIndex >= tx.message.staticKeys.length) return false;
  const account = readAccount(tx.message.staticKeys[nonceIndex]!);
  if (account === null || account.owner !== SYSTEM_PROGRAM || account.data.length < 80 || account.data[4] !== 1)
    return false;
  return bs58.encode(account.data.subarray(40, 72)) === tx.message.recentBlockhash;
}
