/**
 * Recorded transactions in the encodings getTransaction and getBlock offer: json, jsonParsed
 * (System instructions parsed, others partially decoded), base58, base64, and the `accounts`
 * detail level; plus their `meta`, in agave's field set.
 */
import bs58 from "bs58";
import type { TransactionRecord } from "../chain/block-store.ts";
import type { InnerInstructionSet } from "../chain/executor.ts";
import type { AccountKeys } from "../wire/account-keys.ts";
import type { DecodedTransaction } from "../wire/decode-transaction.ts";
import { parseInstruction } from "./parse-instruction.ts";
import { JsonRpcError, RpcErrorCode, invalidParams } from "./protocol.ts";

/** Transaction encodings of getTransaction / getBlock. */
export const TRANSACTION_ENCODINGS = ["json", "jsonParsed", "base58", "base64", "binary"] as const;
export type TransactionEncoding = (typeof TRANSACTION_ENCODINGS)[number];

/** Throws -32015 when a v0 transaction is asked for by a client that did not opt into it. */
/**
 * agave 4.4's `validate_max_supported_transaction_version_for_encoding` (getBlock, getTransaction,
 * blockSubscribe): base58 (and its alias binary) cannot carry version-1 transactions, so
 * maxSupportedTransactionVersion >= 1 with them is refused (-32602).
 */
export function checkEncodingForMaxVersion(encoding: string, maxSupportedVersion: bigint | undefined): void {
  if (
    (encoding === "base58" || encoding === "binary") &&
    maxSupportedVersion !== undefined &&
    maxSupportedVersion >= 1n
  ) {
    throw invalidParams("base58 encoding is not supported with maxSupportedTransactionVersion >= 1");
  }
}

export function checkVersionSupported(tx: DecodedTransaction, maxSupportedVersion: bigint | undefined): void {
  if (tx.message.version === "legacy") return;
  if (maxSupportedVersion === undefined || maxSupportedVersion < 0n) {
    throw new JsonRpcError(
      RpcErrorCode.UNSUPPORTED_TRANSACTION_VERSION,
      'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
    );
  }
}

function innerInstructionsJson(sets: InnerInstructionSet[], keys: AccountKeys, parsed: boolean) {
  return sets.map((set) => ({
    index: set.index,
    instructions: set.instructions.map((ix) =>
      parsed
        ? parseInstruction(
            keys.keys[ix.programIdIndex]!,
            ix.accounts.map((a) => keys.keys[a]!),
            ix.data,
            ix.stackHeight,
          )
        : {
            accounts: ix.accounts,
            data: bs58.encode(ix.data),
            programIdIndex: ix.programIdIndex,
            stackHeight: ix.stackHeight,
          },
    ),
  }));
}

/** The `meta` object of a recorded transaction. */
export function encodeMeta(record: TransactionRecord, parsed: boolean): Record<string, unknown> {
  const o = record.outcome;
  const meta: Record<string, unknown> = {
    computeUnitsConsumed: o.computeUnitsConsumed,
    costUnits: o.costUnits,
    err: o.err,
    fee: o.fee,
    // A fees-only transaction never ran: agave records no logs or inner instructions (null).
    innerInstructions: o.feesOnly ? null : innerInstructionsJson(o.innerInstructions, record.keys, parsed),
    loadedAddresses: record.keys.loadedAddresses,
    logMessages: o.feesOnly ? null : o.logs,
    postBalances: o.postBalances,
    postTokenBalances: o.postTokenBalances,
    preBalances: o.preBalances,
    preTokenBalances: o.preTokenBalances,
    rewards: [],
    status: o.err === null ? { Ok: null } : { Err: o.err },
  };
  if (o.returnData !== null) {
    meta.returnData = {
      data: [Buffer.from(o.returnData.data).toString("base64"), "base64"],
      programId: o.returnData.programId,
    };
  }
  return meta;
}

/** The `meta` for transactionDetails "accounts": balances and status only. */
export function encodeAccountsMeta(record: TransactionRecord): Record<string, unknown> {
  const o = record.outcome;
  return {
    err: o.err,
    fee: o.fee,
    postBalances: o.postBalances,
    postTokenBalances: o.postTokenBalances,
    preBalances: o.preBalances,
    preTokenBalances: o.preTokenBalances,
    status: o.err === null ? { Ok: null } : { Err: o.err },
  };
}

function parsedAccountKeys(keys: AccountKeys) {
  return keys.keys.map((pubkey, i) => ({
    pubkey,
    signer: keys.signer[i]!,
    source: keys.fromLookupTable[i] ? "lookupTable" : "transaction",
    writable: keys.writable[i]!,
  }));
}

function lookupsJson(tx: DecodedTransaction) {
  return tx.message.lookups.map((l) => ({
    accountKey: l.accountKey,
    readonlyIndexes: l.readonlyIndexes,
    writableIndexes: l.writableIndexes,
  }));
}

/** The `transaction` field in the requested encoding. */
export function encodeTransaction(record: TransactionRecord, encoding: TransactionEncoding): unknown {
  const { tx, keys } = record;
  if (encoding === "base64") return [Buffer.from(tx.wire).toString("base64"), "base64"];
  if (encoding === "base58") return [bs58.encode(tx.wire), "base58"];
  if (encoding === "binary") return bs58.encode(tx.wire);
  const m = tx.message;
  if (encoding === "jsonParsed") {
    return {
      message: {
        accountKeys: parsedAccountKeys(keys),
        addressTableLookups: m.version === "legacy" ? null : lookupsJson(tx),
        instructions: m.instructions.map((ix) =>
          parseInstruction(
            keys.keys[ix.programIdIndex]!,
            ix.accounts.map((a) => keys.keys[a]!),
            ix.data,
            null,
          ),
        ),
        recentBlockhash: m.recentBlockhash,
      },
      signatures: tx.signatureStrings,
    };
  }
  const message: Record<string, unknown> = {
    accountKeys: m.staticKeys,
    header: m.header,
    instructions: m.instructions.map((ix) => ({
      accounts: ix.accounts,
      data: bs58.encode(ix.data),
      programIdIndex: ix.programIdIndex,
    })),
    recentBlockhash: m.recentBlockhash,
  };
  if (m.version !== "legacy") message.addressTableLookups = lookupsJson(tx);
  return { message, signatures: tx.signatureStrings };
}

/** The `transaction` field for transactionDetails "accounts". */
export function encodeAccountsTransaction(record: TransactionRecord): unknown {
  return { accountKeys: parsedAccountKeys(record.keys), signatures: record.tx.signatureStrings };
}

/** Version label: "legacy" or 0. */
export function versionOf(tx: DecodedTransaction): "legacy" | 0 {
  return tx.message.version;
}
