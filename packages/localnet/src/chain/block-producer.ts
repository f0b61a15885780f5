/**
 * Producing one block, as agave 3.0's leader packs it: the buffer is walked in priority order
 * (transaction-queue.ts); each transaction is checked against the signature history and the blockhash
 * window (150 blocks: older ones are dropped as expired), then against the block's cost limit, then
 * against each of its write-locked accounts' limits (cost_tracker.rs `would_fit`). What fits is executed
 * and, when committed, its cost is added to the block and to each write-locked account; what does not
 * fit waits for the next block. The block records the minimum compute-unit prices agave's
 * prioritization-fee cache keeps (prioritization-fees.ts); it is stored, its blockhash added to the
 * window, and what fell out of the window forgotten.
 */
import type { LiteSvm } from "litesvm/dist/internal.js";
import type { AccountKeys } from "../wire/account-keys.ts";
import type { DecodedTransaction } from "../wire/decode-transaction.ts";
import { computeBudgetOf } from "../wire/fees.ts";
import { blockPrioritizationFees } from "./prioritization-fees.ts";
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
  /** Compute units a block may hold (agave: 60,000,000). */
  readonly blockCostLimit: bigint;
  /** Compute units any one write-locked account may take in a block (agave with SIMD-0306: 24,000,000). */
  readonly accountCostLimit: bigint;
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
  let blockCost = 0n;
  const accountCost = new Map<string, bigint>();
  let waiting = 0;
  let expired = 0;
  deps.queue.schedule(({ tx, verified, cost, writable }) => {
    if (records.length >= deps.maxTransactionsPerBlock) {
      waiting++;
      return "waiting";
    }
    const signature = tx.signatureStrings[0]!;
    if (history.has(signature)) return "dropped";
    // The block at `slot` checks against blockhashes up to its parent's; older than 150 blocks: expired.
    if (!window.isValidAt(tx.message.recentBlockhash, blockHeight) && !deps.isNonceValid(tx)) {
      expired++;
      return "dropped";
    }
    // agave's would_fit, with the cost priced on arrival: the block limit first, then each write-locked account's.
    if (
      blockCost + cost > deps.blockCostLimit ||
      writable.some((key) => (accountCost.get(key) ?? 0n) + cost > deps.accountCostLimit)
    ) {
      waiting++;
      return "waiting";
    }
    let keys: AccountKeys;
    try {
      keys = deps.accountKeys(tx);
    } catch {
      return "dropped"; // lookup tables changed since submission: a leader would drop it too
    }
    const outcome = executor.execute(tx, keys, !verified);
    // Not committed: agave removes its reserved cost, and the transaction leaves the buffer.
    if (!outcome.committed) return "dropped";
    blockCost += cost;
    for (const key of writable) accountCost.set(key, (accountCost.get(key) ?? 0n) + cost);
    const unitPrice = computeBudgetOf(tx.message).unitPrice;
    const record: TransactionRecord = { signature, slot, index: records.length, tx, keys, outcome, unitPrice };
    records.push(record);
    history.add(signature, { slot, index: record.index, err: outcome.err });
    deps.onTouched(keys.keys, keys.keyBytes, slot);
    return "taken";
  });
  const fees = blockPrioritizationFees(records);
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
    minUnitPrice: fees.minUnitPrice,
    accountMinUnitPrice: fees.accountMinUnitPrice,
    packing: { cost: blockCost, accountCost, waiting, expired },
  };
  blocks.add(block);
  window.add(block.blockhash, blockHeight);
  window.prune(blockHeight);
  history.prune(slot);
  return block;
}
