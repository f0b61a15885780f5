/**
 * A landed ladder's overpay: the fee it paid against the cheapest fee that landed in the same block for the same
 * write-locked accounts. "Same accounts": any transaction of the block that write-locks one of the rung's write-locked
 * accounts other than its fee payer (the fee payer is the client's own; the accounts it competes for are the
 * others). A rung that shares no account with anyone in its block is compared with itself (ratio 1). The
 * cheapest fee is the rung's own fee at that transaction's price: what the ladder would have paid had it bid that.
 */
import type { GetBlockApi, Rpc } from "@solana/kit";
import { pricesOfBlock } from "../../fees/block-transactions.ts";
import type { Overpay } from "./ladder-record.ts";

/** Reads the overpay of a rung that landed in `slot` paying `price` (its fee `fee`, `limit` CU, base fee `baseFee`). */
export async function readOverpay(
  rpc: Rpc<GetBlockApi>,
  landed: { slot: bigint; price: bigint; fee: bigint; baseFee: bigint; unitLimit: number; writable: readonly string[] },
): Promise<Overpay | undefined> {
  const block = await rpc
    .getBlock(landed.slot, {
      commitment: "confirmed",
      encoding: "base64",
      transactionDetails: "full",
      maxSupportedTransactionVersion: 0,
      rewards: false,
    })
    .send();
  if (block === null) return undefined;
  const contested = new Set(landed.writable.slice(1));
  let cheapest = landed.price;
  for (const tx of pricesOfBlock(block as { transactions?: unknown }).transactions) {
    if (tx.price < cheapest && tx.writable.some((address) => contested.has(address))) cheapest = tx.price;
  }
  // The fee at a price, as the runtime charges it: the base fee plus ceil(price * limit / 1e6).
  const cheapestFee = landed.baseFee + (cheapest * BigInt(landed.unitLimit) + 999_999n) / 1_000_000n;
  return {
    cheapestPrice: cheapest,
    cheapestFee,
    ratio: cheapestFee === 0n ? 1 : Number(landed.fee) / Number(cheapestFee),
  };
}
