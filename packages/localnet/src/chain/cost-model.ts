/**
 * agave 4.4's cost model (`cost-model/src/cost_model.rs`, `block_cost_limits.rs`, `cost_tracker.rs`) and
 * the block limits its bank sets (`runtime/src/slot_params.rs`): what a transaction costs a block before it
 * runs, the figure the leader's cost tracker checks against the block and write-lock limits, and its reward
 * (`Bank::calculate_reward_for_transaction`), which orders the scheduler's buffer.
 *
 * cost = signature cost + 300 per write lock + instruction-data bytes / 4 + the requested compute-unit
 * limit + 8 CU per 32 KiB page of the requested loaded-accounts data size limit. A message whose
 * compute-budget instructions do not sanitize costs 0 for execution and loaded data, as in agave (it
 * fails before it runs). Feature-dependent parts take what solana-test-validator 4.4 activates at genesis
 * (every feature but Alpenglow): 4.4 no longer gates the strict ed25519 and secp256r1 verify costs, Stake
 * is no longer a builtin for the default request, and Vote stops being one with SIMD-0387.
 */
import type { DecodedMessage } from "../wire/decode-transaction.ts";

/** COMPUTE_UNIT_TO_US_RATIO (30) x 24. */
export const SIGNATURE_COST = 720n;
/** 30 x 223. */
export const SECP256K1_VERIFY_COST = 6690n;
/** 30 x 80 (ED25519_VERIFY_STRICT_COST: agave 4.4 charges it unconditionally). */
export const ED25519_VERIFY_COST = 2400n;
/** 30 x 160 (agave 4.4 charges it unconditionally). */
export const SECP256R1_VERIFY_COST = 4800n;
/** 30 x 10. */
export const WRITE_LOCK_UNITS = 300n;
/** 140 bytes per µs / 30 = 4 (integer division, as agave's constant). */
export const INSTRUCTION_DATA_BYTES_COST = 4;
/** agave's MAX_COMPUTE_UNIT_LIMIT. */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
/** Default request per instruction of a program that is not a builtin. */
export const DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT = 200_000;
/** Default request per builtin instruction. */
export const MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT = 3_000;
/** MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES: 64 MiB, the default and the ceiling of the request. */
export const MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES = 64 * 1024 * 1024;
/** ACCOUNT_DATA_COST_PAGE_SIZE. */
export const ACCOUNT_DATA_COST_PAGE_SIZE = 32 * 1024;
/** DEFAULT_HEAP_COST: CU per page. */
export const DEFAULT_HEAP_COST = 8n;
/**
 * The limits of a slot-time regime (`slot_params.rs` SlotParams: block, writable-account and accounts-data
 * growth limits), by slot time in ms. 400 is `LEGACY_SLOT_PARAMS`, the genesis baseline whatever the genesis
 * slot time; each `reduce_slot_time_to_*` feature (SIMD-0525) selects a shorter one. agave 4.4 reads
 * neither SIMD-0207/0256's raises nor SIMD-0306's account share any more: the table holds them.
 */
export const SLOT_TIME_REGIMES: Readonly<Record<number, { block: bigint; account: bigint; dataSize: bigint }>> = {
  400: { block: 60_000_000n, account: 24_000_000n, dataSize: 100_000_000n },
  350: { block: 52_500_000n, account: 21_000_000n, dataSize: 87_500_000n },
  300: { block: 45_000_000n, account: 18_000_000n, dataSize: 75_000_000n },
  250: { block: 37_500_000n, account: 15_000_000n, dataSize: 62_500_000n },
  200: { block: 30_000_000n, account: 12_000_000n, dataSize: 50_000_000n },
};
/** The genesis baseline's block limit (MAX_BLOCK_UNITS_SIMD_0256). */
export const MAX_BLOCK_UNITS = SLOT_TIME_REGIMES[400]!.block;
/** SIMD-0286 (`raise_block_limits_to_100m`): block and account limits x 100 / 60 (`SlotParams::cost_limits`). */
export function raisedTo100m(limit: bigint): bigint {
  return (limit * 100n) / 60n;
}
/** solana-test-validator 4.4's limits at genesis (SIMD-0286 active): 100,000,000 per block. */
export const DEFAULT_BLOCK_LIMIT = raisedTo100m(MAX_BLOCK_UNITS);
/** ... and 40,000,000 per write-locked account. */
export const DEFAULT_ACCOUNT_LIMIT = raisedTo100m(SLOT_TIME_REGIMES[400]!.account);
/** The accounts-data growth a block may allocate at genesis: 100,000,000 bytes (MAX_BLOCK_ACCOUNTS_DATA_SIZE_DELTA). */
export const DEFAULT_DATA_SIZE_LIMIT = SLOT_TIME_REGIMES[400]!.dataSize;
/** The account limit is 40% of the block limit in every regime (24M of 60M, 40M of 100M). */
export const ACCOUNT_SHARE_PERCENT = 40n;
/** solana-test-validator 4.4 activates all four slot-time features at genesis: the 200 ms regime. */
export const DEFAULT_REDUCED_SLOT_MS = 200;
/** Lamports per signature, of which the leader keeps half (DEFAULT_BURN_PERCENT = 50). */
export const LAMPORTS_PER_SIGNATURE = 5000n;
export const BURN_PERCENT = 50n;

const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";
const ED25519_PROGRAM = "Ed25519SigVerify111111111111111111111111111";
const SECP256K1_PROGRAM = "KeccakSecp256k11111111111111111111111111111";
const SECP256R1_PROGRAM = "Secp256r1SigVerify1111111111111111111111111";

/**
 * Builtins for the default compute-unit request in agave 4.4 (`builtins-default-costs`): its nine, less
 * Vote, which it lists as migrating with SIMD-0387's `bls_pubkey_management_in_vote_account` (active at
 * solana-test-validator's genesis; a migrated builtin is requested as 200,000 like any program). Stake
 * (3.0 listed it as migrating), Config and Address Lookup Table are no longer listed; the secp256r1 and
 * ZK ElGamal programs never were.
 */
export const COST_MODEL_BUILTINS: ReadonlySet<string> = new Set([
  "11111111111111111111111111111111",
  COMPUTE_BUDGET_PROGRAM,
  "BPFLoaderUpgradeab1e11111111111111111111111",
  "BPFLoader1111111111111111111111111111111111",
  "BPFLoader2111111111111111111111111111111111",
  "LoaderV411111111111111111111111111111111111",
  SECP256K1_PROGRAM,
  ED25519_PROGRAM,
]);

/** A message's compute budget as agave sanitizes it. */
export interface ComputeBudgetLimits {
  /** The requested (or default) compute-unit limit, at most 1,400,000. */
  unitLimit: number;
  /** Micro-lamports per CU. */
  unitPrice: bigint;
  /** The requested (or default 64 MiB) loaded-accounts data size limit. */
  loadedAccountsBytes: number;
}

/** The parts of a transaction's cost (agave's `UsageCostDetails`). */
export interface TransactionCost {
  signatureCost: bigint;
  writeLockCost: bigint;
  dataBytesCost: bigint;
  programsExecutionCost: bigint;
  loadedAccountsDataSizeCost: bigint;
  /** Their sum: what the block and account limits count. */
  total: bigint;
}

function u32At(data: Uint8Array, at: number): number {
  return (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16)) + data[at + 3]! * 0x1000000;
}

function u64At(data: Uint8Array, at: number): bigint {
  let v = 0n;
  for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(data[at + i]!);
  return v;
}

/**
 * agave's `ComputeBudgetInstructionDetails` then `sanitize_and_convert_to_compute_budget_limits`:
 * null when a compute-budget instruction is malformed, duplicated, asks for an invalid heap frame or
 * for a zero loaded-accounts data size (the transaction fails before it runs).
 */
export function computeBudgetLimits(message: DecodedMessage): ComputeBudgetLimits | null {
  let limit: number | undefined;
  let price: bigint | undefined;
  let heap: number | undefined;
  let loaded: number | undefined;
  let builtin = 0;
  let other = 0;
  for (const ix of message.instructions) {
    const program = message.staticKeys[ix.programIdIndex]!;
    if (COST_MODEL_BUILTINS.has(program)) builtin++;
    else other++;
    if (program !== COMPUTE_BUDGET_PROGRAM) continue;
    const d = ix.data;
    // Borsh: a one-byte tag then the field; trailing bytes are tolerated (try_from_slice_unchecked).
    if (d[0] === 1 && d.length >= 5) {
      if (heap !== undefined) return null;
      heap = u32At(d, 1);
    } else if (d[0] === 2 && d.length >= 5) {
      if (limit !== undefined) return null;
      limit = u32At(d, 1);
    } else if (d[0] === 3 && d.length >= 9) {
      if (price !== undefined) return null;
      price = u64At(d, 1);
    } else if (d[0] === 4 && d.length >= 5) {
      if (loaded !== undefined) return null;
      loaded = u32At(d, 1);
    } else {
      return null;
    }
  }
  if (heap !== undefined && (heap < 32 * 1024 || heap > 256 * 1024 || heap % 1024 !== 0)) return null;
  if (loaded === 0) return null;
  const defaultLimit =
    builtin * MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT + other * DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT;
  return {
    unitLimit: Math.min(limit ?? defaultLimit, MAX_COMPUTE_UNIT_LIMIT),
    unitPrice: price ?? 0n,
    loadedAccountsBytes: Math.min(loaded ?? MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES, MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES),
  };
}

/** Signatures by kind: the transaction's own and those its precompile instructions verify (first data byte). */
export interface SignatureCounts {
  transaction: number;
  ed25519: number;
  secp256k1: number;
  secp256r1: number;
}

export function signatureCounts(message: DecodedMessage): SignatureCounts {
  const counts = { transaction: message.header.numRequiredSignatures, ed25519: 0, secp256k1: 0, secp256r1: 0 };
  for (const ix of message.instructions) {
    const program = message.staticKeys[ix.programIdIndex]!;
    const n = ix.data[0] ?? 0;
    if (program === ED25519_PROGRAM) counts.ed25519 += n;
    else if (program === SECP256K1_PROGRAM) counts.secp256k1 += n;
    else if (program === SECP256R1_PROGRAM) counts.secp256r1 += n;
  }
  return counts;
}

/** 8 CU per started 32 KiB page. */
export function loadedAccountsDataSizeCost(bytes: number): bigint {
  return BigInt(Math.ceil(bytes / ACCOUNT_DATA_COST_PAGE_SIZE)) * DEFAULT_HEAP_COST;
}

/** The cost agave's scheduler and cost tracker give a (non-vote) transaction before it runs. */
export function transactionCost(message: DecodedMessage, writableAccounts: number): TransactionCost {
  const sigs = signatureCounts(message);
  const signatureCost =
    SIGNATURE_COST * BigInt(sigs.transaction) +
    SECP256K1_VERIFY_COST * BigInt(sigs.secp256k1) +
    ED25519_VERIFY_COST * BigInt(sigs.ed25519) +
    SECP256R1_VERIFY_COST * BigInt(sigs.secp256r1);
  const writeLockCost = WRITE_LOCK_UNITS * BigInt(writableAccounts);
  let dataBytes = 0;
  for (const ix of message.instructions) dataBytes += ix.data.length;
  // agave sums the data length in a u16 before dividing.
  const dataBytesCost = BigInt(Math.floor(Math.min(dataBytes, 0xffff) / INSTRUCTION_DATA_BYTES_COST));
  const limits = computeBudgetLimits(message);
  const programsExecutionCost = limits === null ? 0n : BigInt(limits.unitLimit);
  const loadedCost = limits === null ? 0n : loadedAccountsDataSizeCost(limits.loadedAccountsBytes);
  return {
    signatureCost,
    writeLockCost,
    dataBytesCost,
    programsExecutionCost,
    loadedAccountsDataSizeCost: loadedCost,
    total: signatureCost + writeLockCost + dataBytesCost + programsExecutionCost + loadedCost,
  };
}

const SYSTEM_PROGRAM = "11111111111111111111111111111111";
/** MAX_PERMITTED_DATA_LENGTH: 10 MiB, the most one account may be allocated. */
export const MAX_PERMITTED_DATA_LENGTH = 10n * 1024n * 1024n;
/** MAX_PERMITTED_ACCOUNTS_DATA_ALLOCATIONS_PER_TRANSACTION: twice that. */
export const MAX_ALLOCATIONS_PER_TRANSACTION = 2n * MAX_PERMITTED_DATA_LENGTH;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * One System instruction's allocation as agave's cost model reads it (bincode, trailing bytes allowed):
 * the space of CreateAccount, CreateAccountWithSeed, Allocate, AllocateWithSeed and CreateAccountAllowPrefund
 * (null when over 10 MiB), 0 for the other variants, null when the data does not decode (Failed).
 */
function systemAllocation(d: Uint8Array): bigint | null {
  if (d.length < 4) return null;
  const tag = u32At(d, 0);
  /** A bincode String at `at` (u64 length, UTF-8); the offset after it, or null. */
  const afterString = (at: number): number | null => {
    if (d.length < at + 8) return null;
    const len = u64At(d, at);
    const end = at + 8 + Number(len);
    if (len > BigInt(d.length) || d.length < end) return null;
    try {
      utf8.decode(d.subarray(at + 8, end));
    } catch {
      return null;
    }
    return end;
  };
  const space = (at: number, need: number): bigint | null => {
    if (d.length < need) return null;
    const value = u64At(d, at);
    return value > MAX_PERMITTED_DATA_LENGTH ? null : value;
  };
  const fixed = (need: number): bigint | null => (d.length < need ? null : 0n);
  switch (tag) {
    case 0: // CreateAccount { lamports, space, owner }
    case 13: // CreateAccountAllowPrefund { lamports, space, owner } (its feature is active at genesis)
      return space(12, 4 + 8 + 8 + 32);
    case 3: {
      // CreateAccountWithSeed { base, seed, lamports, space, owner }
      const end = afterString(36);
      return end === null ? null : space(end + 8, end + 8 + 8 + 32);
    }
    case 8: // Allocate { space }
      return space(4, 12);
    case 9: {
      // AllocateWithSeed { base, seed, space, owner }
      const end = afterString(36);
      return end === null ? null : space(end, end + 8 + 32);
    }
    case 1: // Assign { owner }
    case 6: // InitializeNonceAccount(authority)
    case 7: // AuthorizeNonceAccount(authority)
      return fixed(36);
    case 2: // Transfer { lamports }
    case 5: // WithdrawNonceAccount(lamports)
      return fixed(12);
    case 4: // AdvanceNonceAccount
    case 12: // UpgradeNonceAccount
      return 0n;
    case 10: {
      // AssignWithSeed { base, seed, owner }
      const end = afterString(36);
      return end === null ? null : fixed(end + 32);
    }
    case 11: {
      // TransferWithSeed { lamports, from_seed, from_owner }
      const end = afterString(12);
      return end === null ? null : fixed(end + 32);
    }
    default:
      return null;
  }
}

/**
 * The account data a transaction may allocate, as agave's `calculate_allocated_accounts_data_size`: the sum
 * of its top-level System allocations, at most 20 MiB; 0 when any System instruction is sure to fail (then
 * nothing it allocates persists). The cost tracker holds a block's sum to the accounts-data growth limit.
 */
export function allocatedAccountsDataSize(message: DecodedMessage): bigint {
  let total = 0n;
  for (const ix of message.instructions) {
    if (message.staticKeys[ix.programIdIndex] !== SYSTEM_PROGRAM) continue;
    const allocation = systemAllocation(ix.data);
    if (allocation === null) return 0n;
    total += allocation;
  }
  return total < MAX_ALLOCATIONS_PER_TRANSACTION ? total : MAX_ALLOCATIONS_PER_TRANSACTION;
}

/** `ceil(price x limit / 1e6)` lamports. */
export function prioritizationFee(limits: ComputeBudgetLimits): bigint {
  return (limits.unitPrice * BigInt(limits.unitLimit) + 999_999n) / 1_000_000n;
}

/**
 * The leader's reward (`calculate_reward_for_transaction`): the priority fee plus the signature fee
 * less its burned half (5000 per signature, precompile signatures included).
 */
export function transactionReward(message: DecodedMessage): bigint {
  const limits = computeBudgetLimits(message);
  const sigs = signatureCounts(message);
  const signatureFee =
    LAMPORTS_PER_SIGNATURE * BigInt(sigs.transaction + sigs.ed25519 + sigs.secp256k1 + sigs.secp256r1);
  if (signatureFee === 0n) return 0n;
  const burn = (signatureFee * BURN_PERCENT) / 100n;
  return (limits === null ? 0n : prioritizationFee(limits)) + signatureFee - burn;
}

/** The scheduler's priority (`calculate_priority_and_cost`): reward x 1,000,000 / (cost + 1). */
export function transactionPriority(reward: bigint, cost: bigint): bigint {
  return (reward * 1_000_000n) / (cost + 1n);
}

/** The account limit that goes with a block limit: 40% of it, as in every regime of agave 4.4. */
export function accountLimitFor(blockLimit: bigint): bigint {
  return (blockLimit * ACCOUNT_SHARE_PERCENT) / 100n;
}

/** A block's limits. */
export interface BlockLimits {
  block: bigint;
  account: bigint;
  /** Bytes of new account data a block may allocate (not scaled by SIMD-0286). */
  dataSize: bigint;
}

/**
 * The limits in force at `slot`: `genesis` (the baseline) until the first slot of the epoch after the
 * genesis slot's, then the same scaled as the `reducedSlotMs` regime scales the baseline's (agave makes a
 * slot-time feature effective at the epoch after it activates, `feature_effective_slot`; every feature
 * activates at genesis). Scaling by the table's ratio keeps agave's numbers for its own baselines (100M / 40M
 * to 50M / 20M at 200 ms; 60M / 24M to 30M / 12M without SIMD-0286) and follows a configured limit otherwise.
 */
export function limitsAtSlot(
  genesis: BlockLimits,
  reducedSlotMs: number,
  reducedFrom: bigint,
  slot: bigint,
): BlockLimits {
  if (slot < reducedFrom || reducedSlotMs >= 400) return genesis;
  const regime = SLOT_TIME_REGIMES[reducedSlotMs]!;
  const legacy = SLOT_TIME_REGIMES[400]!;
  return {
    block: (genesis.block * regime.block) / legacy.block,
    account: (genesis.account * regime.account) / legacy.account,
    dataSize: (genesis.dataSize * regime.dataSize) / legacy.dataSize,
  };
}
