/**
 * What agave 3.0's prioritization-fee cache keeps of a block (`runtime/src/prioritization_fee.rs`,
 * `prioritization_fee_cache.rs`), from its committed transactions:
 * - simple vote transactions do not count, nor transactions whose compute-budget instructions do not
 *   sanitize, nor those that request a compute-unit limit of 0;
 * - every other one counts, a price of 0 included (so one unpriced transaction makes the block's
 *   minimum 0);
 * - the block's minimum compute-unit price, and per write-locked account (fee payer and lookup-table
 *   writes included) the minimum price of the transactions that write-locked it;
 * - when the block is finalized, accounts whose minimum is not above the block's are pruned;
 * - a block with no counted transaction has no entry at all (getRecentPrioritizationFees skips it).
 */
import type { AccountKeys } from "../wire/account-keys.ts";
import type { DecodedTransaction } from "../wire/decode-transaction.ts";
import { computeBudgetLimits } from "./cost-model.ts";

const VOTE_PROGRAM = "Vote111111111111111111111111111111111111111";

/** agave's `is_simple_vote_transaction`: a legacy message of one Vote instruction and at most two signatures. */
export function isSimpleVoteTransaction(tx: DecodedTransaction): boolean {
  const { message } = tx;
  return (
    message.version === "legacy" &&
    tx.signatures.length < 3 &&
    message.instructions.length === 1 &&
    message.staticKeys[message.instructions[0]!.programIdIndex] === VOTE_PROGRAM
  );
}

/** A block's entry in the cache; `minUnitPrice` null when nothing counted (no entry). */
export interface BlockPrioritizationFees {
  minUnitPrice: bigint | null;
  /** Accounts whose minimum is above the block's, after agave's pruning. */
  accountMinUnitPrice: Map<string, bigint>;
}

/** The entry for a block's committed transactions. */
export function blockPrioritizationFees(
  transactions: readonly { tx: DecodedTransaction; keys: AccountKeys }[],
): BlockPrioritizationFees {
  let minUnitPrice: bigint | null = null;
  const accountMinUnitPrice = new Map<string, bigint>();
  for (const { tx, keys } of transactions) {
    if (isSimpleVoteTransaction(tx)) continue;
    const limits = computeBudgetLimits(tx.message);
    if (limits === null || limits.unitLimit === 0) continue;
    const price = limits.unitPrice;
    if (minUnitPrice === null || price < minUnitPrice) minUnitPrice = price;
    keys.keys.forEach((key, i) => {
      if (!keys.writable[i]) return;
      const current = accountMinUnitPrice.get(key);
      if (current === undefined || price < current) accountMinUnitPrice.set(key, price);
    });
  }
  for (const [key, price] of accountMinUnitPrice) {
    if (minUnitPrice === null || price <= minUnitPrice) accountMinUnitPrice.delete(key);
  }
  return { minUnitPrice, accountMinUnitPrice };
}
