/**
 * Recorded blocks: `getBlock` results from a real node (encoding base64, transactionDetails full,
 * with or without the JSON-RPC envelope) loaded into the localnet as its oldest blocks, below the
 * genesis slot (`LOCALNET_BLOCKS=file[,file]`). They are served as recorded, never executed, so that
 * block readers (the fee market) can be checked on real markets.
 *
 * A getBlock result does not carry its own slot: it is taken from a `slot` field when the file has one,
 * else `parentSlot + 1` (exact unless the parent's successor was skipped).
 */
import { readFileSync } from "node:fs";
import bs58 from "bs58";
import type { Block, TransactionRecord } from "./chain/block-store.ts";
import { blockPrioritizationFees } from "./chain/prioritization-fees.ts";
import type { ExecutionOutcome, InnerInstructionSet } from "./chain/executor.ts";
import type { TokenBalanceJson } from "./chain/token-balances.ts";
import { parseJson } from "./rpc/json.ts";
import { recordedAccountKeys } from "./wire/account-keys.ts";
import { decodeTransaction } from "./wire/decode-transaction.ts";
import { computeBudgetOf } from "./wire/fees.ts";
import type { TransactionErrorJson } from "./wire/transaction-error.ts";

type Json = Record<string, unknown>;

class RecordError extends Error {
  constructor(where: string, message: string) {
    super(`${where}: ${message}`);
    this.name = "RecordedBlockError";
  }
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether `value` is base58 of exactly 32 bytes (an address or a blockhash). */
function is32Bytes(value: unknown): value is string {
  try {
    return typeof value === "string" && bs58.decode(value).length === 32;
  } catch {
    return false;
  }
}

function u64(value: unknown, where: string, field: string): bigint {
  if (typeof value === "bigint" && value >= 0n) return value;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  throw new RecordError(where, `${field} must be a non-negative integer, got ${JSON.stringify(String(value))}`);
}

function optionalU64(value: unknown, where: string, field: string): bigint | null {
  return value === null || value === undefined ? null : u64(value, where, field);
}

function text(value: unknown, where: string, field: string): string {
  if (typeof value !== "string") throw new RecordError(where, `${field} must be a string`);
  return value;
}

function addresses(value: unknown, where: string, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new RecordError(where, `${field} must be an array of addresses`);
  return value.map((a, i) => {
    if (!is32Bytes(a)) throw new RecordError(where, `${field}[${i}] is not an address`);
    return a;
  });
}

/**
 * Parses one recorded `getBlock` result (or its JSON-RPC response) into the localnet's block form.
 * @throws Error naming the file position of the first problem.
 */
export function parseRecordedBlock(json: unknown, source = "block"): Block {
  let result = json;
  if (isObject(json) && "jsonrpc" in json) {
    if (json.error !== undefined) throw new RecordError(source, "the recorded response is a JSON-RPC error");
    result = json.result;
  }
  if (!isObject(result)) throw new RecordError(source, "not a getBlock result (expected an object with transactions)");
  if (!Array.isArray(result.transactions)) {
    throw new RecordError(source, 'the block has no transactions array: record it with transactionDetails "full"');
  }
  const parentSlot = u64(result.parentSlot, source, "parentSlot");
  const slot = result.slot === undefined ? parentSlot + 1n : u64(result.slot, source, "slot");
  if (slot <= parentSlot && slot !== 0n)
    throw new RecordError(source, `slot ${slot} is not above parentSlot ${parentSlot}`);
  const blockhash = text(result.blockhash, source, "blockhash");
  const previousBlockhash = text(result.previousBlockhash, source, "previousBlockhash");
  for (const [field, hash] of [
    ["blockhash", blockhash],
    ["previousBlockhash", previousBlockhash],
  ] as const) {
    if (!is32Bytes(hash)) throw new RecordError(source, `${field} is not a 32-byte hash`);
  }

  const transactions = result.transactions.map((entry, index) =>
    parseTransaction(entry, `${source}: transaction ${index}`, slot, index),
  );
  // As agave's prioritization-fee cache keeps it (votes excluded, accounts pruned).
  const { minUnitPrice, accountMinUnitPrice } = blockPrioritizationFees(transactions);
  return {
    slot,
    parentSlot,
    blockHeight: optionalU64(result.blockHeight, source, "blockHeight") ?? 0n,
    blockhash,
    previousBlockhash,
    blockTime: Number(optionalU64(result.blockTime, source, "blockTime") ?? 0n),
    transactions,
    transactionCount: BigInt(transactions.length),
    minUnitPrice,
    accountMinUnitPrice,
  };
}

function parseTransaction(entry: unknown, where: string, slot: bigint, index: number): TransactionRecord {
  if (!isObject(entry)) throw new RecordError(where, "not an object");
  const encoded = entry.transaction;
  if (!Array.isArray(encoded) || typeof encoded[0] !== "string" || encoded[1] !== "base64") {
    throw new RecordError(where, 'transaction must be ["<base64>", "base64"]: record the block with encoding "base64"');
  }
  let tx;
  try {
    tx = decodeTransaction(Buffer.from(encoded[0], "base64"));
  } catch (error) {
    throw new RecordError(where, `transaction does not decode: ${(error as Error).message}`);
  }
  const meta = entry.meta;
  if (!isObject(meta)) throw new RecordError(where, "meta is missing (the node had no status for it)");
  const loaded = isObject(meta.loadedAddresses) ? meta.loadedAddresses : {};
  const writable = addresses(loaded.writable, where, "meta.loadedAddresses.writable");
  const readonly = addresses(loaded.readonly, where, "meta.loadedAddresses.readonly");
  const lookups = tx.message.lookups;
  const wantWritable = lookups.reduce((n, l) => n + l.writableIndexes.length, 0);
  const wantReadonly = lookups.reduce((n, l) => n + l.readonlyIndexes.length, 0);
  if (writable.length !== wantWritable || readonly.length !== wantReadonly) {
    throw new RecordError(
      where,
      `meta.loadedAddresses has ${writable.length} writable and ${readonly.length} read-only addresses; the message's lookups name ${wantWritable} and ${wantReadonly}`,
    );
  }
  return {
    signature: tx.signatureStrings[0]!,
    slot,
    index,
    tx,
    keys: recordedAccountKeys(tx.message, { writable, readonly }),
    outcome: parseOutcome(meta, where),
    unitPrice: computeBudgetOf(tx.message).unitPrice,
  };
}

function u64List(value: unknown, where: string, field: string): bigint[] {
  if (!Array.isArray(value)) throw new RecordError(where, `${field} must be an array`);
  return value.map((v, i) => u64(v, where, `${field}[${i}]`));
}

function parseOutcome(meta: Json, where: string): ExecutionOutcome {
  const returnData = isObject(meta.returnData) && Array.isArray(meta.returnData.data) ? meta.returnData : null;
  return {
    committed: true,
    err: (meta.err ?? null) as TransactionErrorJson | null,
    fee: u64(meta.fee, where, "meta.fee"),
    logs: Array.isArray(meta.logMessages) ? meta.logMessages.map(String) : [],
    computeUnitsConsumed: optionalU64(meta.computeUnitsConsumed, where, "meta.computeUnitsConsumed") ?? 0n,
    innerInstructions: parseInnerInstructions(meta.innerInstructions, where),
    returnData:
      returnData === null
        ? null
        : {
            programId: text(returnData.programId, where, "meta.returnData.programId"),
            data: Buffer.from(String((returnData.data as unknown[])[0]), "base64"),
          },
    preBalances: u64List(meta.preBalances, where, "meta.preBalances"),
    postBalances: u64List(meta.postBalances, where, "meta.postBalances"),
    preTokenBalances: (Array.isArray(meta.preTokenBalances) ? meta.preTokenBalances : []) as TokenBalanceJson[],
    postTokenBalances: (Array.isArray(meta.postTokenBalances) ? meta.postTokenBalances : []) as TokenBalanceJson[],
    loadedAccountsDataSize: 0,
    costUnits: optionalU64(meta.costUnits, where, "meta.costUnits") ?? 0n,
  };
}

function parseInnerInstructions(value: unknown, where: string): InnerInstructionSet[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new RecordError(where, "meta.innerInstructions must be an array");
  return value.map((set, i) => {
    if (!isObject(set) || !Array.isArray(set.instructions))
      throw new RecordError(where, `meta.innerInstructions[${i}] is malformed`);
    return {
      index: Number(u64(set.index, where, `meta.innerInstructions[${i}].index`)),
      instructions: set.instructions.map((ix: unknown, j: number) => {
        const at = `meta.innerInstructions[${i}].instructions[${j}]`;
        if (!isObject(ix) || !Array.isArray(ix.accounts)) throw new RecordError(where, `${at} is malformed`);
        return {
          programIdIndex: Number(u64(ix.programIdIndex, where, `${at}.programIdIndex`)),
          accounts: ix.accounts.map((a, k) => Number(u64(a, where, `${at}.accounts[${k}]`))),
          data: bs58.decode(text(ix.data, where, `${at}.data`)),
          // Nodes before 1.14 did not record stack heights: keep the absence (served as null).
          stackHeight: (ix.stackHeight ?? null) as number,
        };
      }),
    };
  });
}

/**
 * Reads and parses recorded block files, in slot order.
 * @throws Error when a file cannot be read or parsed, or two files hold the same slot.
 */
export function loadRecordedBlocks(paths: readonly string[]): Block[] {
  const blocks = paths.map((path) => {
    let json: unknown;
    try {
      json = parseJson(readFileSync(path, "utf8"));
    } catch (error) {
      throw new Error(`recorded block ${path}: ${(error as Error).message}`);
    }
    return parseRecordedBlock(json, path);
  });
  blocks.sort((a, b) => (a.slot < b.slot ? -1 : a.slot > b.slot ? 1 : 0));
  let count = 0n;
  for (let i = 0; i < blocks.length; i++) {
    if (i > 0 && blocks[i].slot === blocks[i - 1].slot)
      throw new Error(`two recorded blocks claim slot ${blocks[i].slot}`);
    count += BigInt(blocks[i].transactions.length);
    blocks[i].transactionCount = count;
  }
  return blocks;
}
