/**
 * The full account list of a message: static keys, then addresses loaded from lookup tables
 * (writable first, then read-only), with each key's signer and writable flags as agave computes
 * them (reserved keys and invoked programs demoted to read-only).
 */
import bs58 from "bs58";
import { invalidParams } from "../rpc/protocol.ts";
import type { DecodedMessage } from "./decode-transaction.ts";

export const ADDRESS_LOOKUP_TABLE_PROGRAM = "AddressLookupTab1e1111111111111111111111111";
const LOOKUP_TABLE_META_SIZE = 56;
const U64_MAX = 0xffffffffffffffffn;
const UPGRADEABLE_LOADER = "BPFLoaderUpgradeab1e11111111111111111111111";

/** Keys agave never lets a transaction write (sysvars and builtin programs). */
const RESERVED_KEYS = new Set([
  "SysvarC1ock11111111111111111111111111111111",
  "SysvarEpochSchedu1e111111111111111111111111",
  "SysvarFees111111111111111111111111111111111",
  "Sysvar1nstructions1111111111111111111111111",
  "SysvarRecentB1ockHashes11111111111111111111",
  "SysvarRent111111111111111111111111111111111",
  "SysvarRewards111111111111111111111111111111",
  "SysvarS1otHashes111111111111111111111111111",
  "SysvarS1otHistory11111111111111111111111111",
  "SysvarStakeHistory1111111111111111111111111",
  "SysvarEpochRewards1111111111111111111111111",
  "SysvarLastRestartS1ot1111111111111111111111",
  "11111111111111111111111111111111",
  "BPFLoader1111111111111111111111111111111111",
  "BPFLoader2111111111111111111111111111111111",
  UPGRADEABLE_LOADER,
  "LoaderV411111111111111111111111111111111111",
  "ComputeBudget111111111111111111111111111111",
  "Config1111111111111111111111111111111111111",
  "Ed25519SigVerify111111111111111111111111111",
  "KeccakSecp256k11111111111111111111111111111",
  "Secp256r1SigVerify1111111111111111111111111",
  "Stake11111111111111111111111111111111111111",
  "Vote111111111111111111111111111111111111111",
  "ZkE1Gama1Proof11111111111111111111111111111",
  ADDRESS_LOOKUP_TABLE_PROGRAM,
  "NativeLoader1111111111111111111111111111111",
  "Feature111111111111111111111111111111111111",
]);

/** What a lookup-table resolution needs to read: owner and data of an account, or null. */
export type AccountReader = (address: string) => { owner: string; data: Uint8Array } | null;

/** A message's complete account list. */
export interface AccountKeys {
  keys: string[];
  /** Raw 32-byte keys, same order as `keys`. */
  keyBytes: Uint8Array[];
  signer: boolean[];
  writable: boolean[];
  /** Which keys came from lookup tables (for jsonParsed `source`). */
  fromLookupTable: boolean[];
  loadedAddresses: { writable: string[]; readonly: string[] };
}

function lookupError(text: string): never {
  throw invalidParams(`invalid transaction: ${text}`);
}

function tableAddresses(account: { owner: string; data: Uint8Array } | null, currentSlot: bigint): Uint8Array {
  if (account === null) lookupError("Transaction loads an address table account that doesn't exist");
  if (account.owner !== ADDRESS_LOOKUP_TABLE_PROGRAM) {
    lookupError("Transaction loads an address table account with an invalid owner");
  }
  const { data } = account;
  if (data.length < LOOKUP_TABLE_META_SIZE || (data.length - LOOKUP_TABLE_META_SIZE) % 32 !== 0 || data[0] !== 1) {
    lookupError("Transaction loads an address table account with invalid data");
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const deactivationSlot = view.getBigUint64(4, true);
  // A deactivated table stays usable while its deactivation slot is in SlotHashes (512 slots).
  if (deactivationSlot !== U64_MAX && deactivationSlot + 512n < currentSlot) {
    lookupError("Transaction loads an address table account that doesn't exist");
  }
  const lastExtendedSlot = view.getBigUint64(12, true);
  const startIndex = data[20]!;
  const all = data.subarray(LOOKUP_TABLE_META_SIZE);
  // Addresses appended in the current slot are not usable until the next one.
  return lastExtendedSlot >= currentSlot ? all.subarray(0, startIndex * 32) : all;
}

/** Resolves lookup tables (throws `-32602` like agave's `sanitize_transaction`) and computes flags. */
export function resolveAccountKeys(message: DecodedMessage, read: AccountReader, currentSlot: bigint): AccountKeys {
  const loadedWritable: string[] = [];
  const loadedReadonly: string[] = [];
  const writableBytes: Uint8Array[] = [];
  const readonlyBytes: Uint8Array[] = [];
  for (const lookup of message.lookups) {
    const addresses = tableAddresses(read(lookup.accountKey), currentSlot);
    const count = addresses.length / 32;
    const pick = (i: number, names: string[], raw: Uint8Array[]) => {
      if (i >= count) lookupError("Transaction address table lookup uses an invalid index");
      const bytes = addresses.slice(i * 32, i * 32 + 32);
      raw.push(bytes);
      names.push(bs58.encode(bytes));
    };
    for (const i of lookup.writableIndexes) pick(i, loadedWritable, writableBytes);
    for (const i of lookup.readonlyIndexes) pick(i, loadedReadonly, readonlyBytes);
  }
  const keys = [...message.staticKeys, ...loadedWritable, ...loadedReadonly];
  if (new Set(keys).size !== keys.length) throw invalidParams("invalid transaction: Account loaded twice");
  return {
    ...flagsFor(message, keys),
    keyBytes: [...message.staticKeyBytes, ...writableBytes, ...readonlyBytes],
    loadedAddresses: { writable: loadedWritable, readonly: loadedReadonly },
  };
}

/** Static keys only, for legacy messages and for messages whose tables are not needed. */
export function staticAccountKeys(message: DecodedMessage): AccountKeys {
  return {
    ...flagsFor(message, [...message.staticKeys]),
    keyBytes: message.staticKeyBytes,
    loadedAddresses: { writable: [], readonly: [] },
  };
}

/**
 * Keys of a recorded transaction whose lookup tables a node already resolved (`meta.loadedAddresses`):
 * recorded blocks are served, not executed, so their tables need not exist here.
 */
export function recordedAccountKeys(
  message: DecodedMessage,
  loaded: { writable: string[]; readonly: string[] },
): AccountKeys {
  const keys = [...message.staticKeys, ...loaded.writable, ...loaded.readonly];
  return {
    ...flagsFor(message, keys),
    keyBytes: keys.map((key) => bs58.decode(key)),
    loadedAddresses: { writable: [...loaded.writable], readonly: [...loaded.readonly] },
  };
}

function flagsFor(message: DecodedMessage, keys: string[]): Omit<AccountKeys, "loadedAddresses" | "keyBytes"> {
  const { header } = message;
  const numStatic = message.staticKeys.length;
  const numWritableLoaded = keys.length - numStatic - countReadonlyLoaded(message);
  const invoked = new Set(message.instructions.map((ix) => ix.programIdIndex));
  const upgradeableLoaderPresent = keys.includes(UPGRADEABLE_LOADER);
  const signer: boolean[] = [];
  const writable: boolean[] = [];
  const fromLookupTable: boolean[] = [];
  keys.forEach((key, i) => {
    signer.push(i < header.numRequiredSignatures);
    fromLookupTable.push(i >= numStatic);
    let w: boolean;
    if (i < header.numRequiredSignatures) w = i < header.numRequiredSignatures - header.numReadonlySignedAccounts;
    else if (i < numStatic) w = i < numStatic - header.numReadonlyUnsignedAccounts;
    else w = i < numStatic + numWritableLoaded;
    if (w && RESERVED_KEYS.has(key)) w = false;
    if (w && invoked.has(i) && !upgradeableLoaderPresent) w = false;
    writable.push(w);
  });
  return { keys, signer, writable, fromLookupTable };
}

function countReadonlyLoaded(message: DecodedMessage): number {
  return message.lookups.reduce((n, l) => n + l.readonlyIndexes.length, 0);
}
