/**
 * Reads agave's `TransactionError` from its bincode bytes (what Yellowstone's `transactions_status` carries)
 * into the JSON value a node's `getSignatureStatuses` reports for the same error (`"BlockhashNotFound"`,
 * `{"InstructionError":[0,{"Custom":1}]}`, `{"InsufficientFundsForRent":{"account_index":2}}`), so that a
 * status from the stream says exactly what the JSON-RPC would. Anything it cannot read exactly (an unknown
 * variant, a payload of another shape, bytes left over) is `undefined`: the caller asks the node instead.
 * Written by hand: no npm library decodes it short of the napi Yellowstone client.
 */

/** agave's `TransactionError` variants in declaration order: the bincode tag is the position. */
const TRANSACTION_ERRORS = [
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
];

/** agave's `InstructionError` variants in declaration order; only `Custom(u32)` carries a payload. */
const INSTRUCTION_ERRORS = [
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
];

/** Variants whose one field is `{ account_index: u8 }`. */
const ACCOUNT_INDEXED = new Set(["InsufficientFundsForRent", "ProgramExecutionTemporarilyRestricted"]);

/** The JSON form of a node's `TransactionError`. */
export type TransactionErrorValue =
  | string
  | { InstructionError: [number, string | { Custom: number }] }
  | { DuplicateInstruction: number }
  | { [name: string]: { account_index: number } };

/**
 * Decodes bincode `TransactionError` bytes.
 * @returns the JSON value the node reports, or undefined when the bytes are not exactly one known error.
 */
export function decodeTransactionErrorBincode(bytes: Uint8Array): TransactionErrorValue | undefined {
  if (bytes.length < 4) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const name = TRANSACTION_ERRORS[view.getUint32(0, true)];
  if (name === undefined) return undefined;
  if (name === "InstructionError") {
    if (bytes.length < 9) return undefined;
    const index = bytes[4]!;
    const inner = INSTRUCTION_ERRORS[view.getUint32(5, true)];
    if (inner === undefined) return undefined;
    if (inner === "Custom") {
      return bytes.length === 13 ? { InstructionError: [index, { Custom: view.getUint32(9, true) }] } : undefined;
    }
    return bytes.length === 9 ? { InstructionError: [index, inner] } : undefined;
  }
  if (name === "DuplicateInstruction") return bytes.length === 5 ? { DuplicateInstruction: bytes[4]! } : undefined;
  if (ACCOUNT_INDEXED.has(name)) return bytes.length === 5 ? { [name]: { account_index: bytes[4]! } } : undefined;
  return bytes.length === 4 ? name : undefined;
}
