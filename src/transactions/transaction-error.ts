/**
 * Turns the `TransactionError` a node reports (`"BlockhashNotFound"`, `{"InstructionError":[0,{"Custom":1}]}`,
 * `{"InsufficientFundsForRent":{"account_index":2}}`, ...) into a code, an English message and the
 * instruction index and custom code when there are any, keeping the original as JSON.
 */

/** A JSON value (what `google.protobuf.Value` can carry). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Why a transaction failed, on chain or in simulation. */
export interface ChainError {
  /** The runtime's name for it: `InstructionError`, `InsufficientFundsForFee`, ... */
  readonly code: string;
  /** A short English description. */
  readonly message: string;
  /** The failing instruction, for instruction errors. */
  readonly instructionIndex?: number;
  /** The program's own error code, for `Custom` instruction errors. */
  readonly customCode?: number;
  /** The error as the node reported it, made JSON-safe (bigints become numbers). */
  readonly raw: JsonValue;
}

// Wording for the errors a client is most likely to meet; anything else is its name split into words.
const TRANSACTION_MESSAGES: Record<string, string> = {
  AccountInUse: "an account is already being processed in another transaction",
  AccountNotFound: "the fee payer has no lamports (no record of a prior credit)",
  ProgramAccountNotFound: "a program the transaction calls does not exist",
  InsufficientFundsForFee: "the fee payer cannot pay the fee",
  AlreadyProcessed: "this transaction has already been processed",
  BlockhashNotFound: "the blockhash is not known to the node (expired or not yet seen)",
  SignatureFailure: "a signature does not verify",
  MissingSignatureForFee: "the fee payer did not sign",
  AddressLookupTableNotFound: "an address lookup table does not exist",
  InvalidAddressLookupTableIndex: "an address lookup table index is out of range",
  WouldExceedMaxBlockCostLimit: "the block is full",
  WouldExceedMaxAccountCostLimit: "an account's per-block compute limit is reached",
  InvalidRentPayingAccount: "an account would be left below rent exemption",
};

const INSTRUCTION_MESSAGES: Record<string, string> = {
  InsufficientFunds: "insufficient funds",
  InvalidArgument: "invalid argument",
  InvalidInstructionData: "invalid instruction data",
  InvalidAccountData: "invalid account data",
  MissingRequiredSignature: "a required signature is missing",
  AccountAlreadyInitialized: "the account is already initialized",
  UninitializedAccount: "the account is not initialized",
  ComputationalBudgetExceeded: "the compute-unit limit was exceeded",
  ProgramFailedToComplete: "the program failed to complete",
  IncorrectProgramId: "incorrect program id",
  NotEnoughAccountKeys: "not enough account keys",
};

/** `InsufficientFundsForFee` -> `insufficient funds for fee`. */
function words(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
}

/** Makes a kit-parsed value JSON-safe: bigints become numbers (they are small indexes and codes here). */
export function toJsonValue(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "number" || typeof value === "string" || typeof value === "boolean") return value;
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (typeof value === "object") {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJsonValue(v);
    return out;
  }
  return String(value);
}

function asInteger(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "bigint") return Number(value);
  return undefined;
}

function describeInstructionError(inner: unknown): { message: string; customCode?: number } {
  if (typeof inner === "string") return { message: INSTRUCTION_MESSAGES[inner] ?? words(inner) };
  if (inner !== null && typeof inner === "object") {
    const [name, payload] = Object.entries(inner)[0] ?? ["UnknownError", undefined];
    if (name === "Custom") {
      const customCode = asInteger(payload);
      const hex = customCode === undefined ? String(payload) : `0x${customCode.toString(16)}`;
      return { message: `custom program error: ${hex}`, customCode };
    }
    if (name === "BorshIoError" && typeof payload === "string") return { message: `borsh I/O error: ${payload}` };
    return { message: INSTRUCTION_MESSAGES[name] ?? words(name) };
  }
  return { message: "unknown instruction error" };
}

/** Describes a node's `TransactionError` value. */
export function describeTransactionError(err: unknown): ChainError {
  const raw = toJsonValue(err);
  if (typeof err === "string") {
    return { code: err, message: TRANSACTION_MESSAGES[err] ?? words(err), raw };
  }
  if (err !== null && typeof err === "object" && !Array.isArray(err)) {
    const [code, payload] = Object.entries(err)[0] ?? ["UnknownError", undefined];
    if (code === "InstructionError" && Array.isArray(payload)) {
      const instructionIndex = asInteger(payload[0]);
      const { message, customCode } = describeInstructionError(payload[1]);
      return {
        code,
        message: `instruction ${instructionIndex ?? "?"} failed: ${message}`,
        ...(instructionIndex === undefined ? {} : { instructionIndex }),
        ...(customCode === undefined ? {} : { customCode }),
        raw,
      };
    }
    if (code === "DuplicateInstruction") {
      const instructionIndex = asInteger(payload);
      return {
        code,
        message: `instruction ${instructionIndex ?? "?"} is duplicated`,
        ...(instructionIndex === undefined ? {} : { instructionIndex }),
        raw,
      };
    }
    const account = asInteger((payload as { account_index?: unknown } | undefined)?.account_index);
    const suffix = account === undefined ? "" : ` (account ${account})`;
    return { code, message: `${TRANSACTION_MESSAGES[code] ?? words(code)}${suffix}`, raw };
  }
  return { code: "UnknownError", message: "the node reported an error Solgate does not recognise", raw };
}

/** Whether a node's `TransactionError` value is the named one (`"AlreadyProcessed"`, `"BlockhashNotFound"`). */
export function isTransactionErrorNamed(err: unknown, name: string): boolean {
  return err === name || (err !== null && typeof err === "object" && Object.hasOwn(err, name));
}
