/**
 * Producing one block, as agave 4.4's leader packs it: the buffer is walked in priority order
 * (transaction-queue.ts); each transaction is checked against the signature history and the blockhash
 * window (150 blocks: older ones are dropped as expired), then against the block's cost limit, then
 * against each of its write-locked accounts' limits (cost_tracker.rs `try_add`), the limits in force at the
 * block's slot (cost-model.ts `limitsAtSlot`). What fits is executed
 * and, when committed, its cost is added to the block and to each write-locked account; what does not
 * fit waits for the next block. The block records the minimum compute-unit prices agave's
 * prioritization-fee cache keeps (prioritization-fees.ts); it is stored, its blockhash added to the
 * window, and what fell out of the window forgotten.
 */
import { Account } from "litesvm";
import type { LiteSvm } from "./litesvm-native.ts";
import type { AccountKeys } from "../wire/account-keys.ts";
import type { DecodedTransaction } from "../wire/decode-transaction.ts";
import { computeBudgetOf } from "../wire/fees.ts";
import { blockPrioritizationFees } from "./prioritization-fees.ts";
import { allocatedAccountsDataSize, type BlockLimits } from "./cost-model.ts";
import type { BlockhashWindow } from "./blockhash-window.ts";
import type { Block, BlockStore, TransactionRecord } from "./block-store.ts";
import type { ExecutionOutcome, Executor } from "./executor.ts";
import type { NonceUse } from "./durable-nonce.ts";
import type { SignatureHistory } from "./signature-history.ts";
import type { TransactionQueue } from "./transaction-queue.ts";
import {
  isTipAccount,
  memberErrorText,
  type BundleDisposition,
  type BundlePool,
  type PendingBundle,
} from "./bundles.ts";

/** What a block is made from and written to. */
export interface BlockProducerDeps {
  readonly svm: LiteSvm;
  readonly executor: Executor;
  readonly window: BlockhashWindow;
  readonly history: SignatureHistory;
  readonly blocks: BlockStore;
  readonly queue: TransactionQueue;
  readonly maxTransactionsPerBlock: number;
  /**
   * Compute units a block at `slot` may hold, and any one write-locked account may take in it
   * (solana-test-validator 4.4: 100,000,000 and 40,000,000, halved from the next epoch on).
   */
  limitsAt(slot: bigint): BlockLimits;
  /** Moves LiteSVM's clock sysvar to `slot`. */
  setClock(slot: bigint): void;
  /** The transaction's full account list (throws when its lookup tables no longer resolve). */
  accountKeys(tx: DecodedTransaction): AccountKeys;
  /**
   * The nonce account of a valid nonce transaction, checked against the state now (a nonce already
   * advanced in this block no longer matches: SIMD-0083), or null (BlockhashNotFound).
   */
  nonceOf(tx: DecodedTransaction): NonceUse | null;
  /** Jito bundles, packed with the transactions in one priority order (bundles.ts). */
  readonly bundles?: BundlePool;
  /** Called with the accounts each committed transaction touched. */
  onTouched(addresses: readonly string[], keys: readonly Uint8Array[], slot: bigint): void;
}

const SYSTEM_PROGRAM_KEY = new Uint8Array(32);

/** Produces, stores and returns the block after `parent`. */
export function produceBlockAfter(parent: Block, deps: BlockProducerDeps): Block {
  const { svm, executor, window, history, blocks } = deps;
  const slot = parent.slot + 1n;
  const blockHeight = parent.blockHeight + 1n;
  deps.setClock(slot);
  const records: TransactionRecord[] = [];
  const limits = deps.limitsAt(slot);
  let blockCost = 0n;
  /** Account data the block's transactions may allocate (agave's allocated_accounts_data_size). */
  let allocated = 0n;
  const accountCost = new Map<string, bigint>();
  let waiting = 0;
  let expired = 0;
  /** Records one committed transaction in the block. */
  const commit = (
    tx: DecodedTransaction,
    keys: AccountKeys,
    outcome: ExecutionOutcome,
    cost: bigint,
    writable: readonly string[],
    allocates: bigint,
  ) => {
    const signature = tx.signatureStrings[0]!;
    blockCost += cost;
    allocated += allocates;
    for (const key of writable) accountCost.set(key, (accountCost.get(key) ?? 0n) + cost);
    const unitPrice = computeBudgetOf(tx.message).unitPrice;
    const record: TransactionRecord = { signature, slot, index: records.length, tx, keys, outcome, unitPrice };
    records.push(record);
    history.add(signature, { slot, index: record.index, err: outcome.err });
    deps.onTouched(keys.keys, keys.keyBytes, slot);
  };

  /**
   * One bundle, as a unit: every member must be new and unexpired, the sum of their costs must fit the
   * block and each account, and every member must succeed; otherwise the accounts they name are put back.
   */
  const runBundle = (bundle: PendingBundle): BundleDisposition => {
    if (records.length + bundle.txs.length > deps.maxTransactionsPerBlock) return { kind: "waiting" };
    for (const [i, tx] of bundle.txs.entries()) {
      if (history.has(tx.signatureStrings[0]!))
        return { kind: "failed", reason: `transaction ${i} already processed`, failedIndex: i };
      if (!window.isValidAt(tx.message.recentBlockhash, blockHeight) && deps.nonceOf(tx) === null) {
        expired++;
        return { kind: "failed", reason: `transaction ${i} expired (blockhash not found)`, failedIndex: i };
      }
    }
    if (
      blockCost + bundle.cost > limits.block ||
      allocated + bundle.allocated > limits.dataSize ||
      [...bundle.accountCost].some(([key, cost]) => (accountCost.get(key) ?? 0n) + cost > limits.account)
    ) {
      waiting++;
      return { kind: "waiting" };
    }
    const allKeys: AccountKeys[] = [];
    for (const [i, tx] of bundle.txs.entries()) {
      try {
        allKeys.push(deps.accountKeys(tx));
      } catch {
        return { kind: "failed", reason: `transaction ${i}: address lookup tables changed`, failedIndex: i };
      }
    }
    // The checkpoint: every account any member names (a transaction can write no other).
    const saved = new Map<string, { key: Uint8Array; account: Account | null }>();
    for (const keys of allKeys) {
      keys.keys.forEach((name, j) => {
        if (!saved.has(name)) saved.set(name, { key: keys.keyBytes[j]!, account: svm.getAccount(keys.keyBytes[j]!) });
      });
    }
    const restore = () => {
      for (const { key, account } of saved.values()) {
        svm.setAccount(key, account ?? new Account(0n, new Uint8Array(0), SYSTEM_PROGRAM_KEY, false, 0n));
      }
    };
    const outcomes: ExecutionOutcome[] = [];
    for (const [i, tx] of bundle.txs.entries()) {
      // Checked again before each member: an earlier one may have advanced the same nonce (SIMD-0083).
      const recent = window.isValidAt(tx.message.recentBlockhash, blockHeight);
      const nonce = recent ? null : deps.nonceOf(tx);
      if (!recent && nonce === null) {
        restore();
        return { kind: "failed", reason: `transaction ${i} expired (blockhash not found)`, failedIndex: i };
      }
      const outcome = executor.execute(tx, allKeys[i]!, true, nonce);
      if (!outcome.committed || outcome.err !== null) {
        restore();
        return { kind: "failed", reason: memberErrorText(i, outcome.err, outcome.committed), failedIndex: i };
      }
      outcomes.push(outcome);
    }
    let landedTip = 0n;
    bundle.txs.forEach((tx, i) => {
      const keys = allKeys[i]!;
      const outcome = outcomes[i]!;
      keys.keys.forEach((name, j) => {
        if (isTipAccount(name)) landedTip += outcome.postBalances[j]! - outcome.preBalances[j]!;
      });
      const writable = keys.keys.filter((_, j) => keys.writable[j]);
      commit(tx, keys, outcome, bundle.memberCosts[i]!, writable, allocatedAccountsDataSize(tx.message));
    });
    return { kind: "landed", slot, landedTip };
  };

  const pendingBundles = deps.bundles?.ordered() ?? [];
  let nextBundle = 0;
  /** Runs the buffered bundles whose priority is at least `priority` (all of them when null). */
  const bundlesDownTo = (priority: bigint | null) => {
    while (nextBundle < pendingBundles.length) {
      const bundle = pendingBundles[nextBundle]!;
      if (priority !== null && bundle.priority < priority) return;
      nextBundle++;
      deps.bundles!.settle(bundle, runBundle(bundle));
    }
  };

  deps.queue.schedule(({ tx, verified, cost, writable, priority, allocated: allocates }) => {
    bundlesDownTo(priority);
    if (records.length >= deps.maxTransactionsPerBlock) {
      waiting++;
      return "waiting";
    }
    const signature = tx.signatureStrings[0]!;
    if (history.has(signature)) return "dropped";
    // The block at `slot` checks against blockhashes up to its parent's; older than 150 blocks: expired.
    // A nonce transaction is checked against the state now (SIMD-0083: one on a nonce advanced earlier
    // in this block no longer matches and is dropped, uncharged).
    const recent = window.isValidAt(tx.message.recentBlockhash, blockHeight);
    const nonce = recent ? null : deps.nonceOf(tx);
    if (!recent && nonce === null) {
      expired++;
      return "dropped";
    }
    // agave's try_add, with the cost priced on arrival: the block limit first, then the accounts-data growth,
    // then each write-locked account's.
    if (
      blockCost + cost > limits.block ||
      allocated + allocates > limits.dataSize ||
      writable.some((key) => (accountCost.get(key) ?? 0n) + cost > limits.account)
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
    const outcome = executor.execute(tx, keys, !verified, nonce);
    // Not committed: agave removes its reserved cost, and the transaction leaves the buffer.
    if (!outcome.committed) return "dropped";
    commit(tx, keys, outcome, cost, writable, allocates);
    return "taken";
  });
  bundlesDownTo(null);
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
