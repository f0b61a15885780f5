/**
 * The real mainnet block of the fixtures, decoded here with kit and the compute-budget client alone
 * (independently of src/fees), and percentiles worked out from it in plain code: the reference the fee
 * market's answers are checked against.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { getBase64Encoder, getCompiledTransactionMessageDecoder, getTransactionDecoder } from "@solana/kit";
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  ComputeBudgetInstruction,
  getSetComputeUnitPriceInstructionDataDecoder,
  identifyComputeBudgetInstruction,
} from "@solana-program/compute-budget";

export const REAL_BLOCK_FILE = fileURLToPath(
  new URL("../fixtures/solana/blocks/get_block_base64_encoding.json", import.meta.url),
);
const result = JSON.parse(readFileSync(REAL_BLOCK_FILE, "utf8")).result;

/** The block's slot as the localnet serves it (the file has none: parentSlot + 1). */
export const REAL_BLOCK_SLOT = BigInt(result.parentSlot) + 1n;

/** One transaction as kit sees it. */
export interface ReferenceTransaction {
  wire: Uint8Array;
  isVote: boolean;
  price: bigint;
  writable: string[];
}

/** Every transaction of the block, votes included. */
export const referenceTransactions: ReferenceTransaction[] = result.transactions.map(
  (entry: { transaction: [string, string]; meta: { loadedAddresses?: { writable: string[] } } }) => {
    const wire = new Uint8Array(getBase64Encoder().encode(entry.transaction[0]));
    const tx = getTransactionDecoder().decode(wire);
    const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes) as unknown as {
      header: { numSignerAccounts: number; numReadonlySignerAccounts: number; numReadonlyNonSignerAccounts: number };
      staticAccounts: string[];
      instructions: { programAddressIndex: number; data?: Uint8Array }[];
    };
    const { numSignerAccounts: s, numReadonlySignerAccounts: rs, numReadonlyNonSignerAccounts: ru } = message.header;
    const keys = message.staticAccounts;
    let price = 0n;
    let isVote = false;
    for (const ix of message.instructions) {
      const program = keys[ix.programAddressIndex];
      if (program === "Vote111111111111111111111111111111111111111") isVote = true;
      if (
        program === COMPUTE_BUDGET_PROGRAM_ADDRESS &&
        ix.data &&
        identifyComputeBudgetInstruction(ix.data) === ComputeBudgetInstruction.SetComputeUnitPrice
      ) {
        price = BigInt(getSetComputeUnitPriceInstructionDataDecoder().decode(ix.data).microLamports);
      }
    }
    const writable = keys.filter((_, i) => i < s - rs || (i >= s && i < keys.length - ru));
    return { wire, isVote, price, writable: [...writable, ...(entry.meta.loadedAddresses?.writable ?? [])] };
  },
);

/** p-th percentile by nearest rank: the value at 1-based rank ceil(p * n / 100) of the sorted sample. */
export function nearestRankPercentile(values: readonly bigint[], p: number): bigint {
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted[Math.max(1, Math.ceil((p * sorted.length) / 100)) - 1];
}

/** low/medium/high/veryHigh of a sample. */
export function referenceLevels(values: readonly bigint[]) {
  return {
    low: nearestRankPercentile(values, 25),
    medium: nearestRankPercentile(values, 50),
    high: nearestRankPercentile(values, 75),
    veryHigh: nearestRankPercentile(values, 95),
  };
}
