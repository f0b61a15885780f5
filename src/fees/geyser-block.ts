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
import { isSystemProgramKey, transferDestinationPosition, transferLamports } from "../solana/jito-tips.ts";
import { KEY_BYTES, SIGNATURE_BYTES } from "../solana/wire-bytes.ts";
import { finishTally, newInstructionTally, pricedTransaction, tallyInstruction } from "./block-transactions.ts";
import type { BlockPrices, PricedTransaction, ScannedTransaction } from "./block-transactions.ts";

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
 * transfers (src/solana/jito-tips.ts) whose destination is a tip account named as a static key. The message is already checked.
 */
function tipOfMessage(message: Message): bigint {
  let tip = 0n;
  const keys = message.accountKeys;
  for (const { programIdIndex, accounts, data } of message.instructions) {
    const position = transferDestinationPosition(data, 0, data.length, accounts.length);
    if (position < 0 || !isSystemProgramKey(keys[programIdIndex]!, 0)) continue;
    const destination = keys[accounts[position]!];
    if (destination !== undefined && JITO_TIP_ACCOUNT_KEYS.some((key) => bytesEqual(destination, key)))
      tip += transferLamports(data, 0);
  }
  return tip;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
