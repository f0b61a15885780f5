/**
 * The numeric codes litesvm returns are mapped by position; this re-reads litesvm's own
 * declarations so a litesvm upgrade that reorders or adds variants fails here, not in production.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { expect, it } from "vitest";
import {
  INSTRUCTION_ERROR_NAMES,
  TRANSACTION_ERROR_NAMES,
  transactionErrorText,
} from "../../src/wire/transaction-error.ts";

const declarations = readFileSync(createRequire(import.meta.url).resolve("litesvm/dist/internal.d.ts"), "utf8");

function constEnum(name: string): string[] {
  const body = new RegExp(`export declare const enum ${name} \\{([^}]*)\\}`).exec(declarations)?.[1];
  if (body === undefined) throw new Error(`enum ${name} not found in litesvm's internal.d.ts`);
  const entries = [...body.matchAll(/(\w+) = (\d+)/g)].map((m) => [m[1]!, Number(m[2])] as const);
  entries.forEach(([, value], i) => expect(value).toBe(i));
  return entries.map(([key]) => key);
}

it("maps every TransactionErrorFieldless code by litesvm's declared order", () => {
  expect(TRANSACTION_ERROR_NAMES).toEqual(constEnum("TransactionErrorFieldless"));
});

it("maps every InstructionErrorFieldless code by litesvm's declared order", () => {
  expect(INSTRUCTION_ERROR_NAMES).toEqual(constEnum("InstructionErrorFieldless"));
});

it("words errors like agave's Display", () => {
  expect(transactionErrorText("BlockhashNotFound")).toBe("Blockhash not found");
  expect(transactionErrorText({ InstructionError: [0, { Custom: 1 }] })).toBe(
    "Error processing Instruction 0: custom program error: 0x1",
  );
  expect(transactionErrorText({ InstructionError: [0, "ProgramFailedToComplete"] })).toBe(
    "Error processing Instruction 0: Program failed to complete",
  );
  expect(transactionErrorText("AccountNotFound")).toBe(
    "Attempt to debit an account but found no record of a prior credit.",
  );
  expect(transactionErrorText({ InsufficientFundsForRent: { account_index: 2 } })).toBe(
    "Transaction results in an account (2) with insufficient funds for rent",
  );
});
