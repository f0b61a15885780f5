/**
 * What a message asks of the Compute Budget program, and the fee that follows from it.
 * Works on compiled messages so that it serves client drafts and recorded blocks alike.
 */
import { BUILTIN_PROGRAMS, COMPUTE_BUDGET_PROGRAM } from "./program-ids.ts";

/** Lamports charged per signature. */
export const LAMPORTS_PER_SIGNATURE = 5000n;
/** Compute units granted per non-builtin instruction when a transaction sets no limit. */
export const DEFAULT_INSTRUCTION_COMPUTE_UNITS = 200_000;
/** Compute units granted per builtin-program instruction when a transaction sets no limit. */
export const BUILTIN_INSTRUCTION_COMPUTE_UNITS = 3_000;
/** The most compute units one transaction may use. */
export const MAX_COMPUTE_UNITS = 1_400_000;

/** The parts of a compiled message this module reads. */
export interface InstructionView {
  readonly programAddressIndex: number;
  readonly data?: Uint8Array | ArrayLike<number>;
}

/** The compute budget a message sets or implies. */
export interface ComputeBudget {
  /** Price in micro-lamports per compute unit; 0 when the message sets none. */
  readonly unitPrice: bigint;
  /** The limit the message sets, or undefined when it relies on the default. */
  readonly requestedUnitLimit: number | undefined;
  /** The limit the runtime will charge for: the requested one, or the default for its instructions. */
  readonly unitLimit: number;
  /** Whether the message has any Compute Budget instruction. */
  readonly hasComputeBudgetInstructions: boolean;
  /** The loaded-accounts data size the message sets (SetLoadedAccountsDataSizeLimit), in bytes; undefined: none. */
  readonly requestedLoadedAccountsBytes: number | undefined;
}

function readLe(data: ArrayLike<number>, offset: number, bytes: number): bigint {
  let value = 0n;
  for (let i = bytes - 1; i >= 0; i--) value = (value << 8n) | BigInt(data[offset + i] ?? 0);
  return value;
}

/**
 * Reads the SetComputeUnitPrice / SetComputeUnitLimit / SetLoadedAccountsDataSizeLimit instructions of a message
 * (the last of each wins, as malformed or duplicate ones fail the transaction at execution anyway) and works out the
 * effective limit.
 */
export function computeBudgetOf(message: {
  readonly staticAccounts: readonly string[];
  readonly instructions: readonly InstructionView[];
}): ComputeBudget {
  let unitPrice = 0n;
  let requestedUnitLimit: number | undefined;
  let hasComputeBudgetInstructions = false;
  let requestedLoadedAccountsBytes: number | undefined;
  let defaultLimit = 0;
  for (const ix of message.instructions) {
    const program = String(message.staticAccounts[ix.programAddressIndex]);
    const data = ix.data ?? new Uint8Array();
    if (program === COMPUTE_BUDGET_PROGRAM) {
      hasComputeBudgetInstructions = true;
      if (data[0] === 2 && data.length === 5) requestedUnitLimit = Number(readLe(data, 1, 4));
      unitPrice = readComputeUnitPrice(data) ?? unitPrice;
      requestedLoadedAccountsBytes = readLoadedAccountsLimit(data) ?? requestedLoadedAccountsBytes;
      continue;
    }
    defaultLimit += BUILTIN_PROGRAMS.has(program)
      ? BUILTIN_INSTRUCTION_COMPUTE_UNITS
      : DEFAULT_INSTRUCTION_COMPUTE_UNITS;
  }
  const unitLimit = Math.min(requestedUnitLimit ?? defaultLimit, MAX_COMPUTE_UNITS);
  return { unitPrice, requestedUnitLimit, unitLimit, hasComputeBudgetInstructions, requestedLoadedAccountsBytes };
}

/** The size a Compute Budget instruction's data sets (SetLoadedAccountsDataSizeLimit: tag 4, u32 LE), or undefined. */
export function readLoadedAccountsLimit(data: ArrayLike<number>): number | undefined {
  if (data[0] !== 4 || data.length !== 5) return undefined;
  return (data[1] | (data[2] << 8) | (data[3] << 16)) + data[4] * 2 ** 24;
}

/**
 * The price a Compute Budget instruction's data sets (SetComputeUnitPrice: tag 3 then a u64 LE), or
 * undefined for any other instruction. For callers that scan raw bytes without a compiled message.
 */
export function readComputeUnitPrice(data: ArrayLike<number>): bigint | undefined {
  return data[0] === 3 && data.length === 9 ? readLe(data, 1, 8) : undefined;
}

/** The priority fee in lamports: ceil(price * limit / 1e6). */
export function priorityFeeLamports(unitPrice: bigint, unitLimit: number): bigint {
  const microLamports = unitPrice * BigInt(unitLimit);
  return (microLamports + 999_999n) / 1_000_000n;
}

/** The whole fee a transaction pays: 5,000 lamports per signature plus its priority fee. */
export function transactionFeeLamports(signatures: number, budget: ComputeBudget): bigint {
  return LAMPORTS_PER_SIGNATURE * BigInt(signatures) + priorityFeeLamports(budget.unitPrice, budget.unitLimit);
}
