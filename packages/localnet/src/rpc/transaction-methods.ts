/**
 * Transaction methods: sendTransaction (preflight like agave, queued for the next slot),
 * simulateTransaction, getSignatureStatuses, getTransaction and requestAirdrop.
 */
import bs58 from "bs58";
import type { Chain } from "../chain/chain.ts";
import type { ExecutionOutcome } from "../chain/executor.ts";
import type { Faults } from "../faults.ts";
import type { AccountKeys } from "../wire/account-keys.ts";
import { decodeWirePayload, type BinaryEncoding } from "../wire/binary-encoding.ts";
import {
  decodeTransaction,
  replaceBlockhash,
  VERSIONED_TRANSACTION_TYPE,
  type DecodedTransaction,
} from "../wire/decode-transaction.ts";
import { transactionErrorText, type TransactionErrorJson } from "../wire/transaction-error.ts";
import { MAX_PROCESSING_AGE } from "../chain/blockhash-window.ts";
import { durableNonceIndex } from "../chain/durable-nonce.ts";
import {
  assertAtLeastConfirmed,
  base58Key,
  base58Signature,
  boolField,
  checkMinContextSlot,
  commitmentField,
  configParam,
  enumField,
  expectArity,
  stringParam,
  u64Field,
  u64Param,
  withContext,
} from "./params.ts";
import { JsonRpcError, RpcErrorCode, invalidParams, type Commitment, type MethodTable } from "./protocol.ts";
import {
  checkEncodingForMaxVersion,
  checkVersionSupported,
  encodeMeta,
  encodeTransaction,
  TRANSACTION_ENCODINGS,
} from "./encode-transaction.ts";

/** agave's MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS. */
const MAX_SIGNATURE_STATUSES = 256;
/** Slots a status stays in agave's status cache (found without searchTransactionHistory). */
const STATUS_CACHE_SLOTS = 300n;
/** Simulations refuse blockhashes this close to expiry (MAX_PROCESSING_AGE - MAX_TRANSACTION_FORWARDING_DELAY). */
const SIMULATION_MAX_AGE = MAX_PROCESSING_AGE - 6n;
const HEALTH_CHECK_SLOT_DISTANCE = 128n;

const decode58 = (text: string): Uint8Array | null => {
  try {
    return bs58.decode(text);
  } catch {
    return null;
  }
};

/** Encodes one simulated account for `accounts` in simulateTransaction. */
export type SimulatedAccountEncoder = (
  address: string,
  account: { lamports: bigint; data: Uint8Array; owner: string; executable: boolean; rentEpoch: bigint } | null,
  encoding: "base64" | "base64+zstd" | "jsonParsed",
) => unknown;

/** What these methods need. */
export interface TransactionMethodDeps {
  chain: Chain;
  faults: Faults;
  /** Encodes accounts for simulateTransaction's `accounts` option (the account module's encoder). */
  encodeAccount: SimulatedAccountEncoder;
  lagSlots(): number;
}

function wireEncoding(config: Record<string, unknown>): BinaryEncoding {
  const encoding =
    enumField(config, "encoding", ["binary", "base58", "base64", "json", "jsonParsed"] as const) ?? "base58";
  if (encoding === "json" || encoding === "jsonParsed") {
    throw invalidParams(`unsupported encoding: ${encoding}. Supported encodings: base58, base64`);
  }
  return encoding === "base64" ? "base64" : "base58";
}

/**
 * The result object of a simulation, in agave 3.0's RpcSimulateTransactionResult field set.
 * `outcome` is null when the transaction was not processed (it failed signature verification, age
 * or status-cache checks, or loading its fee payer): agave then reports no fee, balances, logs,
 * units or loaded size (`TransactionSimulationResult::new_error` and the bank's unprocessed
 * branch). `loadedAddresses` comes from the sanitized transaction, so it is present either way.
 */
function simulationValue(
  outcome: ExecutionOutcome | null,
  err: TransactionErrorJson | null,
  keys: AccountKeys,
  extra: { accounts?: unknown[] | null; innerInstructions?: unknown; replacementBlockhash?: unknown } = {},
) {
  return {
    accounts: extra.accounts ?? null,
    err,
    fee: outcome?.fee ?? null,
    innerInstructions: extra.innerInstructions ?? null,
    loadedAccountsDataSize: outcome?.loadedAccountsDataSize ?? 0,
    loadedAddresses: keys.loadedAddresses,
    logs: outcome?.logs ?? [],
    postBalances: outcome?.postBalances ?? null,
    postTokenBalances: outcome?.postTokenBalances ?? null,
    preBalances: outcome?.preBalances ?? null,
    preTokenBalances: outcome?.preTokenBalances ?? null,
    replacementBlockhash: extra.replacementBlockhash ?? null,
    returnData: outcome?.returnData
      ? {
          data: [Buffer.from(outcome.returnData.data).toString("base64"), "base64"],
          programId: outcome.returnData.programId,
        }
      : null,
    unitsConsumed: outcome?.computeUnitsConsumed ?? 0n,
  };
}

/**
 * The `data` of a -32002 preflight failure: agave 3.0 fills only what the preflight simulation
 * measured (fee, logs, units, loaded size, return data) and leaves balances, token balances and
 * loaded addresses null.
 */
function preflightFailureData(outcome: ExecutionOutcome | null, err: TransactionErrorJson, keys: AccountKeys) {
  return {
    ...simulationValue(outcome, err, keys),
    loadedAddresses: null,
    postBalances: null,
    postTokenBalances: null,
    preBalances: null,
    preTokenBalances: null,
  };
}

/** Was the transaction processed (fee charged, landed if sent), or refused before it ran? */
const processedOutcome = (outcome: ExecutionOutcome): ExecutionOutcome | null =>
  outcome.err === null || outcome.committed ? outcome : null;

/** Creates the transaction method table. */
export function createTransactionMethods({
  chain,
  faults,
  encodeAccount,
  lagSlots,
}: TransactionMethodDeps): MethodTable {
  /** Visible at the view slot: executed at or before it. */
  const seenBy = (signature: string, slot: bigint) => {
    const entry = chain.signatureStatus(signature);
    return entry !== undefined && entry.slot <= slot ? entry : undefined;
  };

  /**
   * The checks agave's bank runs before executing (age and status cache), then LiteSVM's
   * simulation. Returns the error to report, or null.
   */
  const preExecutionError = (tx: DecodedTransaction, slot: bigint): TransactionErrorJson | null => {
    const live = chain.isLifetimeValid(tx, slot, SIMULATION_MAX_AGE);
    // agave checks the age (or the nonce) before its status cache: a landed nonce transaction sent
    // again is BlockhashNotFound, its nonce having moved. Only nonce transactions are checked in that
    // order here (see README: a landed one with an expired blockhash stays AlreadyProcessed).
    if (!live && durableNonceIndex(tx.message) !== null) return "BlockhashNotFound";
    if (seenBy(tx.signatureStrings[0]!, slot)) return "AlreadyProcessed";
    return live ? null : "BlockhashNotFound";
  };

  const innerInstructionsUi = (outcome: ExecutionOutcome, keys: AccountKeys) =>
    outcome.innerInstructions.map((set) => ({
      index: set.index,
      instructions: set.instructions.map((ix) => ({
        accounts: ix.accounts.map((a) => keys.keys[a]!),
        data: bs58.encode(ix.data),
        programId: keys.keys[ix.programIdIndex]!,
        stackHeight: ix.stackHeight,
      })),
    }));

  return {
    sendTransaction(params, ctx) {
      expectArity(params, 1, 2);
      const data = stringParam(params[0]);
      const config = configParam(params[1]);
      const encoding = wireEncoding(config);
      const skipPreflight = boolField(config, "skipPreflight", false);
      const preflightCommitment: Commitment = skipPreflight
        ? "processed"
        : commitmentField({ commitment: config.preflightCommitment });
      u64Field(config, "maxRetries");
      const tx = decodeTransaction(decodeWirePayload(data, encoding, VERSIONED_TRANSACTION_TYPE));
      const slot = ctx.slotAt(preflightCommitment);
      checkMinContextSlot(slot, u64Field(config, "minContextSlot"));
      const keys = chain.accountKeys(tx);
      const signature = tx.signatureStrings[0]!;
      if (!skipPreflight) {
        // Signatures first (agave verifies before simulating); a failure is a preflight failure
        // with SignatureFailure, and skips the health check.
        const simulated = chain.check(tx, true);
        const badSignature = simulated === "SignatureFailure";
        if (!badSignature && BigInt(lagSlots()) > HEALTH_CHECK_SLOT_DISTANCE) {
          throw new JsonRpcError(RpcErrorCode.NODE_UNHEALTHY, `Node is behind by ${lagSlots()} slots`, {
            numSlotsBehind: lagSlots(),
          });
        }
        const early = badSignature ? "SignatureFailure" : preExecutionError(tx, slot);
        if (early !== null || simulated !== null) {
          const outcome = early === null ? chain.simulate(tx, keys, true) : null;
          const err = early ?? outcome!.err ?? simulated!;
          throw new JsonRpcError(
            RpcErrorCode.SEND_TRANSACTION_PREFLIGHT_FAILURE,
            `Transaction simulation failed: ${transactionErrorText(err)}`,
            preflightFailureData(outcome === null ? null : processedOutcome(outcome), err, keys),
          );
        }
      }
      // Accepted. The drop fault loses it here, like a leader that never received it.
      if (!faults.dropTransaction()) chain.submit(tx, !skipPreflight);
      return signature;
    },

    simulateTransaction(params, ctx) {
      expectArity(params, 1, 2);
      const data = stringParam(params[0]);
      const config = configParam(params[1]);
      const encoding = wireEncoding(config);
      const sigVerify = boolField(config, "sigVerify", false);
      const replace = boolField(config, "replaceRecentBlockhash", false);
      const wantInner = boolField(config, "innerInstructions", false);
      let tx = decodeTransaction(decodeWirePayload(data, encoding, VERSIONED_TRANSACTION_TYPE));
      const slot = ctx.slotAt(commitmentField(config));
      checkMinContextSlot(slot, u64Field(config, "minContextSlot"));
      let replacementBlockhash: { blockhash: string; lastValidBlockHeight: bigint } | undefined;
      if (replace) {
        if (sigVerify) throw invalidParams("sigVerify may not be used with replaceRecentBlockhash");
        const block = chain.block(slot)!;
        tx = replaceBlockhash(tx, block.blockhash);
        replacementBlockhash = {
          blockhash: block.blockhash,
          lastValidBlockHeight: block.blockHeight + MAX_PROCESSING_AGE,
        };
      }
      const accountsConfig = config.accounts;
      let addresses: string[] | undefined;
      let accountsEncoding: "base64" | "base64+zstd" | "jsonParsed" = "base64";
      if (accountsConfig !== undefined && accountsConfig !== null) {
        const ac = configParam(accountsConfig);
        const enc =
          enumField(ac, "encoding", ["binary", "base58", "base64", "jsonParsed", "base64+zstd"] as const) ?? "base64";
        if (enc === "binary" || enc === "base58") throw invalidParams("base58 encoding not supported");
        accountsEncoding = enc;
        if (!Array.isArray(ac.addresses)) throw invalidParams("Invalid params: missing field `addresses`.");
        addresses = ac.addresses.map((a) => stringParam(a));
      }
      const keys = chain.accountKeys(tx);
      const outcome = chain.simulate(tx, keys, sigVerify);
      // agave 4.4 (3.0.6's rpc.rs answered -32003 through verify_transaction): a signature that does not
      // verify is the simulation's error.
      const badSignature = sigVerify && outcome.err === "SignatureFailure";
      const early = badSignature ? "SignatureFailure" : replace ? null : preExecutionError(tx, slot);
      const err = early ?? outcome.err;
      let accounts: unknown[] | null = null;
      if (addresses !== undefined) {
        if (addresses.length > keys.keys.length)
          throw invalidParams(`Too many accounts provided; max ${keys.keys.length}`);
        if (err !== null) accounts = addresses.map(() => null);
        else {
          accounts = addresses.map((address) => {
            base58Key(address, decode58);
            const post = outcome.postAccounts?.get(address) ?? chain.executor.readAccount(address);
            return post === null ? null : encodeAccount(address, post, accountsEncoding);
          });
        }
      }
      return withContext(
        slot,
        simulationValue(early === null ? processedOutcome(outcome) : null, err, keys, {
          accounts,
          innerInstructions:
            wantInner && early === null && outcome.committed && !outcome.feesOnly
              ? innerInstructionsUi(outcome, keys)
              : null,
          replacementBlockhash,
        }),
      );
    },

    getSignatureStatuses(params, ctx) {
      expectArity(params, 1, 2);
      if (!Array.isArray(params[0])) throw invalidParams("Invalid params: invalid type: expected a sequence.");
      const signatures = params[0] as unknown[];
      if (signatures.length > MAX_SIGNATURE_STATUSES) {
        throw invalidParams(`Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
      }
      const verified = signatures.map((s) => base58Signature(s, decode58));
      const config = configParam(params[1]);
      const searchHistory = boolField(config, "searchTransactionHistory", false);
      // agave 4.4: the statuses are the bank's at the config's commitment (default processed), with
      // minContextSlot checked against it; 3.0 always read the processed bank.
      const bankSlot = ctx.slotAt(commitmentField(config, "processed"));
      checkMinContextSlot(bankSlot, u64Field(config, "minContextSlot"));
      const processed = ctx.slotAt("processed");
      const confirmed = ctx.slotAt("confirmed");
      const finalized = ctx.slotAt("finalized");
      const value = verified.map((signature) => {
        const entry = seenBy(signature, bankSlot);
        if (entry === undefined) return null;
        if (!searchHistory && entry.slot + STATUS_CACHE_SLOTS < bankSlot) return null;
        const isFinal = entry.slot <= finalized;
        return {
          confirmationStatus: isFinal ? "finalized" : entry.slot <= confirmed ? "confirmed" : "processed",
          confirmations: isFinal ? null : Number(processed - entry.slot),
          err: entry.err,
          slot: entry.slot,
          status: entry.err === null ? { Ok: null } : { Err: entry.err },
        };
      });
      return withContext(bankSlot, value);
    },

    getTransaction(params, ctx) {
      expectArity(params, 1, 2);
      const signature = base58Signature(params[0], decode58);
      const raw = params[1];
      const config = typeof raw === "string" ? { encoding: raw } : configParam(raw);
      const encoding = enumField(config, "encoding", TRANSACTION_ENCODINGS) ?? "json";
      const maxVersion = u64Field(config, "maxSupportedTransactionVersion");
      checkEncodingForMaxVersion(encoding, maxVersion);
      const commitment = commitmentField(config);
      assertAtLeastConfirmed(commitment);
      const record = chain.transaction(signature);
      if (record === undefined || record.slot > ctx.slotAt(commitment)) return null;
      checkVersionSupported(record.tx, maxVersion);
      const block = chain.block(record.slot)!;
      const result: Record<string, unknown> = {
        blockTime: block.blockTime,
        meta: encodeMeta(record, encoding === "jsonParsed"),
        slot: record.slot,
        transaction: encodeTransaction(record, encoding),
        transactionIndex: record.index,
      };
      if (maxVersion !== undefined) result.version = record.tx.message.version;
      return result;
    },

    async requestAirdrop(params) {
      expectArity(params, 2, 3);
      const address = base58Key(params[0], decode58);
      const lamports = u64Param(params[1]);
      configParam(params[2]);
      return chain.airdrop(address, lamports);
    },
  };
}
