/**
 * A block from the Yellowstone Geyser stream (`SubscribeUpdateBlock`, with its transactions) as the fee
 * market sees it: the same {@link BlockPrices} that `pricesOfBlock` reads from a `getBlock` answer, so a
 * block fed from the stream and one read over JSON-RPC enter the window alike. The stream hands the message
 * already split into fields (keys as bytes, instructions with their program index), so nothing is scanned
 * from wire bytes; the facts are tallied with the same code (block-transactions.ts). Write locks loaded from
 * lookup tables come from the meta's `loaded_writable_addresses`, which the node has resolved, as
 * `meta.loadedAddresses.writable` on the JSON-RPC path. The message is untrusted: a transaction whose header
 * or instructions do not fit its keys is counted unreadable and left out.
 */
import type { SubscribeUpdateBlock, SubscribeUpdateTransactionInfo } from "../../gen/geyser/geyser_pb.js";
import type { Message } from "../../gen/geyser/solana-storage_pb.js";
import { base58OfKey } from "../solana/base58-key.ts";
import { JITO_TIP_ACCOUNT_KEYS } from "../solana/jito-tip-accounts.ts";
import { finishTally, newInstructionTally, pricedTransaction, tallyInstruction } from "./block-transactions.ts";
import type { BlockPrices, PricedTransaction, ScannedTransaction } from "./block-transactions.ts";

const KEY_BYTES = 32;
const SIGNATURE_BYTES = 64;
// A System Transfer's data: u32 instruction index 2, then u64 lamports (little-endian).
const TRANSFER_BYTES = 12;

/** A stream block as the follower takes it: where it sits in the chain, and its prices. */
export interface StreamBlock {
  readonly slot: bigint;
  /** The slot of its parent block: the slots between were skipped on its fork. */
  readonly parentSlot: bigint;
  readonly prices: BlockPrices;
}

/** Reads a `SubscribeUpdateBlock` (fetched with `include_transactions`) into the fee market's records. */
export function streamBlockOf(block: SubscribeUpdateBlock): StreamBlock {
  return { slot: block.slot, parentSlot: block.parentSlot, prices: pricesOfStreamBlock(block.transactions) };
}

/** The fee-relevant content of a stream block's transactions (votes and unreadable ones counted apart). */
export function pricesOfStreamBlock(entries: readonly SubscribeUpdateTransactionInfo[]): BlockPrices {
  const transactions: PricedTransaction[] = [];
  let votes = 0;
  let unreadable = 0;
  for (const entry of entries) {
    const scanned = scanStreamTransaction(entry);
    if (scanned === undefined) {
      unreadable++;
      continue;
    }
    if (scanned.isVote) {
      votes++;
      continue;
    }
    let writable = scanned.writable;
    const loaded = entry.meta?.loadedWritableAddresses ?? [];
    if (loaded.length > 0) {
      const seen = new Set(writable);
      for (const key of loaded) if (key.length === KEY_BYTES) seen.add(base58OfKey(key, 0));
      writable = [...seen];
    }
    const first = entry.transaction?.signatures[0];
    transactions.push(
      pricedTransaction(
        scanned,
        writable,
        first?.length === SIGNATURE_BYTES ? first : undefined,
        tipOfMessage(entry.transaction!.message!),
      ),
    );
  }
  return { transactions, votes, unreadable };
}

/** The facts `scanTransaction` reads from wire bytes, read from the stream's message; undefined when inconsistent. */
function scanStreamTransaction(entry: SubscribeUpdateTransactionInfo): ScannedTransaction | undefined {
  const message = entry.transaction?.message;
  const header = message?.header;
  if (message === undefined || header === undefined) return undefined;
  const keys = message.accountKeys;
  const keyCount = keys.length;
  const numSigners = header.numRequiredSignatures;
  const readonlySigners = header.numReadonlySignedAccounts;
  const readonlyUnsigned = header.numReadonlyUnsignedAccounts;
  if (numSigners > keyCount || readonlySigners >= numSigners || readonlyUnsigned > keyCount - numSigners)
    return undefined;
  for (const key of keys) if (key.length !== KEY_BYTES) return undefined;

  const tally = newInstructionTally();
  for (const instruction of message.instructions) {
    const program = keys[instruction.programIdIndex];
    if (program === undefined) return undefined;
    tallyInstruction(tally, (key) => bytesEqual(program, key), instruction.data);
  }

  const writable: string[] = [];
  const writableSigners = numSigners - readonlySigners;
  const writableUnsignedEnd = keyCount - readonlyUnsigned;
  for (let k = 0; k < keyCount; k++) {
    if (k < writableSigners || (k >= numSigners && k < writableUnsignedEnd)) writable.push(base58OfKey(keys[k], 0));
  }
  return { ...finishTally(tally), writable, signatures: entry.transaction!.signatures.length };
}

/**
 * Lamports tipped to Jito's tip accounts, as `tipOfWire` counts them (block-tips.ts): top-level System
 * transfers whose destination is a tip account named as a static key. The message is already checked.
 */
function tipOfMessage(message: Message): bigint {
  let tip = 0n;
  const keys = message.accountKeys;
  for (const { programIdIndex, accounts, data } of message.instructions) {
    if (data.length !== TRANSFER_BYTES || accounts.length < 2 || data[0] !== 2 || data[1] || data[2] || data[3])
      continue;
    if (!keys[programIdIndex]!.every((byte) => byte === 0)) continue; // the System program: 32 zero bytes
    const destination = keys[accounts[1]!];
    if (destination !== undefined && JITO_TIP_ACCOUNT_KEYS.some((key) => bytesEqual(destination, key)))
      tip += Buffer.from(data.buffer, data.byteOffset + 4, 8).readBigUInt64LE(0);
  }
  return tip;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
