/**
 * What the Geyser stream carries, before filtering: the plugin's `Message` (slot status, account
 * write, transaction, block, block meta), built from each produced block. The protobuf forms are
 * built on first use and shared by every client.
 */
import { timestampFromMs, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { SlotStatus, SubscribeUpdateBlockMeta, SubscribeUpdateTransactionInfo } from "../../gen/geyser_pb.js";
import type { Block, TransactionRecord } from "../chain/block-store.ts";
import { blockMeta, isVoteTransaction, transactionInfo, type AccountWrite } from "./convert.ts";

export interface SlotEvent {
  readonly kind: "slot";
  readonly slot: bigint;
  readonly parent: bigint | undefined;
  readonly status: SlotStatus;
  readonly createdAt: Timestamp;
}

export interface AccountEvent {
  readonly kind: "account";
  readonly write: AccountWrite;
  readonly createdAt: Timestamp;
}

export interface TransactionEvent {
  readonly kind: "transaction";
  readonly slot: bigint;
  readonly record: TransactionRecord;
  readonly isVote: boolean;
  readonly failed: boolean;
  /** Every account the transaction names (lookup tables resolved). */
  readonly keys: ReadonlySet<string>;
  info(): SubscribeUpdateTransactionInfo;
  /** Owners in its pre or post token balances (`token_accounts: ALL`). */
  tokenOwnersAll(): ReadonlySet<string>;
  /** Owners whose token balance changed or whose token account closed (`BALANCE_CHANGED`). */
  tokenOwnersChanged(): ReadonlySet<string>;
  readonly createdAt: Timestamp;
}

export interface BlockEvent {
  readonly kind: "block";
  readonly block: Block;
  readonly transactions: readonly TransactionEvent[];
  readonly accounts: readonly AccountEvent[];
  /** Accounts the block wrote (its `updated_account_count`), whether or not their state was read. */
  readonly writtenCount: number;
  meta(): SubscribeUpdateBlockMeta;
  readonly createdAt: Timestamp;
}

export interface BlockMetaEvent {
  readonly kind: "blockMeta";
  readonly of: BlockEvent;
  readonly createdAt: Timestamp;
}

export type GeyserEvent = SlotEvent | AccountEvent | TransactionEvent | BlockEvent | BlockMetaEvent;

function once<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= build();
    return value;
  };
}

export function slotEvent(slot: bigint, parent: bigint | undefined, status: SlotStatus): SlotEvent {
  return { kind: "slot", slot, parent, status, createdAt: timestampFromMs(Date.now()) };
}

export function transactionEvent(record: TransactionRecord, createdAt: Timestamp): TransactionEvent {
  const isVote = isVoteTransaction(record);
  const { outcome } = record;
  const keySet = once(() => new Set(record.keys.keys));
  return {
    kind: "transaction",
    slot: record.slot,
    record,
    isVote,
    failed: outcome.err !== null,
    get keys() {
      return keySet();
    },
    info: once(() => transactionInfo(record, isVote)),
    tokenOwnersAll: once(
      () => new Set([...outcome.preTokenBalances, ...outcome.postTokenBalances].map((b) => b.owner).filter(Boolean)),
    ),
    tokenOwnersChanged: once(() => {
      const pre = new Map(outcome.preTokenBalances.filter((b) => b.owner).map((b) => [b.accountIndex, b]));
      const changed = new Set<string>();
      const seen = new Set<number>();
      for (const post of outcome.postTokenBalances) {
        if (!post.owner) continue;
        seen.add(post.accountIndex);
        if (pre.get(post.accountIndex)?.uiTokenAmount.amount !== post.uiTokenAmount.amount) changed.add(post.owner);
      }
      for (const [index, balance] of pre) if (!seen.has(index)) changed.add(balance.owner);
      return changed;
    }),
    createdAt,
  };
}

/** The events of one block: its account writes, its transactions, the block and its meta. */
export function blockEvents(block: Block, writes: readonly AccountWrite[], writtenCount: number): BlockEvent {
  const createdAt = timestampFromMs(Date.now());
  const transactions = block.transactions.map((record) => transactionEvent(record, createdAt));
  const accounts = writes.map((write): AccountEvent => ({ kind: "account", write, createdAt }));
  return {
    kind: "block",
    block,
    transactions,
    accounts,
    writtenCount,
    meta: once(() => blockMeta(block)),
    createdAt,
  };
}
