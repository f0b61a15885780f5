/**
 * Producing one block: the next batch of queued transactions executed on top of the tip, each checked
 * against the blockhash window and the signature history first, then recorded with its fee price;
 * the block stored, its blockhash added to the window, and what fell out of the window forgotten.
 */
import type { LiteSvm } from "litesvm/dist/internal.js";
import type { AccountKeys } from "../wire/account-keys.ts";
import type { DecodedTransaction } from "../wire/decode-transaction.ts";
import { computeBudgetOf } from "../wire/fees.ts";
import type { BlockhashWindow } from "./blockhash-window.ts";
import type { Block, BlockStore, TransactionRecord } from "./block-store.ts";
import type { Executor } from "./executor.ts";
import type { SignatureHistory } from "./signature-history.ts";
import type { TransactionQueue } from "./transaction-queue.ts";

/** What a block is made from and written to. */
export interface BlockProducerDeps {
  readonly svm: LiteSvm;
  readonly executor: Executor;
  readonly window: BlockhashWindow;
  readonly history: SignatureHistory;
  readonly blocks: BlockStore;
  readonly queue: TransactionQueue;
  readonly maxTransactionsPerBlock: number;
  /** Moves LiteSVM's clock sysvar to `slot`. */
  setClock(slot: bigint): void;
  /** The transaction's full account list (throws when its lookup tables no longer resolve). */
  accountKeys(tx: DecodedTransaction): AccountKeys;
  /** Does the transaction use a durable nonce that holds its blockhash? */
  isNonceValid(tx: DecodedTransaction): boolean;
  /** Called with the accounts each committed transaction touched. */
  onTouched(addresses: readonly string[], keys: readonly Uint8Array[], slot: bigint): void;
}

/** Produces, stores and returns the block after `parent`. */
export function produceBlockAfter(parent: Block, deps: BlockProducerDeps): Block {
  const { svm, executor, window, history, blocks } = deps;
  const slot = parent.slot + 1n;
  const blockHeight = parent.blockHeight + 1n;
  deps.setClock(slot);
  const records: TransactionRecord[] = [];
  let minUnitPrice: bigint | null = null;
  const accountMinUnitPrice = new Map<string, bigint>();
  for (const { tx, verified } of deps.queue.take(deps.maxTransactionsPerBlock)) {
    const signature = tx.signatureStrings[0]!;
    deps.queue.settle(signature);
    if (history.has(signature)) continue;
    // The block at `slot` checks against blockhashes up to its parent's.
    if (!window.isValidAt(tx.message.recentBlockhash, blockHeight) && !deps.isNonceValid(tx)) continue;
    let keys: AccountKeys;
    try {
      keys = deps.accountKeys(tx);
    } catch {
      continue; // lookup tables changed since submission: a leader would drop it too
    }
    const outcome = executor.execute(tx, keys, !verified);
    if (!outcome.committed) continue;
    const unitPrice = computeBudgetOf(tx.message).unitPrice;
    const record: TransactionRecord = { signature, slot, index: records.length, tx, keys, outcome, unitPrice };
    records.push(record);
    history.add(signature, { slot, index: record.index, err: outcome.err });
    if (minUnitPrice === null || unitPrice < minUnitPrice) minUnitPrice = unitPrice;
    keys.keys.forEach((key, i) => {
      if (!keys.writable[i]) return;
      const current = accountMinUnitPrice.get(key);
      if (current === undefined || unitPrice < current) accountMinUnitPrice.set(key, unitPrice);
    });
    deps.onTouched(keys.keys, keys.keyBytes, slot);
  }
  svm.expireBlockhash();
  const block: Block = {
    slot,
    parentSlot: parent.slot,
    blockHeight,
    blockhash: svm.latestBlockhash(),
    previousBlockhash: parent.blockhash,
    blockTime: Math.floor(Date.now() / 1000),
    transactions: records,
    // A running total: the parent's count plus this block's.
    transactionCount: parent.transactionCount + BigInt(records.length),
    minUnitPrice,
    accountMinUnitPrice,
  };
  blocks.add(block);
  window.add(block.blockhash, blockHeight);
  window.prune(blockHeight);
  history.prune(slot);
  return block;
}
