/**
 * The chain's blocks, transactions and accounts as yellowstone-grpc's protobuf messages, shaped as the
 * plugin's `convert_to.rs` shapes agave's: a transaction's message and status meta
 * (solana-storage.proto), its error as the bincode bytes of agave's `TransactionError`, block and
 * block-meta summaries. Built lazily and once per message: nothing is encoded for a block no
 * client asked for.
 */
import { create } from "@bufbuild/protobuf";
import bs58 from "bs58";
import {
  SubscribeUpdateAccountInfoSchema,
  SubscribeUpdateBlockMetaSchema,
  SubscribeUpdateTransactionInfoSchema,
  type SubscribeUpdateAccountInfo,
  type SubscribeUpdateBlockMeta,
  type SubscribeUpdateTransactionInfo,
} from "../../gen/geyser_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type TokenBalanceSchema,
  TransactionErrorSchema,
  TransactionSchema,
  TransactionStatusMetaSchema,
  type TransactionError,
} from "../../gen/solana-storage_pb.js";
import type { Block, TransactionRecord } from "../chain/block-store.ts";
import type { TokenBalanceJson } from "../chain/token-balances.ts";
import { INSTRUCTION_ERROR_NAMES, type TransactionErrorJson } from "../wire/transaction-error.ts";

const VOTE_PROGRAM = "Vote111111111111111111111111111111111111111";

/** agave's `TransactionError` variants in declaration order: the bincode tag is the position. */
const TRANSACTION_ERROR_TAGS = [
  "AccountInUse",
  "AccountLoadedTwice",
  "AccountNotFound",
  "ProgramAccountNotFound",
  "InsufficientFundsForFee",
  "InvalidAccountForFee",
  "AlreadyProcessed",
  "BlockhashNotFound",
  "InstructionError",
  "CallChainTooDeep",
  "MissingSignatureForFee",
  "InvalidAccountIndex",
  "SignatureFailure",
  "InvalidProgramForExecution",
  "SanitizeFailure",
  "ClusterMaintenance",
  "AccountBorrowOutstanding",
  "WouldExceedMaxBlockCostLimit",
  "UnsupportedVersion",
  "InvalidWritableAccount",
  "WouldExceedMaxAccountCostLimit",
  "WouldExceedAccountDataBlockLimit",
  "TooManyAccountLocks",
  "AddressLookupTableNotFound",
  "InvalidAddressLookupTableOwner",
  "InvalidAddressLookupTableData",
  "InvalidAddressLookupTableIndex",
  "InvalidRentPayingAccount",
  "WouldExceedMaxVoteCostLimit",
  "WouldExceedAccountDataTotalLimit",
  "DuplicateInstruction",
  "InsufficientFundsForRent",
  "MaxLoadedAccountsDataSizeExceeded",
  "InvalidLoadedAccountsDataSizeLimit",
  "ResanitizationNeeded",
  "ProgramExecutionTemporarilyRestricted",
  "UnbalancedTransaction",
  "ProgramCacheHitMaxLimit",
  "CommitCancelled",
] as const;

/** agave's `InstructionError` variants in declaration order (`Custom(u32)` is 25). */
const INSTRUCTION_ERROR_TAGS = [
  "GenericError",
  "InvalidArgument",
  "InvalidInstructionData",
  "InvalidAccountData",
  "AccountDataTooSmall",
  "InsufficientFunds",
  "IncorrectProgramId",
  "MissingRequiredSignature",
  "AccountAlreadyInitialized",
  "UninitializedAccount",
  "UnbalancedInstruction",
  "ModifiedProgramId",
  "ExternalAccountLamportSpend",
  "ExternalAccountDataModified",
  "ReadonlyLamportChange",
  "ReadonlyDataModified",
  "DuplicateAccountIndex",
  "ExecutableModified",
  "RentEpochModified",
  "NotEnoughAccountKeys",
  "AccountDataSizeChanged",
  "AccountNotExecutable",
  "AccountBorrowFailed",
  "AccountBorrowOutstanding",
  "DuplicateAccountOutOfSync",
  "Custom",
  "InvalidError",
  "ExecutableDataModified",
  "ExecutableLamportChange",
  "ExecutableAccountNotRentExempt",
  "UnsupportedProgramId",
  "CallDepth",
  "MissingAccount",
  "ReentrancyNotAllowed",
  "MaxSeedLengthExceeded",
  "InvalidSeeds",
  "InvalidRealloc",
  "ComputationalBudgetExceeded",
  "PrivilegeEscalation",
  "ProgramEnvironmentSetupFailure",
  "ProgramFailedToComplete",
  "ProgramFailedToCompile",
  "Immutable",
  "IncorrectAuthority",
  "BorshIoError",
  "AccountNotRentExempt",
  "InvalidAccountOwner",
  "ArithmeticOverflow",
  "UnsupportedSysvar",
  "IllegalOwner",
  "MaxAccountsDataAllocationsExceeded",
  "MaxAccountsExceeded",
  "MaxInstructionTraceLengthExceeded",
  "BuiltinProgramsMustConsumeComputeUnits",
] as const;

function u32(value: number): number[] {
  return [value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, (value >>> 24) & 0xff];
}

function tagOf(names: readonly string[], name: string): number {
  const tag = names.indexOf(name);
  if (tag < 0) throw new Error(`no bincode tag for error variant ${name}`);
  return tag;
}

/** agave's `TransactionError` as bincode writes it (u32 variant tag, then the fields). */
export function encodeTransactionError(err: TransactionErrorJson): Uint8Array {
  if (typeof err === "string") return Uint8Array.from(u32(tagOf(TRANSACTION_ERROR_TAGS, err)));
  if ("InstructionError" in err) {
    const [index, inner] = err.InstructionError;
    const head = [...u32(tagOf(TRANSACTION_ERROR_TAGS, "InstructionError")), index & 0xff];
    if (typeof inner === "string") return Uint8Array.from([...head, ...u32(tagOf(INSTRUCTION_ERROR_TAGS, inner))]);
    return Uint8Array.from([...head, ...u32(tagOf(INSTRUCTION_ERROR_TAGS, "Custom")), ...u32(inner.Custom)]);
  }
  if ("DuplicateInstruction" in err) {
    return Uint8Array.from([...u32(tagOf(TRANSACTION_ERROR_TAGS, "DuplicateInstruction")), err.DuplicateInstruction]);
  }
  const [name, fields] = Object.entries(err)[0] as [string, { account_index: number }];
  return Uint8Array.from([...u32(tagOf(TRANSACTION_ERROR_TAGS, name)), fields.account_index]);
}

/** Decodes what {@link encodeTransactionError} writes (tests read the stream's errors back with it). */
export function decodeTransactionError(bytes: Uint8Array): TransactionErrorJson {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const name = TRANSACTION_ERROR_TAGS[view.getUint32(0, true)];
  if (name === undefined) throw new Error("unknown TransactionError tag");
  if (name === "InstructionError") {
    const inner = INSTRUCTION_ERROR_TAGS[view.getUint32(5, true)];
    if (inner === undefined) throw new Error("unknown InstructionError tag");
    return { InstructionError: [bytes[4]!, inner === "Custom" ? { Custom: view.getUint32(9, true) } : inner] };
  }
  if (name === "DuplicateInstruction") return { DuplicateInstruction: bytes[4]! };
  if (name === "InsufficientFundsForRent" || name === "ProgramExecutionTemporarilyRestricted") {
    return { [name]: { account_index: bytes[4]! } } as TransactionErrorJson;
  }
  return name;
}

// The localnet's own list of instruction errors must be a subset of agave's (a test checks the tags).
export const UNTAGGED_INSTRUCTION_ERRORS = INSTRUCTION_ERROR_NAMES.filter(
  (name) => !(INSTRUCTION_ERROR_TAGS as readonly string[]).includes(name),
);

export function transactionErrorProto(err: TransactionErrorJson | null): TransactionError | undefined {
  return err === null ? undefined : create(TransactionErrorSchema, { err: encodeTransactionError(err) });
}

function tokenBalance(balance: TokenBalanceJson): MessageInitShape<typeof TokenBalanceSchema> {
  return {
    accountIndex: balance.accountIndex,
    mint: balance.mint,
    owner: balance.owner,
    programId: balance.programId,
    uiTokenAmount: {
      amount: balance.uiTokenAmount.amount,
      decimals: balance.uiTokenAmount.decimals,
      uiAmount: balance.uiTokenAmount.uiAmount ?? 0,
      uiAmountString: balance.uiTokenAmount.uiAmountString,
    },
  };
}

const b58 = (text: string): Uint8Array => bs58.decode(text);

/** Is this a vote transaction (one that calls the Vote program)? */
export function isVoteTransaction(record: TransactionRecord): boolean {
  const { message } = record.tx;
  return message.instructions.some((ix) => message.staticKeys[ix.programIdIndex] === VOTE_PROGRAM);
}

/** `SubscribeUpdateTransactionInfo`: the transaction, its status meta, its signature and position. */
export function transactionInfo(record: TransactionRecord, isVote: boolean): SubscribeUpdateTransactionInfo {
  const { tx, outcome, keys } = record;
  const { message } = tx;
  const nothingRan = outcome.feesOnly === true;
  const transaction = create(TransactionSchema, {
    signatures: tx.signatures,
    message: {
      header: message.header,
      accountKeys: message.staticKeyBytes,
      recentBlockhash: b58(message.recentBlockhash),
      instructions: message.instructions.map((ix) => ({
        programIdIndex: ix.programIdIndex,
        accounts: Uint8Array.from(ix.accounts),
        data: ix.data,
      })),
      versioned: message.version === 0,
      addressTableLookups: message.lookups.map((lookup) => ({
        accountKey: b58(lookup.accountKey),
        writableIndexes: Uint8Array.from(lookup.writableIndexes),
        readonlyIndexes: Uint8Array.from(lookup.readonlyIndexes),
      })),
    },
  });
  const meta = create(TransactionStatusMetaSchema, {
    err: transactionErrorProto(outcome.err),
    fee: outcome.fee,
    preBalances: outcome.preBalances,
    postBalances: outcome.postBalances,
    innerInstructions: outcome.innerInstructions.map((set) => ({
      index: set.index,
      instructions: set.instructions.map((ix) => ({
        programIdIndex: ix.programIdIndex,
        accounts: Uint8Array.from(ix.accounts),
        data: ix.data,
        stackHeight: ix.stackHeight,
      })),
    })),
    innerInstructionsNone: nothingRan,
    logMessages: outcome.logs,
    logMessagesNone: nothingRan,
    preTokenBalances: outcome.preTokenBalances.map(tokenBalance),
    postTokenBalances: outcome.postTokenBalances.map(tokenBalance),
    rewards: [],
    loadedWritableAddresses: keys.loadedAddresses.writable.map(b58),
    loadedReadonlyAddresses: keys.loadedAddresses.readonly.map(b58),
    returnData:
      outcome.returnData === null
        ? undefined
        : { programId: b58(outcome.returnData.programId), data: outcome.returnData.data },
    returnDataNone: outcome.returnData === null,
    computeUnitsConsumed: nothingRan ? undefined : outcome.computeUnitsConsumed,
    costUnits: outcome.costUnits,
  });
  return create(SubscribeUpdateTransactionInfoSchema, {
    signature: tx.signatures[0],
    isVote,
    transaction,
    meta,
    index: BigInt(record.index),
  });
}

/** `SubscribeUpdateBlockMeta` of a block (no rewards: the localnet pays none). */
export function blockMeta(block: Block): SubscribeUpdateBlockMeta {
  return create(SubscribeUpdateBlockMetaSchema, {
    slot: block.slot,
    blockhash: block.blockhash,
    rewards: { rewards: [] },
    blockTime: { timestamp: BigInt(block.blockTime) },
    blockHeight: { blockHeight: block.blockHeight },
    parentSlot: block.parentSlot,
    parentBlockhash: block.previousBlockhash,
    executedTransactionCount: BigInt(block.transactions.length),
    entriesCount: 0n,
  });
}

/** One account write, as the stream reports it. */
export interface AccountWrite {
  slot: bigint;
  address: string;
  pubkey: Uint8Array;
  owner: string;
  ownerBytes: Uint8Array;
  lamports: bigint;
  executable: boolean;
  rentEpoch: bigint;
  data: Uint8Array;
  writeVersion: bigint;
  /** The last transaction of the block that wrote it (none for a direct write). */
  txnSignature: Uint8Array | undefined;
}

/** A data slice: `[start, end)`. */
export type DataSlice = readonly [number, number];

/** The plugin's `FilterAccountsDataSlice::get_slice`: the slices that fit, concatenated. */
export function sliceData(data: Uint8Array, slices: readonly DataSlice[]): Uint8Array {
  if (slices.length === 0) return data;
  const parts = slices.filter(([, end]) => data.length >= end);
  const out = new Uint8Array(parts.reduce((n, [start, end]) => n + end - start, 0));
  let at = 0;
  for (const [start, end] of parts) {
    out.set(data.subarray(start, end), at);
    at += end - start;
  }
  return out;
}

export function accountInfo(write: AccountWrite, slices: readonly DataSlice[]): SubscribeUpdateAccountInfo {
  return create(SubscribeUpdateAccountInfoSchema, {
    pubkey: write.pubkey,
    lamports: write.lamports,
    owner: write.ownerBytes,
    executable: write.executable,
    rentEpoch: write.rentEpoch,
    data: sliceData(write.data, slices),
    writeVersion: write.writeVersion,
    txnSignature: write.txnSignature,
  });
}
