/**
 * What a transaction costs a block, as agave 3.0's cost model counts it when it packs a block
 * (cost-model/src/block_cost_limits.rs, cost_model.rs), and the priority its scheduler gives it.
 *
 * - cost = 720 CU per signature + 300 per write-locked account + instruction-data bytes / 4
 *   + the *requested* compute-unit limit + 8 CU per 32 KiB of the requested loaded-accounts data size.
 * - With no SetComputeUnitLimit the request is 200,000 CU per non-builtin instruction and 3,000 per builtin
 *   (compute-budget instructions included), capped at 1,400,000; the builtins are agave 3.0's
 *   builtins-default-costs list, less Stake (migrated to BPF on mainnet). With no SetLoadedAccountsDataSizeLimit
 *   the request is 64 MiB.
 * - Precompile signatures (ed25519, secp256k1/r1) add verify costs in agave; they are left out here.
 * - priority = reward / (cost + 1), reward = the priority fee (ceil(price x limit / 10^6) lamports) plus the
 *   leader's half of the signature fees. Kept as a float (lamports per CU): only compared, never charged.
 */
import {
  BUILTIN_INSTRUCTION_COMPUTE_UNITS,
  DEFAULT_INSTRUCTION_COMPUTE_UNITS,
  MAX_COMPUTE_UNITS,
  priorityFeeLamports,
  readLoadedAccountsLimit,
} from "../solana/compute-budget.ts";
import type { InstructionView } from "../solana/compute-budget.ts";
import { COMPUTE_BUDGET_PROGRAM, SYSTEM_PROGRAM, VOTE_PROGRAM } from "../solana/program-ids.ts";

/** CU per signature. */
export const SIGNATURE_COST = 720;
/** CU per write-locked account. */
export const WRITE_LOCK_COST = 300;
/** Instruction-data bytes per CU. */
export const INSTRUCTION_DATA_BYTES_PER_CU = 4;
/** The loaded-accounts data size a transaction may load when it sets none (64 MiB). */
export const DEFAULT_LOADED_ACCOUNTS_BYTES = 64 * 1024 * 1024;
/** The page the requested loaded-accounts data size is charged by (8 CU each). */
export const LOADED_ACCOUNTS_PAGE_BYTES = 32 * 1024;
const LOADED_ACCOUNTS_PAGE_COST = 8;
/** The leader's share of each signature's 5,000 lamports (the rest is burnt). */
const LEADER_LAMPORTS_PER_SIGNATURE = 2500;
/** agave 3.0's block limit (block_cost_limits.rs MAX_BLOCK_UNITS). */
export const BLOCK_CU_LIMIT = 60_000_000;
/**
 * The limit per write-locked account: 40% of the block's (24,000,000), as SIMD-0306 sets it; its feature is
 * active on mainnet (agave's constant before it, MAX_WRITABLE_ACCOUNT_UNITS, was 12,000,000).
 */
export const ACCOUNT_CU_LIMIT = 24_000_000;

/** Programs whose instructions request 3,000 CU by default (agave 3.0's builtins-default-costs, less Stake). */
export const COST_MODEL_BUILTINS: ReadonlySet<string> = new Set([
  VOTE_PROGRAM,
  SYSTEM_PROGRAM,
  COMPUTE_BUDGET_PROGRAM,
  "BPFLoaderUpgradeab1e11111111111111111111111",
  "BPFLoader1111111111111111111111111111111111",
  "BPFLoader2111111111111111111111111111111111",
  "LoaderV411111111111111111111111111111111111",
  "KeccakSecp256k11111111111111111111111111111",
  "Ed25519SigVerify111111111111111111111111111",
]);

/** The compute-unit request of a message that sets none: per instruction, 3,000 for a builtin, else 200,000; capped. */
export function defaultUnitLimit(builtinInstructions: number, otherInstructions: number): number {
  return Math.min(
    builtinInstructions * BUILTIN_INSTRUCTION_COMPUTE_UNITS + otherInstructions * DEFAULT_INSTRUCTION_COMPUTE_UNITS,
    MAX_COMPUTE_UNITS,
  );
}

/** What the cost model needs of a transaction. */
export interface CostShape {
  readonly signatures: number;
  readonly writableAccounts: number;
  readonly instructionDataBytes: number;
  /** The requested compute-unit limit (or the default for its instructions). */
  readonly unitLimit: number;
  /** The requested loaded-accounts data size in bytes (default 64 MiB). */
  readonly loadedAccountsBytes?: number;
}

/** The shape GetFees quotes for: one signature, two write locks, one program instruction with the default 200,000 CU. */
export const REFERENCE_SHAPE: CostShape = {
  signatures: 1,
  writableAccounts: 2,
  instructionDataBytes: 9 + 16,
  unitLimit: 200_000,
};

/** The block cost of a transaction of this shape, in CU. */
export function transactionCost(shape: CostShape): number {
  const loaded = shape.loadedAccountsBytes ?? DEFAULT_LOADED_ACCOUNTS_BYTES;
  return (
    SIGNATURE_COST * shape.signatures +
    WRITE_LOCK_COST * shape.writableAccounts +
    Math.floor(shape.instructionDataBytes / INSTRUCTION_DATA_BYTES_PER_CU) +
    shape.unitLimit +
    Math.ceil(loaded / LOADED_ACCOUNTS_PAGE_BYTES) * LOADED_ACCOUNTS_PAGE_COST
  );
}

/** The scheduler's priority of a transaction of `shape` (with block cost `cost`) paying `price` micro-lamports per CU. */
export function priorityOf(price: bigint, shape: CostShape, cost: number = transactionCost(shape)): number {
  const reward = Number(priorityFeeLamports(price, shape.unitLimit)) + LEADER_LAMPORTS_PER_SIGNATURE * shape.signatures;
  return reward / (cost + 1);
}

/**
 * The cheapest price (micro-lamports per CU) whose priority is above `priority`, or undefined when no price
 * up to 2^53 gets there. Priority rises with price, so a binary search over the price is exact.
 */
export function cheapestPriceAbove(
  priority: number,
  shape: CostShape,
  cost: number = transactionCost(shape),
): bigint | undefined {
  if (priorityOf(0n, shape, cost) > priority) return 0n;
  let high = 1n;
  const cap = 1n << 53n;
  while (priorityOf(high, shape, cost) <= priority) {
    if (high >= cap) return undefined;
    high *= 2n;
  }
  let low = 0n; // priority(low) <= priority < priority(high)
  while (high - low > 1n) {
    const mid = (low + high) / 2n;
    if (priorityOf(mid, shape, cost) > priority) high = mid;
    else low = mid;
  }
  return high;
}

/** The cost shape of a compiled message (a client's draft): its own limits, or agave's defaults where it sets none. */
export function costShapeOf(
  message: {
    readonly staticAccounts: readonly string[];
    readonly instructions: readonly InstructionView[];
  },
  signatures: number,
  writableAccounts: number,
): CostShape {
  let instructionDataBytes = 0;
  let loadedAccountsBytes: number | undefined;
  let requested: number | undefined;
  let builtin = 0;
  let other = 0;
  for (const ix of message.instructions) {
    const data = ix.data ?? [];
    instructionDataBytes += data.length;
    const program = String(message.staticAccounts[ix.programAddressIndex]);
    if (COST_MODEL_BUILTINS.has(program)) builtin++;
    else other++;
    if (program !== COMPUTE_BUDGET_PROGRAM) continue;
    loadedAccountsBytes = readLoadedAccountsLimit(data) ?? loadedAccountsBytes;
    if (data[0] === 2 && data.length === 5)
      requested = (data[1] | (data[2] << 8) | (data[3] << 16)) + data[4] * 2 ** 24;
  }
  const unitLimit = Math.min(requested ?? defaultUnitLimit(builtin, other), MAX_COMPUTE_UNITS);
  return { signatures, writableAccounts, instructionDataBytes, unitLimit, loadedAccountsBytes };
}
