/**
 * A confirmed block as the collection feed reads it: for each transaction that succeeded, its account keys
 * (static, then those loaded from lookup tables, as the node resolved them), its top-level instructions
 * with the inner instructions each one made, and its token balances before and after. Failed transactions
 * changed nothing on chain and are left out.
 *
 * The block is a `getBlock` answer (or a Geyser block, {@link feedBlockOfStream}) fetched as the fee market fetches it (encoding base64, transaction details
 * full), so one read serves both. A transaction is only decoded when its wire bytes name a program the feed
 * parses or its token balances move a single token; the rest of a mainnet block is skipped without decoding.
 * Block bytes are untrusted: a transaction that does not decode is skipped, never the block.
 */
import { getBase58Decoder, getBase58Encoder } from "@solana/kit";
import type { SubscribeUpdateBlock, SubscribeUpdateTransactionInfo } from "../../../gen/geyser/geyser_pb.js";
import type { TokenBalance } from "../../../gen/geyser/solana-storage_pb.js";
import { decodeWireTransaction } from "../../solana/wire-transaction.ts";
import { BUBBLEGUM_PROGRAM, TOKEN_METADATA_PROGRAM } from "./program-keys.ts";

/** One instruction: its program and accounts as indexes into the transaction's keys. */
export interface FeedInstruction {
  readonly programIndex: number;
  readonly accounts: readonly number[];
  readonly data: Uint8Array;
}

/** One token balance of a transaction's meta (pre or post). */
export interface FeedTokenBalance {
  readonly accountIndex: number;
  readonly mint: string;
  readonly owner: string;
  /** Raw amount, as a decimal string. */
  readonly amount: string;
}

/** One successful transaction. */
export interface FeedTransaction {
  /** Its first signature (base58). */
  readonly signature: string;
  /** Static keys, then loaded writable, then loaded readonly. */
  readonly keys: readonly string[];
  readonly instructions: readonly FeedInstruction[];
  /** The inner instructions made by top-level instruction i, in order. */
  readonly inner: ReadonlyMap<number, readonly FeedInstruction[]>;
  readonly preTokenBalances: readonly FeedTokenBalance[];
  readonly postTokenBalances: readonly FeedTokenBalance[];
}

/** A block's slot, time and successful transactions. */
export interface FeedBlock {
  readonly slot: bigint;
  /** Unix seconds, when the node knows it. */
  readonly blockTime: number | undefined;
  readonly transactions: readonly FeedTransaction[];
}

const PROGRAM_KEYS = [TOKEN_METADATA_PROGRAM, BUBBLEGUM_PROGRAM].map((p) => Buffer.from(getBase58Encoder().encode(p)));
const base58Bytes = getBase58Encoder();
const base58 = getBase58Decoder();

interface RawEntry {
  transaction?: unknown;
  meta?: {
    err?: unknown;
    loadedAddresses?: { writable?: readonly unknown[]; readonly?: readonly unknown[] } | null;
    innerInstructions?: readonly { index: unknown; instructions: readonly unknown[] }[] | null;
    preTokenBalances?: readonly unknown[] | null;
    postTokenBalances?: readonly unknown[] | null;
  } | null;
}

/** Reads a `getBlock` answer (base64, full) into a {@link FeedBlock}. */
export function feedBlockOf(slot: bigint, block: { transactions?: unknown; blockTime?: unknown }): FeedBlock {
  const transactions: FeedTransaction[] = [];
  const entries = Array.isArray(block?.transactions) ? (block.transactions as RawEntry[]) : [];
  for (const entry of entries) {
    const read = readEntry(entry);
    if (read !== undefined) transactions.push(read);
  }
  const time = block?.blockTime;
  return {
    slot,
    blockTime: typeof time === "number" || typeof time === "bigint" ? Number(time) : undefined,
    transactions,
  };
}

function readEntry(entry: RawEntry): FeedTransaction | undefined {
  const meta = entry?.meta;
  if (meta == null || meta.err != null) return undefined;
  const raw = entry.transaction;
  if (!Array.isArray(raw) || typeof raw[0] !== "string" || raw[1] !== "base64") return undefined;
  const pre = tokenBalancesOf(meta.preTokenBalances);
  const post = tokenBalancesOf(meta.postTokenBalances);
  const wire = Buffer.from(raw[0], "base64");
  // Only what can change a collection is decoded: a parsed program named, or a single token moving.
  const namesProgram = PROGRAM_KEYS.some((key) => wire.indexOf(key) >= 0);
  const movesSingleToken = post.some((b) => b.amount === "1") || pre.some((b) => b.amount === "1");
  if (!namesProgram && !movesSingleToken) return undefined;
  try {
    const { message, signature } = decodeWireTransaction(wire);
    const keys: string[] = [...message.staticAccounts];
    for (const list of [meta.loadedAddresses?.writable, meta.loadedAddresses?.readonly])
      for (const key of list ?? []) if (typeof key === "string") keys.push(key);
    const instructions = message.instructions.map((ix) => ({
      programIndex: ix.programAddressIndex,
      accounts: ix.accountIndices ?? [],
      data: Uint8Array.from(ix.data ?? []),
    }));
    const inner = new Map<number, FeedInstruction[]>();
    for (const group of meta.innerInstructions ?? []) {
      const list: FeedInstruction[] = [];
      for (const ix of group.instructions) {
        const read = innerInstructionOf(ix);
        if (read !== undefined) list.push(read);
      }
      inner.set(Number(group.index), list);
    }
    return { signature, keys, instructions, inner, preTokenBalances: pre, postTokenBalances: post };
  } catch {
    return undefined;
  }
}

function innerInstructionOf(value: unknown): FeedInstruction | undefined {
  const ix = value as { programIdIndex?: unknown; accounts?: unknown; data?: unknown };
  if (typeof ix?.data !== "string" || !Array.isArray(ix.accounts)) return undefined;
  return {
    programIndex: Number(ix.programIdIndex),
    accounts: ix.accounts.map(Number),
    data: Uint8Array.from(base58Bytes.encode(ix.data)),
  };
}

function tokenBalancesOf(list: readonly unknown[] | null | undefined): FeedTokenBalance[] {
  const balances: FeedTokenBalance[] = [];
  for (const value of list ?? []) {
    const b = value as {
      accountIndex?: unknown;
      mint?: unknown;
      owner?: unknown;
      uiTokenAmount?: { amount?: unknown };
    };
    if (typeof b?.mint !== "string" || typeof b.uiTokenAmount?.amount !== "string") continue;
    balances.push({
      accountIndex: Number(b.accountIndex),
      mint: b.mint,
      owner: typeof b.owner === "string" ? b.owner : "",
      amount: b.uiTokenAmount.amount,
    });
  }
  return balances;
}

/**
 * Reads a Geyser block (`SubscribeUpdateBlock` with its transactions) into a {@link FeedBlock}: the stream
 * hands the message already split into fields (keys as bytes, instructions with their program index, the
 * node's resolved lookup-table keys), so only what names a parsed program or moves a single token is kept.
 */
export function feedBlockOfStream(block: SubscribeUpdateBlock): FeedBlock {
  const transactions: FeedTransaction[] = [];
  for (const entry of block.transactions) {
    const read = readStreamEntry(entry);
    if (read !== undefined) transactions.push(read);
  }
  const time = block.blockTime?.timestamp;
  return { slot: block.slot, blockTime: time === undefined ? undefined : Number(time), transactions };
}

function readStreamEntry(entry: SubscribeUpdateTransactionInfo): FeedTransaction | undefined {
  const meta = entry.meta;
  const message = entry.transaction?.message;
  if (meta === undefined || meta.err !== undefined || message === undefined || entry.isVote) return undefined;
  const pre = streamTokenBalancesOf(meta.preTokenBalances);
  const post = streamTokenBalancesOf(meta.postTokenBalances);
  const keyBytes = [...message.accountKeys, ...meta.loadedWritableAddresses, ...meta.loadedReadonlyAddresses];
  if (keyBytes.some((k) => k.length !== 32) || entry.signature.length !== 64) return undefined;
  const namesProgram = keyBytes.some((k) => PROGRAM_KEYS.some((p) => p.equals(k)));
  const movesSingleToken = post.some((b) => b.amount === "1") || pre.some((b) => b.amount === "1");
  if (!namesProgram && !movesSingleToken) return undefined;
  const instructionOf = (ix: { programIdIndex: number; accounts: Uint8Array; data: Uint8Array }) => ({
    programIndex: ix.programIdIndex,
    accounts: [...ix.accounts],
    data: ix.data,
  });
  const inner = new Map<number, FeedInstruction[]>();
  for (const group of meta.innerInstructions) inner.set(group.index, group.instructions.map(instructionOf));
  return {
    signature: base58.decode(entry.signature),
    keys: keyBytes.map((k) => base58.decode(k)),
    instructions: message.instructions.map(instructionOf),
    inner,
    preTokenBalances: pre,
    postTokenBalances: post,
  };
}

function streamTokenBalancesOf(list: readonly TokenBalance[]): FeedTokenBalance[] {
  return list.flatMap((b) =>
    b.uiTokenAmount === undefined
      ? []
      : [{ accountIndex: b.accountIndex, mint: b.mint, owner: b.owner, amount: b.uiTokenAmount.amount }],
  );
}
