/**
 * SendLadder's checks: before anything is sent, the signed rungs must form a ladder. Local checks first (they cost
 * no call), then the chain's word on the nonce and the fee payer. Each failure has its own reason code.
 */
import { SolgateError, isSolgateError } from "../../errors.ts";
import { assertSignaturesValid, decodeWireTransaction } from "../../solana/wire-transaction.ts";
import type { DecodedTransaction } from "../../solana/wire-transaction.ts";
import { expectedFeeOf } from "../send-transaction.ts";
import { assertAffordable, feePayerRoom, readNonceAccount } from "./nonce-account.ts";
import type { NonceAccount, NonceRpc } from "./nonce-account.ts";
import { nonceUseOf, priceFreeBytes, unitPriceOf } from "./rung-message.ts";

/** A rung that passed the checks. */
export interface CheckedRung {
  readonly tx: DecodedTransaction;
  readonly price: bigint;
  readonly fee: bigint;
}

/** What the checks establish. */
export interface CheckedLadder {
  readonly rungs: readonly CheckedRung[];
  readonly nonce: NonceAccount;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/**
 * The checks that need no call: decodable, durable-nonce rungs on one nonce account, the same message but for the
 * price, strictly rising prices, valid signatures.
 * @throws SolgateError INVALID_PARAMETER, INVALID_TRANSACTION, LADDER_NOT_NONCE, LADDER_MESSAGE_MISMATCH,
 * LADDER_PRICES_NOT_RISING, LADDER_SIGNATURE_INVALID.
 */
export function checkRungsLocally(wires: readonly Uint8Array[]): { rungs: CheckedRung[]; nonceAccount: string } {
  if (wires.length < 2 || wires.length > 8)
    throw new SolgateError("INVALID_PARAMETER", `a ladder has 2 to 8 rungs; this one has ${wires.length}`, {
      field: "transactions",
    });
  const txs = wires.map((wire) => decodeWireTransaction(wire));
  const uses = txs.map((tx) => nonceUseOf(tx.message));
  uses.forEach((use, rung) => {
    if (use === undefined)
      throw new SolgateError(
        "LADDER_NOT_NONCE",
        `rung ${rung} does not advance a durable nonce first (AdvanceNonceAccount must be instruction 0)`,
        { rung },
      );
    if (use.nonceAccount !== uses[0]!.nonceAccount)
      throw new SolgateError(
        "LADDER_NOT_NONCE",
        `rung ${rung} advances nonce account ${use.nonceAccount}, rung 0 ${uses[0]!.nonceAccount}: a ladder has one nonce`,
        { rung },
      );
  });
  const base = priceFreeBytes(txs[0]);
  txs.forEach((tx, rung) => {
    const bytes = priceFreeBytes(tx);
    if (base === undefined || bytes === undefined || !sameBytes(base, bytes))
      throw new SolgateError(
        "LADDER_MESSAGE_MISMATCH",
        `rung ${rung} differs from rung 0 in more than its compute-unit price (or sets no price): sign the rungs PrepareLadder returned`,
        { rung },
      );
  });
  const rungs = txs.map((tx) => ({ tx, price: unitPriceOf(tx.message), fee: expectedFeeOf(tx) ?? 0n }));
  for (let rung = 1; rung < rungs.length; rung++) {
    if (rungs[rung].price <= rungs[rung - 1].price)
      throw new SolgateError(
        "LADDER_PRICES_NOT_RISING",
        `rung ${rung} pays ${rungs[rung].price} micro-lamports per CU, not more than rung ${rung - 1}'s ${rungs[rung - 1].price}: list the rungs cheapest first, each dearer than the last`,
        { rung },
      );
  }
  rungs.forEach(({ tx }, rung) => {
    try {
      assertSignaturesValid(tx);
    } catch (error) {
      if (!isSolgateError(error)) throw error;
      throw new SolgateError("LADDER_SIGNATURE_INVALID", `rung ${rung}: ${error.message}`, { rung, ...error.details });
    }
  });
  return { rungs, nonceAccount: uses[0]!.nonceAccount };
}

/**
 * Every check, the chain's included: the nonce account is still an initialized nonce whose value the rungs name,
 * and the fee payer can afford the top rung.
 * @throws SolgateError as {@link checkRungsLocally}, and NONCE_ACCOUNT_NOT_FOUND, NONCE_ACCOUNT_INVALID,
 * LADDER_NONCE_STALE, LADDER_FEE_UNAFFORDABLE.
 */
export async function checkLadder(
  rpc: NonceRpc,
  wires: readonly Uint8Array[],
  rent: { value?: bigint },
): Promise<CheckedLadder> {
  const { rungs, nonceAccount } = checkRungsLocally(wires);
  const nonce = await readNonceAccount(rpc, nonceAccount);
  const blockhash = rungs[0].tx.blockhash;
  if (blockhash !== nonce.nonce)
    throw new SolgateError(
      "LADDER_NONCE_STALE",
      `the rungs name ${blockhash}, but nonce account ${nonceAccount} now holds ${nonce.nonce}: the nonce moved; prepare and sign again`,
      { nonceAccount, nonce: nonce.nonce },
    );
  const feePayer = rungs[0].tx.signers[0];
  assertAffordable(await feePayerRoom(rpc, feePayer, rent), rungs[rungs.length - 1].fee, feePayer);
  return { rungs, nonce };
}
