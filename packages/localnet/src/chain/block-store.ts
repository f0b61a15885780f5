/**
 * Recent blocks, each with its transactions and what getBlock, getTransaction and
 * getRecentPrioritizationFees need; the oldest are dropped beyond `retention` blocks.
 */
import type { DecodedTransaction } from "../wire/decode-transaction.ts";
import type { AccountKeys } from "../wire/account-keys.ts";
import type { ExecutionOutcome } from "./executor.ts";

/** A transaction as recorded in its block. */
export interface TransactionRecord {
  signature: string;
  slot: bigint;
  /** Position in the block. */
  index: number;
  tx: DecodedTransaction;
  keys: AccountKeys;
  outcome: ExecutionOutcome;
  /** Compute unit price in micro-lamports (0 when not set). */
  unitPrice: bigint;
}

/** One produced block. */
export interface Block {
  slot: bigint;
  parentSlot: bigint;
  blockHeight: bigint;
  blockhash: string;
  previousBlockhash: string;
  /** Unix seconds. */
  blockTime: number;
  transactions: TransactionRecord[];
  /** Transactions in this block and all before it (getEpochInfo, getTransactionCount). */
  transactionCount: bigint;
  /** Lowest compute unit price among the block's transactions (null for an empty block). */
  minUnitPrice: bigint | null;
  /**
   * Per write-locked account, the lowest price among transactions that write-locked it, kept only
   * where it is above the block's minimum (agave's pruning; prioritization-fees.ts).
   */
  accountMinUnitPrice: Map<string, bigint>;
  /** How the block was packed (produced blocks only; recorded blocks have none). */
  packing?: BlockPacking;
}

/** The cost tracker's figures at the end of a produced block (cost-model.ts units). */
export interface BlockPacking {
  /** Cost of the committed transactions, against the block limit. */
  cost: bigint;
  /** Cost per write-locked account, against the account limit. */
  accountCost: Map<string, bigint>;
  /** Transactions left in the buffer because they did not fit (they wait for the next block). */
  waiting: number;
  /** Transactions dropped because their blockhash was more than 150 blocks old. */
  expired: number;
}

/** Blocks by slot, bounded. */
export interface BlockStore {
  add(block: Block): void;
  get(slot: bigint): Block | undefined;
  /** Oldest slot still held. */
  firstAvailable(): bigint;
  /** Slots held in `[from, to]`, ascending. */
  slotsBetween(from: bigint, to: bigint): bigint[];
  readonly size: number;
}

/** Creates a store that keeps the latest `retention` blocks. */
export function createBlockStore(options: { retention: number }): BlockStore {
  const blocks = new Map<bigint, Block>();
  let first = -1n;
  let last = -1n;
  return {
    add(block) {
      blocks.set(block.slot, block);
      if (first < 0n) first = block.slot;
      last = block.slot;
      while (blocks.size > options.retention) {
        blocks.delete(first);
        first = blocks.keys().next().value!;
      }
    },
    get: (slot) => blocks.get(slot),
    firstAvailable: () => (first < 0n ? 0n : first),
    slotsBetween(from, to) {
      const out: bigint[] = [];
      const start = from > first ? from : first;
      const end = to < last ? to : last;
      for (let s = start; s <= end; s++) if (blocks.has(s)) out.push(s);
      return out;
    },
    get size() {
      return blocks.size;
    },
  };
}
