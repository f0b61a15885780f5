/**
 * Transaction fees computed from the message, as LiteSVM charges them.
 *
 * LiteSVM has no fee accessor, so the fee a block or a simulation reports is computed here:
 * `5000 * (signatures + precompile signatures) + ceil(cu_price * cu_limit / 1e6)` where the limit
 * is the requested one or the default (3,000 CU per builtin instruction, 200,000 per other
 * instruction, at most 1,400,000). Which programs count as builtins was measured against LiteSVM
 * (the fee tests compare this computation with the balance change for each of them).
 */
import type { DecodedMessage } from "./decode-transaction.ts";

/** Lamports per signature on every current cluster. */
export const LAMPORTS_PER_SIGNATURE = 5000n;
/** Per-transaction compute unit ceiling. */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
/** Default units for an instruction of a program that is not a builtin. */
export const DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT = 200_000;
/** Default units for an instruction of a builtin program. */
export const MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT = 3_000;

export const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";
const ED25519_PROGRAM = "Ed25519SigVerify111111111111111111111111111";
const SECP256K1_PROGRAM = "KeccakSecp256k11111111111111111111111111111";

/** Programs LiteSVM treats as builtins for the default compute unit limit (measured). */
const BUILTIN_PROGRAMS = new Set([
  "11111111111111111111111111111111",
  COMPUTE_BUDGET_PROGRAM,
  ED25519_PROGRAM,
  SECP256K1_PROGRAM,
  "BPFLoader1111111111111111111111111111111111",
  "BPFLoader2111111111111111111111111111111111",
  "BPFLoaderUpgradeab1e11111111111111111111111",
  "LoaderV411111111111111111111111111111111111",
]);

/** What the compute budget instructions of a message ask for. */
export interface ComputeBudgetRequest {
  /** The effective compute unit limit (requested, or the default for the message). */
  unitLimit: number;
  /** Micro-lamports per compute unit (0 when not set). */
  unitPrice: bigint;
}

function readU32(data: Uint8Array, at: number): number {
  return (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16)) + data[at + 3]! * 0x1000000;
}

function readU64(data: Uint8Array, at: number): bigint {
  let v = 0n;
  for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(data[at + i]!);
  return v;
}

/**
 * Reads SetComputeUnitLimit (2) and SetComputeUnitPrice (3); malformed or duplicate ones are
 * ignored here because the runtime rejects such a transaction before charging anything.
 */
export function computeBudgetOf(message: DecodedMessage): ComputeBudgetRequest {
  let requestedLimit: number | undefined;
  let unitPrice = 0n;
  let builtin = 0;
  let other = 0;
  for (const ix of message.instructions) {
    const program = message.staticKeys[ix.programIdIndex]!;
    if (BUILTIN_PROGRAMS.has(program)) builtin++;
    else other++;
    if (program !== COMPUTE_BUDGET_PROGRAM) continue;
    const d = ix.data;
    if (d[0] === 2 && d.length === 5) requestedLimit = readU32(d, 1);
    else if (d[0] === 3 && d.length === 9) unitPrice = readU64(d, 1);
  }
  const defaultLimit =
    builtin * MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT + other * DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT;
  const unitLimit = Math.min(requestedLimit ?? defaultLimit, MAX_COMPUTE_UNIT_LIMIT);
  return { unitLimit, unitPrice };
}

/** Signatures the fee counts: transaction signatures plus those checked by precompile instructions. */
export function feeSignatureCount(message: DecodedMessage): number {
  let count = message.header.numRequiredSignatures;
  for (const ix of message.instructions) {
    const program = message.staticKeys[ix.programIdIndex]!;
    if ((program === ED25519_PROGRAM || program === SECP256K1_PROGRAM) && ix.data.length > 0) count += ix.data[0]!;
  }
  return count;
}

/** The priority fee: `ceil(price * limit / 1e6)` lamports. */
export function priorityFee(budget: ComputeBudgetRequest): bigint {
  return (budget.unitPrice * BigInt(budget.unitLimit) + 999_999n) / 1_000_000n;
}

/** The total fee LiteSVM (and a validator) charges for this message, successful or not. */
export function transactionFee(message: DecodedMessage): bigint {
  return LAMPORTS_PER_SIGNATURE * BigInt(feeSignatureCount(message)) + priorityFee(computeBudgetOf(message));
}
