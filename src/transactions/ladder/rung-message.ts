/**
 * The compiled message of a fee ladder's rung, as bytes: which nonce it advances, its compute-unit price, and the
 * same message at another price. Rungs are compared and re-priced on the compiled form, so that "identical except
 * for the compute-unit price" means byte for byte, lookup tables and account order included.
 */
import { getCompiledTransactionMessageEncoder } from "@solana/kit";
import type { CompiledTransactionMessage } from "@solana/kit";
import { SolgateError } from "../../errors.ts";
import { decodeWireTransaction } from "../../solana/wire-transaction.ts";
import type { CompiledMessage, DecodedTransaction } from "../../solana/wire-transaction.ts";

const SYSTEM_PROGRAM = "11111111111111111111111111111111";
const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";
/** The System program's AdvanceNonceAccount: a u32 instruction index of 4. */
const ADVANCE_NONCE = [4, 0, 0, 0];
/** ComputeBudget's SetComputeUnitPrice: tag 3, then a u64 price. */
const SET_PRICE_TAG = 3;

const messageEncoder = getCompiledTransactionMessageEncoder();

/** The durable nonce a message advances first, when it does. */
export interface NonceUse {
  readonly nonceAccount: string;
  readonly authority: string;
}

/**
 * The nonce account and authority of a message whose instruction 0 is AdvanceNonceAccount, as agave recognises a
 * durable-nonce transaction; undefined for any other message.
 */
export function nonceUseOf(message: CompiledMessage): NonceUse | undefined {
  const ix = message.instructions[0];
  if (ix === undefined || String(message.staticAccounts[ix.programAddressIndex]) !== SYSTEM_PROGRAM) return undefined;
  const data = ix.data ?? new Uint8Array(0);
  if (data.length !== 4 || ADVANCE_NONCE.some((b, i) => data[i] !== b)) return undefined;
  const accounts = ix.accountIndices ?? [];
  // Agave takes the nonce account from the static keys only (a lookup-table account cannot be one).
  if (accounts.length < 3 || accounts[0] >= message.staticAccounts.length) return undefined;
  return {
    nonceAccount: String(message.staticAccounts[accounts[0]]),
    authority: String(message.staticAccounts[accounts[2]] ?? ""),
  };
}

function isPriceInstruction(message: CompiledMessage, index: number): boolean {
  const ix = message.instructions[index];
  return (
    String(message.staticAccounts[ix.programAddressIndex]) === COMPUTE_BUDGET_PROGRAM &&
    ix.data !== undefined &&
    ix.data.length === 9 &&
    ix.data[0] === SET_PRICE_TAG
  );
}

/** The message's compute-unit price (0 when it sets none), as the runtime reads it. */
export function unitPriceOf(message: CompiledMessage): bigint {
  for (let i = 0; i < message.instructions.length; i++) {
    if (!isPriceInstruction(message, i)) continue;
    return new DataView(message.instructions[i].data!.buffer, message.instructions[i].data!.byteOffset).getBigUint64(
      1,
      true,
    );
  }
  return 0n;
}

/** The message with its SetComputeUnitPrice set to `price`; undefined when it has none to set. */
function withPrice(message: CompiledMessage, price: bigint): CompiledMessage | undefined {
  const index = message.instructions.findIndex((_, i) => isPriceInstruction(message, i));
  if (index < 0) return undefined;
  const data = new Uint8Array(9);
  data[0] = SET_PRICE_TAG;
  new DataView(data.buffer).setBigUint64(1, price, true);
  const instructions = message.instructions.map((ix, i) => (i === index ? { ...ix, data } : ix));
  return { ...message, instructions } as CompiledMessage;
}

function encodeMessage(message: CompiledMessage): Uint8Array {
  return new Uint8Array(messageEncoder.encode(message as CompiledTransactionMessage));
}

/** The bytes that must be equal across a ladder's rungs: the message with its price set to 0. */
export function priceFreeBytes(tx: DecodedTransaction): Uint8Array | undefined {
  const free = withPrice(tx.message, 0n);
  return free === undefined ? undefined : encodeMessage(free);
}

/**
 * An unsigned wire transaction: the draft's message at `price`, with as many empty signatures as it needs.
 * @throws SolgateError INVALID_TRANSACTION when the message sets no compute-unit price to change.
 */
export function rungAtPrice(wire: Uint8Array, price: bigint): Uint8Array {
  const tx = decodeWireTransaction(wire);
  const priced = withPrice(tx.message, price);
  if (priced === undefined)
    throw new SolgateError("INVALID_TRANSACTION", "the prepared message sets no compute-unit price to ladder");
  const message = encodeMessage(priced);
  const signatures = tx.signatures.length;
  // A compact-u16 count (at most 127 signatures fit a transaction: one byte), then the zeroed signatures.
  const out = new Uint8Array(1 + 64 * signatures + message.length);
  out[0] = signatures;
  out.set(message, 1 + 64 * signatures);
  return out;
}
