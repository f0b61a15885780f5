/**
 * What the fee market takes from a block: for every non-vote transaction, its compute-unit price and
 * the accounts it write-locks. A mainnet block carries ~1,500 transactions every 400 ms, and fully
 * decoding each one with kit (every address to base58) costs ~300 us: more than a core at the chain's pace.
 * So this scans the wire bytes for just those facts: it reads the header, compares program keys as
 * bytes, and turns only the write-locked keys into base58. Block bytes come from a node, not a client,
 * but are still untrusted: every read is bounds-checked, and a transaction that does not scan is
 * counted and skipped rather than failing the block.
 */
import { getBase58Encoder } from "@solana/kit";
import { base58OfKey } from "../solana/base58-key.ts";
import { MAX_COMPUTE_UNITS, readComputeUnitPrice } from "../solana/compute-budget.ts";
import { COMPUTE_BUDGET_PROGRAM, VOTE_PROGRAM } from "../solana/program-ids.ts";
import { KEY_BYTES, keyEqualsAt, SIGNATURE_BYTES } from "../solana/wire-bytes.ts";
import { tipOfWire } from "./block-tips.ts";
import { readLoadedAccountsLimit } from "../solana/compute-budget.ts";
import { COST_MODEL_BUILTINS, defaultUnitLimit, transactionCost } from "./transaction-cost.ts";

// Vote transactions are consensus traffic, not fee-market bids.
const VOTE_KEY = Uint8Array.from(getBase58Encoder().encode(VOTE_PROGRAM));
const COMPUTE_BUDGET_KEY = Uint8Array.from(getBase58Encoder().encode(COMPUTE_BUDGET_PROGRAM));
const BUILTIN_KEYS = [...COST_MODEL_BUILTINS].map((program) => Uint8Array.from(getBase58Encoder().encode(program)));

/** One non-vote transaction as the fee market sees it. */
export interface PricedTransaction {
  /** Compute-unit price in micro-lamports (0 when it sets none). */
  readonly price: bigint;
  /** The accounts it write-locks, static ones first, then those loaded from lookup tables. No duplicates. */
  readonly writable: readonly string[];
  /** Its block cost in CU as agave's cost model counts it (transaction-cost.ts); absent when not read. */
  readonly cost?: number;
  /** The compute-unit limit it requested (or the default for its instructions); absent when not read. */
  readonly unitLimit?: number;
  /** How many signatures it carries; absent when not read. */
  readonly signatures?: number;
  /** Its first signature's bytes (a view into the block's bytes: not kept beyond the block's processing). */
  readonly signature?: Uint8Array;
  /** Lamports it transfers to Jito's tip accounts (block-tips.ts); absent when none. */
  readonly tip?: bigint;
}

/** The fee-relevant content of one block. */
export interface BlockPrices {
  /** Its non-vote transactions, in block order. */
  readonly transactions: readonly PricedTransaction[];
  /** How many vote transactions were left out. */
  readonly votes: number;
  /** How many transactions could not be read (malformed bytes or an unknown version) and were left out. */
  readonly unreadable: number;
}

/** The parts of one `getBlock` transaction entry (encoding base64) this module reads. */
export interface BlockTransactionEntry {
  readonly transaction: unknown;
  readonly meta?: { readonly loadedAddresses?: { readonly writable?: readonly unknown[] } | null } | null;
}

/**
 * Extracts prices and write-locked accounts from a `getBlock` result fetched with `encoding: "base64"`
 * and `transactionDetails: "full"`. Write locks loaded from lookup tables come from
 * `meta.loadedAddresses.writable`, which the node has already resolved.
 * @throws TypeError when the result is not a block with a transactions array.
 */
export function pricesOfBlock(block: { readonly transactions?: unknown }): BlockPrices {
  if (!Array.isArray(block?.transactions))
    throw new TypeError("block has no transactions array (was it fetched with transactionDetails: full?)");
  const transactions: PricedTransaction[] = [];
  let votes = 0;
  let unreadable = 0;
  for (const entry of block.transactions as BlockTransactionEntry[]) {
    const wire = wireOf(entry?.transaction);
    const scanned = wire === undefined ? undefined : scanTransaction(wire);
    if (scanned === undefined) {
      unreadable++;
      continue;
    }
    if (scanned.isVote) {
      votes++;
      continue;
    }
    const loaded = entry.meta?.loadedAddresses?.writable;
    let writable = scanned.writable;
    if (Array.isArray(loaded) && loaded.length > 0) {
      const seen = new Set(writable);
      for (const address of loaded) if (typeof address === "string" && !seen.has(address)) seen.add(address);
      writable = [...seen];
    }
    transactions.push(
      pricedTransaction(
        scanned,
        writable,
        scanned.signatures > 0 ? wire!.subarray(1, 1 + SIGNATURE_BYTES) : undefined,
        tipOfWire(wire!),
      ),
    );
  }
  return { transactions, votes, unreadable };
}

function wireOf(transaction: unknown): Uint8Array | undefined {
  // base64 encoding: ["<base64>", "base64"]
  if (!Array.isArray(transaction) || typeof transaction[0] !== "string" || transaction[1] !== "base64")
    return undefined;
  return Buffer.from(transaction[0], "base64");
}

/** What {@link scanTransaction} reads from wire bytes. */
export interface ScannedTransaction {
  readonly price: bigint;
  readonly isVote: boolean;
  /** Static write-locked accounts (writable signers, then writable non-signers). */
  readonly writable: string[];
  readonly signatures: number;
  /** The requested compute-unit limit, or agave's default for its instructions (capped at 1,400,000). */
  readonly unitLimit: number;
  readonly instructionDataBytes: number;
  /** The requested loaded-accounts data size, when it sets one. */
  readonly loadedAccountsBytes: number | undefined;
}

/**
 * Reads price, vote flag and static write locks from wire bytes (legacy or v0), or undefined when the
 * bytes are truncated or inconsistent. The last SetComputeUnitPrice wins, as in `computeBudgetOf`.
 */
export function scanTransaction(wire: Uint8Array): ScannedTransaction | undefined {
  const reader = { offset: 0 };
  const signatures = readShortVec(wire, reader);
  if (signatures === undefined) return undefined;
  reader.offset += signatures * SIGNATURE_BYTES;
  const prefix = wire[reader.offset];
  if (prefix === undefined) return undefined;
  if (prefix & 0x80) {
    if ((prefix & 0x7f) !== 0) return undefined; // only v0 exists
    reader.offset++;
  }
  if (reader.offset + 3 > wire.length) return undefined;
  const numSigners = wire[reader.offset];
  const readonlySigners = wire[reader.offset + 1];
  const readonlyUnsigned = wire[reader.offset + 2];
  reader.offset += 3;
  const keyCount = readShortVec(wire, reader);
  if (keyCount === undefined || numSigners > keyCount || readonlySigners >= numSigners) return undefined;
  if (readonlyUnsigned > keyCount - numSigners) return undefined;
  const keysAt = reader.offset;
  reader.offset += keyCount * KEY_BYTES + KEY_BYTES; // keys, then the recent blockhash
  if (reader.offset > wire.length) return undefined;

  const instructionCount = readShortVec(wire, reader);
  if (instructionCount === undefined) return undefined;
  const tally = newInstructionTally();
  for (let i = 0; i < instructionCount; i++) {
    const program = wire[reader.offset];
    if (program === undefined || program >= keyCount) return undefined;
    reader.offset++;
    const accounts = readShortVec(wire, reader);
    if (accounts === undefined) return undefined;
    reader.offset += accounts;
    const dataLength = readShortVec(wire, reader);
    if (dataLength === undefined || reader.offset + dataLength > wire.length) return undefined;
    const keyAt = keysAt + program * KEY_BYTES;
    tallyInstruction(
      tally,
      (key) => keyEqualsAt(wire, keyAt, key),
      wire.subarray(reader.offset, reader.offset + dataLength),
    );
    reader.offset += dataLength;
  }

  const writable: string[] = [];
  const writableSigners = numSigners - readonlySigners;
  const writableUnsignedEnd = keyCount - readonlyUnsigned;
  for (let k = 0; k < keyCount; k++) {
    if (k < writableSigners || (k >= numSigners && k < writableUnsignedEnd)) {
      // Not kit's codec (~3x slower) nor bs58 (~1 KB of rope per kept string): see base58-key.ts.
      writable.push(base58OfKey(wire, keysAt + k * KEY_BYTES));
    }
  }
  return { ...finishTally(tally), writable, signatures };
}

/** What a transaction's instructions say to the fee market, read one instruction at a time. */
export interface InstructionTally {
  price: bigint;
  isVote: boolean;
  requestedLimit: number | undefined;
  builtin: number;
  other: number;
  instructionDataBytes: number;
  loadedAccountsBytes: number | undefined;
}

/** An empty tally. */
export function newInstructionTally(): InstructionTally {
  return {
    price: 0n,
    isVote: false,
    requestedLimit: undefined,
    builtin: 0,
    other: 0,
    instructionDataBytes: 0,
    loadedAccountsBytes: undefined,
  };
}

/**
 * Adds one instruction: `isProgram(key)` says whether its program is `key` (32 bytes), `data` is its data.
 * The last SetComputeUnitPrice wins, as in `computeBudgetOf`.
 */
export function tallyInstruction(
  tally: InstructionTally,
  isProgram: (key: Uint8Array) => boolean,
  data: Uint8Array,
): void {
  tally.instructionDataBytes += data.length;
  if (BUILTIN_KEYS.some(isProgram)) tally.builtin++;
  else tally.other++;
  if (isProgram(COMPUTE_BUDGET_KEY)) {
    tally.price = readComputeUnitPrice(data) ?? tally.price;
    if (data[0] === 2 && data.length === 5)
      tally.requestedLimit = (data[1] | (data[2] << 8) | (data[3] << 16)) + data[4] * 2 ** 24;
    tally.loadedAccountsBytes = readLoadedAccountsLimit(data) ?? tally.loadedAccountsBytes;
  } else if (isProgram(VOTE_KEY)) {
    tally.isVote = true;
  }
}

/** The scanned facts of a finished tally: the limit is agave's default for its instructions when it sets none. */
export function finishTally(
  tally: InstructionTally,
): Pick<ScannedTransaction, "price" | "isVote" | "unitLimit" | "instructionDataBytes" | "loadedAccountsBytes"> {
  const { price, isVote, requestedLimit, builtin, other, instructionDataBytes, loadedAccountsBytes } = tally;
  const unitLimit = Math.min(requestedLimit ?? defaultUnitLimit(builtin, other), MAX_COMPUTE_UNITS);
  return { price, isVote, unitLimit, instructionDataBytes, loadedAccountsBytes };
}

/**
 * The record the fee market keeps of one non-vote transaction, from its scanned facts, its write locks
 * (static, then loaded from lookup tables, without duplicates) and its first signature's bytes.
 */
export function pricedTransaction(
  scanned: ScannedTransaction,
  writable: readonly string[],
  signature: Uint8Array | undefined,
  tip = 0n,
): PricedTransaction {
  const cost = transactionCost({
    signatures: scanned.signatures,
    writableAccounts: writable.length,
    instructionDataBytes: scanned.instructionDataBytes,
    unitLimit: scanned.unitLimit,
    loadedAccountsBytes: scanned.loadedAccountsBytes,
  });
  return {
    ...(tip > 0n ? { tip } : {}),
    price: scanned.price,
    writable,
    cost,
    unitLimit: scanned.unitLimit,
    signatures: scanned.signatures,
    signature,
  };
}

function readShortVec(bytes: Uint8Array, reader: { offset: number }): number | undefined {
  let value = 0;
  for (let i = 0; i < 3; i++) {
    const byte = bytes[reader.offset + i];
    if (byte === undefined) return undefined;
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) {
      reader.offset += i + 1;
      return value;
    }
  }
  return undefined;
}
