/**
 * The priority fee a client asks for (a named level or an exact compute-unit price), checked, and
 * turned into a compute-unit price with the fee market's help.
 */
import { SolgateError } from "../errors.ts";
import { PRIORITY_LEVELS } from "../fees/fee-estimate.ts";
import type { PriorityLevelName } from "../fees/fee-estimate.ts";
import type { WaitingReason } from "./transaction-status.ts";

/** A checked priority-fee request. */
export type PriorityFeeChoice =
  | { readonly kind: "level"; readonly level: PriorityLevelName }
  | { readonly kind: "microLamports"; readonly microLamports: bigint };

/** The default: the `auto` level. */
export const AUTO_PRIORITY_FEE: PriorityFeeChoice = { kind: "level", level: "auto" };

/** The largest compute-unit price accepted (u64), in micro-lamports. */
const MAX_U64 = (1n << 64n) - 1n;

/** What the fee market offers this module (the fee engine's `FeeMarket` satisfies it). */
export interface PriorityFeePricer {
  /** The compute-unit price of `level` for a transaction write-locking `writable`; undefined without market data. */
  priceFor(level: PriorityLevelName, writable: string[]): bigint | undefined;
  /** Watches a send Solgate made, so that its outcome corrects the landing odds (fee-odds.ts). */
  trackSend?(wire: Uint8Array): void;
  /** Why a tracked send still waits, when blocks are too full for its fee (fee-odds.ts). */
  waiting?(wire: Uint8Array): WaitingReason | undefined;
}

/**
 * Checks a priority-fee request as a handler hands it over: a level name (`"auto"`, `"low"`, ...; empty
 * or undefined means auto) or a micro-lamport price, not both.
 * @throws SolgateError INVALID_PARAMETER (field `priorityFee`) for an unknown level or an out-of-range price.
 */
export function parsePriorityFee(input: { level?: string; microLamports?: bigint } | undefined): PriorityFeeChoice {
  if (input === undefined) return AUTO_PRIORITY_FEE;
  const { level, microLamports } = input;
  if (level !== undefined && microLamports !== undefined) {
    throw new SolgateError("INVALID_PARAMETER", "priorityFee takes a level or microLamports, not both", {
      field: "priorityFee",
    });
  }
  if (microLamports !== undefined) {
    if (typeof microLamports !== "bigint" || microLamports < 0n || microLamports > MAX_U64) {
      throw new SolgateError("INVALID_PARAMETER", "priorityFee.microLamports must be a u64", { field: "priorityFee" });
    }
    return { kind: "microLamports", microLamports };
  }
  if (level === undefined || level === "") return AUTO_PRIORITY_FEE;
  if (!(PRIORITY_LEVELS as readonly string[]).includes(level)) {
    throw new SolgateError(
      "INVALID_PARAMETER",
      `unknown priority level ${JSON.stringify(level.slice(0, 40))}; use one of ${PRIORITY_LEVELS.join(", ")} or microLamports`,
      { field: "priorityFee", allowed: [...PRIORITY_LEVELS] },
    );
  }
  return { kind: "level", level: level as PriorityLevelName };
}

/**
 * The compute-unit price a choice stands for: the exact price, or the market's price of the level for
 * these write-locked accounts (undefined when there is no market yet).
 */
export function priceOfChoice(
  choice: PriorityFeeChoice,
  pricer: PriorityFeePricer | undefined,
  writable: string[],
): bigint | undefined {
  if (choice.kind === "microLamports") return choice.microLamports;
  return pricer?.priceFor(choice.level, writable);
}
