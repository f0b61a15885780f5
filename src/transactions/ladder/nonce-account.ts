/**
 * A durable nonce account as a fee ladder needs it: read from the newest bank, checked to be an initialized nonce
 * owned by the System program, with its authority and stored value. Decoding is @solana-program/system's.
 */
import { address as toAddress, isAddress } from "@solana/kit";
import type { GetAccountInfoApi, GetBalanceApi, GetMinimumBalanceForRentExemptionApi, Rpc } from "@solana/kit";
import { getNonceDecoder, getNonceSize } from "@solana-program/system";
import { SolgateError } from "../../errors.ts";

const SYSTEM_PROGRAM = "11111111111111111111111111111111";
const nonceDecoder = getNonceDecoder();

/** An initialized nonce account. */
export interface NonceAccount {
  readonly address: string;
  readonly authority: string;
  /** The stored nonce value: the blockhash every rung must name. */
  readonly nonce: string;
}

/** The calls this module makes. */
export type NonceRpc = Rpc<GetAccountInfoApi & GetBalanceApi & GetMinimumBalanceForRentExemptionApi>;

/**
 * Reads and checks a nonce account at `processed` commitment (the bank the next rung would run in).
 * @throws SolgateError INVALID_ADDRESS, NONCE_ACCOUNT_NOT_FOUND or NONCE_ACCOUNT_INVALID.
 */
export async function readNonceAccount(rpc: NonceRpc, address: string): Promise<NonceAccount> {
  if (!isAddress(address))
    throw new SolgateError("INVALID_ADDRESS", "nonceAccount is not a base58 address of 32 bytes", {
      field: "nonceAccount",
    });
  const { value } = await rpc
    .getAccountInfo(toAddress(address), { commitment: "processed", encoding: "base64" })
    .send();
  if (value === null)
    throw new SolgateError("NONCE_ACCOUNT_NOT_FOUND", `nonce account ${address} does not exist`, {
      nonceAccount: address,
    });
  const data = Buffer.from(value.data[0], "base64");
  const invalid = (why: string) =>
    new SolgateError("NONCE_ACCOUNT_INVALID", `account ${address} is not a usable nonce account: ${why}`, {
      nonceAccount: address,
    });
  if (String(value.owner) !== SYSTEM_PROGRAM) throw invalid(`it is owned by ${value.owner}, not the System program`);
  if (data.length !== getNonceSize()) throw invalid(`its data is ${data.length} bytes, not ${getNonceSize()}`);
  const decoded = nonceDecoder.decode(data);
  // NonceState: 0 uninitialized, 1 initialized.
  if (Number(decoded.state) !== 1) throw invalid("it is not initialized");
  return { address, authority: String(decoded.authority), nonce: String(decoded.blockhash) };
}

/** The fee payer's lamports, and the least it must keep after a fee (rent exemption of an empty account). */
export async function feePayerRoom(
  rpc: NonceRpc,
  feePayer: string,
  rentCache: { value?: bigint },
): Promise<{ balance: bigint; keep: bigint }> {
  const balance = rpc.getBalance(toAddress(feePayer), { commitment: "processed" }).send();
  rentCache.value ??= BigInt(await rpc.getMinimumBalanceForRentExemption(0n).send());
  return { balance: BigInt((await balance).value), keep: rentCache.value };
}

/**
 * Refuses a fee the payer cannot pay and stay rent-exempt (agave's fee-payer check: such a rung would not even be
 * processed). @throws SolgateError LADDER_FEE_UNAFFORDABLE.
 */
export function assertAffordable(room: { balance: bigint; keep: bigint }, fee: bigint, feePayer: string): void {
  if (room.balance >= fee + room.keep) return;
  throw new SolgateError(
    "LADDER_FEE_UNAFFORDABLE",
    `fee payer ${feePayer} holds ${room.balance} lamports; the top rung's fee of ${fee} plus the ${room.keep} it must keep rent-exempt needs ${fee + room.keep}`,
    { feePayer, balance: room.balance.toString(), required: (fee + room.keep).toString() },
  );
}
