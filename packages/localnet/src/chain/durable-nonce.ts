/**
 * Durable nonces, as agave 4.2 recognises and advances them (runtime/src/bank/check_transactions.rs,
 * svm/src/transaction_processor.rs `validate_transaction_nonce`, svm/src/rollback_accounts.rs).
 *
 * A transaction whose blockhash is not a recent one is a nonce transaction only when instruction 0 is
 * the System program's AdvanceNonceAccount on a static (SIMD-0242), writable account that is a
 * System-owned, initialized, current-version nonce account holding the transaction's blockhash, the
 * nonce can still be advanced in this block, and the nonce authority signed instruction 0. Anything
 * else is BlockhashNotFound. Such a transaction advances its nonce even when it fails (the rollback
 * accounts), so the stored value is checked again against the current state before each execution:
 * a second transaction on one nonce in one block (SIMD-0083) no longer matches and is dropped.
 *
 * The advanced value is sha256("DURABLE_NONCE" || the bank's last blockhash), which in a block being
 * produced is its parent's blockhash; LiteSVM derives it from the transaction's own blockhash instead,
 * so the executor rewrites what LiteSVM stored (`correctAdvancedNonce`).
 */
import { createHash } from "node:crypto";
import bs58 from "bs58";
import type { DecodedMessage, DecodedTransaction } from "../wire/decode-transaction.ts";
import { staticAccountKeys } from "../wire/account-keys.ts";
import { LAMPORTS_PER_SIGNATURE } from "../wire/fees.ts";
import { SYSTEM_PROGRAM } from "../accounts/program-ids.ts";

/** Size of a nonce account's state (agave's `nonce::state::State::size()`). */
export const NONCE_ACCOUNT_SIZE = 80;
const ADVANCE_NONCE_ACCOUNT = 4;
const INITIALIZE_NONCE_ACCOUNT = 6;
const CURRENT_VERSION = 1;
const INITIALIZED = 1;
const AUTHORITY = 8;
const DURABLE_NONCE = 40;
const FEE_CALCULATOR = 72;
const PREFIX = Buffer.from("DURABLE_NONCE");

/** The nonce account a nonce transaction advances. */
export interface NonceUse {
  /** Its index among the static keys. */
  index: number;
  address: string;
  key: Uint8Array;
}

/** An account as the nonce check reads it. */
export type NonceAccountReader = (address: string, key: Uint8Array) => { owner: string; data: Uint8Array } | null;

/** agave's `DurableNonce::from_blockhash`: the value an advance stores while `blockhash` is the bank's last. */
export function durableNonceFrom(blockhash: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(PREFIX).update(blockhash).digest());
}

const u32At = (data: Uint8Array, offset: number) =>
  new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(offset, true);

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

/** An initialized, current-version nonce account (`verify_nonce_account`'s parse), or null. */
export function initializedNonce(
  owner: string,
  data: Uint8Array,
): { authority: Uint8Array; durableNonce: Uint8Array } | null {
  if (owner !== SYSTEM_PROGRAM || data.length < NONCE_ACCOUNT_SIZE) return null;
  if (u32At(data, 0) !== CURRENT_VERSION || u32At(data, 4) !== INITIALIZED) return null;
  return {
    authority: data.subarray(AUTHORITY, AUTHORITY + 32),
    durableNonce: data.subarray(DURABLE_NONCE, DURABLE_NONCE + 32),
  };
}

/** The message's 32 blockhash bytes. */
const blockhashBytes = (message: DecodedMessage) =>
  message.bytes.subarray(message.blockhashOffset, message.blockhashOffset + 32);

/**
 * agave's `get_durable_nonce`: the static index of the account instruction 0 advances, when instruction
 * 0 is AdvanceNonceAccount (its data may run on) and that account is a writable static key; else null.
 */
export function durableNonceIndex(message: DecodedMessage): number | null {
  const ix = message.instructions[0];
  if (ix === undefined || message.staticKeys[ix.programIdIndex] !== SYSTEM_PROGRAM) return null;
  if (ix.data.length < 4 || u32At(ix.data, 0) !== ADVANCE_NONCE_ACCOUNT) return null;
  const index = ix.accounts[0];
  if (index === undefined || index >= message.staticKeys.length) return null;
  return staticAccountKeys(message).writable[index] ? index : null;
}

/**
 * agave's `load_message_nonce_data`: the nonce account instruction 0 advances, when it is an
 * initialized, current-version System nonce account holding the message's blockhash; else null.
 * `strict` is the leader's check that the account is exactly a nonce account's size (agave's banking
 * stage; simulations and getFeeForMessage skip it).
 */
export function heldNonce(
  message: DecodedMessage,
  read: NonceAccountReader,
  strict: boolean,
): (NonceUse & { authority: Uint8Array }) | null {
  const index = durableNonceIndex(message);
  if (index === null) return null;
  const address = message.staticKeys[index]!;
  const key = message.staticKeyBytes[index]!;
  const account = read(address, key);
  if (account === null) return null;
  if (strict && account.data.length !== NONCE_ACCOUNT_SIZE) return null;
  const nonce = initializedNonce(account.owner, account.data);
  if (nonce === null || !sameBytes(nonce.durableNonce, blockhashBytes(message))) return null;
  return { index, address, key, authority: nonce.authority };
}

/**
 * The nonce account `tx` advances, or null when it is no valid nonce transaction now (BlockhashNotFound).
 * `nextDurableNonce` is the value an advance would store in this bank.
 */
export function nonceToAdvance(
  tx: DecodedTransaction,
  read: NonceAccountReader,
  nextDurableNonce: Uint8Array,
  strict: boolean,
): NonceUse | null {
  const { message } = tx;
  // A nonce advanced in this bank already holds the next value: it cannot be advanced again here.
  if (sameBytes(blockhashBytes(message), nextDurableNonce)) return null;
  const held = heldNonce(message, read, strict);
  if (held === null) return null;
  // The authority must be a signer among instruction 0's accounts (`get_ix_signers(0)`).
  const signers = message.header.numRequiredSignatures;
  const signed = message.instructions[0]!.accounts.some(
    (i) => i < signers && sameBytes(message.staticKeyBytes[i]!, held.authority),
  );
  return signed ? { index: held.index, address: held.address, key: held.key } : null;
}

/** The nonce account's data advanced to `nextDurableNonce` (authority kept), as the rollback accounts hold it. */
export function advancedNonceData(data: Uint8Array, nextDurableNonce: Uint8Array): Uint8Array {
  const next = new Uint8Array(data);
  next.set(nextDurableNonce, DURABLE_NONCE);
  new DataView(next.buffer).setBigUint64(FEE_CALCULATOR, LAMPORTS_PER_SIGNATURE, true);
  return next;
}

/**
 * Indexes of the accounts the message's top-level AdvanceNonceAccount and InitializeNonceAccount
 * instructions write: where LiteSVM stores its own nonce value (a nonce set through a cross-program
 * invocation is not looked for).
 */
export function nonceWriteIndexes(message: DecodedMessage, advancesOnly = false): number[] {
  const indexes: number[] = [];
  for (const ix of message.instructions) {
    if (message.staticKeys[ix.programIdIndex] !== SYSTEM_PROGRAM || ix.data.length < 4) continue;
    const tag = u32At(ix.data, 0);
    const index = ix.accounts[0];
    if (index === undefined) continue;
    if (tag === ADVANCE_NONCE_ACCOUNT || (tag === INITIALIZE_NONCE_ACCOUNT && !advancesOnly)) indexes.push(index);
  }
  return indexes;
}

/**
 * An AdvanceNonceAccount instruction fails (NonceBlockhashNotExpired) in agave when the stored nonce is
 * the bank's next value, in LiteSVM when it is sha256("DURABLE_NONCE" || the transaction's blockhash).
 * Where the two disagree (a nonce advanced earlier in this block, or in the block whose parent's
 * blockhash the transaction uses), returns the data for the account to hold while LiteSVM runs, so
 * that LiteSVM decides as agave does; null when they agree.
 */
export function nonceDataForAdvance(
  message: DecodedMessage,
  owner: string,
  data: Uint8Array,
  nextDurableNonce: Uint8Array,
): Uint8Array | null {
  const nonce = initializedNonce(owner, data);
  if (nonce === null) return null;
  const liteSvmValue = durableNonceFrom(blockhashBytes(message));
  const agaveRefuses = sameBytes(nonce.durableNonce, nextDurableNonce);
  if (agaveRefuses === sameBytes(nonce.durableNonce, liteSvmValue)) return null;
  const stand = new Uint8Array(data);
  stand.set(agaveRefuses ? liteSvmValue : nextDurableNonce, DURABLE_NONCE);
  return stand;
}

/**
 * After LiteSVM ran `message` successfully: an account it advanced or initialized holds sha256("DURABLE_NONCE" ||
 * the transaction's blockhash). Returns the data with agave's value instead, or null when `data` holds
 * no such value (nothing to correct).
 */
export function correctAdvancedNonce(
  message: DecodedMessage,
  owner: string,
  data: Uint8Array,
  nextDurableNonce: Uint8Array,
): Uint8Array | null {
  if (data.length !== NONCE_ACCOUNT_SIZE) return null;
  const nonce = initializedNonce(owner, data);
  if (nonce === null) return null;
  const liteSvmValue = durableNonceFrom(blockhashBytes(message));
  if (!sameBytes(nonce.durableNonce, liteSvmValue) || sameBytes(liteSvmValue, nextDurableNonce)) return null;
  return advancedNonceData(data, nextDurableNonce);
}

/** The durable nonce an advance stores in a bank whose last blockhash is `blockhash` (base58). */
export const nextDurableNonceAfter = (blockhash: string): Uint8Array => durableNonceFrom(bs58.decode(blockhash));
