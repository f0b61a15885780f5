/**
 * Token-2022 extensions in agave's jsonParsed form (`UiExtension`: `{extension, state?}`), field by
 * field as `solana-account-decoder-client-types` names them. An extension whose bytes do not have
 * the exact expected size shows as `unparseableExtension`, as agave does (e.g. a TokenGroup written
 * with the older 32-bit counters). ElGamal keys and ciphertexts render as base64, their `Display`.
 */
import { encodeBase58 } from "./base58.ts";
import { jsonI64, jsonU64, type JsonU64 } from "./json.ts";
import type { TlvEntry } from "./token-layout.ts";

/** One extension as it appears in `parsed.info.extensions`. */
export interface UiExtension {
  readonly extension: string;
  readonly state?: Record<string, unknown>;
}

const ACCOUNT_STATES = ["uninitialized", "initialized", "frozen"] as const;

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** `OptionalNonZeroPubkey`: all zeroes means none. */
function optionalKey(bytes: Uint8Array, offset: number): string | null {
  const key = bytes.subarray(offset, offset + 32);
  return key.every((byte) => byte === 0) ? null : encodeBase58(key);
}

function u64(bytes: Uint8Array, offset: number): JsonU64 {
  return jsonU64(view(bytes).getBigUint64(offset, true));
}

function i64(bytes: Uint8Array, offset: number): JsonU64 {
  return jsonI64(view(bytes).getBigInt64(offset, true));
}

/** `PodBool`: any non-zero byte is true. */
function bool(bytes: Uint8Array, offset: number): boolean {
  return bytes[offset] !== 0;
}

/** Rust's `f64` Display (shortest round-trip, never exponent notation). */
function rustF64(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? "NaN" : value > 0 ? "inf" : "-inf";
  const text = value.toString();
  if (!/e/i.test(text)) return text;
  return value.toLocaleString("en-US", { useGrouping: false, maximumSignificantDigits: 17 });
}

/** An ElGamal key or ciphertext (or AE ciphertext) as its `Display`: base64 of the bytes. */
function pod(bytes: Uint8Array, offset: number, length: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + offset, length).toString("base64");
}

/** `OptionalNonZeroElGamalPubkey`: all zeroes means none. */
function optionalElGamal(bytes: Uint8Array, offset: number): string | null {
  return bytes.subarray(offset, offset + 32).every((byte) => byte === 0) ? null : pod(bytes, offset, 32);
}

function transferFee(bytes: Uint8Array, offset: number): Record<string, unknown> {
  return {
    epoch: u64(bytes, offset),
    maximumFee: u64(bytes, offset + 8),
    transferFeeBasisPoints: view(bytes).getUint16(offset + 16, true),
  };
}

function readBorshString(bytes: Uint8Array, at: { offset: number }): string {
  const length = view(bytes).getUint32(at.offset, true);
  const start = at.offset + 4;
  if (start + length > bytes.length) throw new RangeError("string overruns extension");
  at.offset = start + length;
  return new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(start, start + length));
}

/** `TokenMetadata` is borsh, variable length; any overrun or bad UTF-8 makes it unparseable. */
function tokenMetadata(bytes: Uint8Array): Record<string, unknown> {
  const at = { offset: 64 };
  const name = readBorshString(bytes, at);
  const symbol = readBorshString(bytes, at);
  const uri = readBorshString(bytes, at);
  const count = view(bytes).getUint32(at.offset, true);
  at.offset += 4;
  const additionalMetadata: Array<[string, string]> = [];
  for (let i = 0; i < count; i++) additionalMetadata.push([readBorshString(bytes, at), readBorshString(bytes, at)]);
  if (at.offset !== bytes.length) throw new RangeError("trailing bytes in token metadata");
  return {
    updateAuthority: optionalKey(bytes, 0),
    mint: encodeBase58(bytes.subarray(32, 64)),
    name,
    symbol,
    uri,
    additionalMetadata,
  };
}

type Decoder = { size: number | "variable"; name: string; state?: (bytes: Uint8Array) => Record<string, unknown> };

const DECODERS: Record<number, Decoder> = {
  0: { size: 0, name: "uninitialized" },
  1: {
    size: 108,
    name: "transferFeeConfig",
    state: (b) => ({
      transferFeeConfigAuthority: optionalKey(b, 0),
      withdrawWithheldAuthority: optionalKey(b, 32),
      withheldAmount: u64(b, 64),
      olderTransferFee: transferFee(b, 72),
      newerTransferFee: transferFee(b, 90),
    }),
  },
  2: { size: 8, name: "transferFeeAmount", state: (b) => ({ withheldAmount: u64(b, 0) }) },
  3: { size: 32, name: "mintCloseAuthority", state: (b) => ({ closeAuthority: optionalKey(b, 0) }) },
  4: {
    size: 65,
    name: "confidentialTransferMint",
    state: (b) => ({
      authority: optionalKey(b, 0),
      autoApproveNewAccounts: bool(b, 32),
      auditorElgamalPubkey: optionalElGamal(b, 33),
    }),
  },
  5: {
    size: 295,
    name: "confidentialTransferAccount",
    state: (b) => ({
      approved: bool(b, 0),
      elgamalPubkey: pod(b, 1, 32),
      pendingBalanceLo: pod(b, 33, 64),
      pendingBalanceHi: pod(b, 97, 64),
      availableBalance: pod(b, 161, 64),
      decryptableAvailableBalance: pod(b, 225, 36),
      allowConfidentialCredits: bool(b, 261),
      allowNonConfidentialCredits: bool(b, 262),
      pendingBalanceCreditCounter: u64(b, 263),
      maximumPendingBalanceCreditCounter: u64(b, 271),
      expectedPendingBalanceCreditCounter: u64(b, 279),
      actualPendingBalanceCreditCounter: u64(b, 287),
    }),
  },
  6: {
    size: 1,
    name: "defaultAccountState",
    // spl-token-2022 maps an out-of-range state byte to the default (uninitialized).
    state: (b) => ({ accountState: ACCOUNT_STATES[b[0]] ?? "uninitialized" }),
  },
  7: { size: 0, name: "immutableOwner" },
  8: { size: 1, name: "memoTransfer", state: (b) => ({ requireIncomingTransferMemos: bool(b, 0) }) },
  9: { size: 0, name: "nonTransferable" },
  10: {
    size: 52,
    name: "interestBearingConfig",
    state: (b) => ({
      rateAuthority: optionalKey(b, 0),
      initializationTimestamp: i64(b, 32),
      preUpdateAverageRate: view(b).getInt16(40, true),
      lastUpdateTimestamp: i64(b, 42),
      currentRate: view(b).getInt16(50, true),
    }),
  },
  11: { size: 1, name: "cpiGuard", state: (b) => ({ lockCpi: bool(b, 0) }) },
  12: { size: 32, name: "permanentDelegate", state: (b) => ({ delegate: optionalKey(b, 0) }) },
  13: { size: 0, name: "nonTransferableAccount" },
  14: {
    size: 64,
    name: "transferHook",
    state: (b) => ({ authority: optionalKey(b, 0), programId: optionalKey(b, 32) }),
  },
  15: { size: 1, name: "transferHookAccount", state: (b) => ({ transferring: bool(b, 0) }) },
  16: {
    size: 129,
    name: "confidentialTransferFeeConfig",
    state: (b) => ({
      authority: optionalKey(b, 0),
      withdrawWithheldAuthorityElgamalPubkey: optionalElGamal(b, 32),
      harvestToMintEnabled: bool(b, 64),
      withheldAmount: pod(b, 65, 64),
    }),
  },
  17: { size: 64, name: "confidentialTransferFeeAmount", state: (b) => ({ withheldAmount: pod(b, 0, 64) }) },
  18: {
    size: 64,
    name: "metadataPointer",
    state: (b) => ({ authority: optionalKey(b, 0), metadataAddress: optionalKey(b, 32) }),
  },
  19: { size: "variable", name: "tokenMetadata", state: tokenMetadata },
  20: {
    size: 64,
    name: "groupPointer",
    state: (b) => ({ authority: optionalKey(b, 0), groupAddress: optionalKey(b, 32) }),
  },
  21: {
    size: 80,
    name: "tokenGroup",
    state: (b) => ({
      updateAuthority: optionalKey(b, 0),
      mint: encodeBase58(b.subarray(32, 64)),
      size: u64(b, 64),
      maxSize: u64(b, 72),
    }),
  },
  22: {
    size: 64,
    name: "groupMemberPointer",
    state: (b) => ({ authority: optionalKey(b, 0), memberAddress: optionalKey(b, 32) }),
  },
  23: {
    size: 72,
    name: "tokenGroupMember",
    state: (b) => ({
      mint: encodeBase58(b.subarray(0, 32)),
      group: encodeBase58(b.subarray(32, 64)),
      memberNumber: u64(b, 64),
    }),
  },
  24: {
    size: 196,
    name: "confidentialMintBurn",
    state: (b) => ({
      confidentialSupply: pod(b, 0, 64),
      decryptableSupply: pod(b, 64, 36),
      supplyElgamalPubkey: pod(b, 100, 32),
    }),
  },
  25: {
    size: 56,
    name: "scaledUiAmountConfig",
    state: (b) => ({
      authority: optionalKey(b, 0),
      multiplier: rustF64(view(b).getFloat64(32, true)),
      newMultiplierEffectiveTimestamp: i64(b, 40),
      newMultiplier: rustF64(view(b).getFloat64(48, true)),
    }),
  },
  26: { size: 33, name: "pausableConfig", state: (b) => ({ authority: optionalKey(b, 0), paused: bool(b, 32) }) },
  27: { size: 0, name: "pausableAccount" },
  // spl-token-2022-interface 3.1, parsed by agave 4.4's account decoder (UiPermissionedBurnConfig).
  28: { size: 32, name: "permissionedBurnConfig", state: (b) => ({ authority: optionalKey(b, 0) }) },
};

/** Converts one TLV entry to its jsonParsed form. */
export function uiExtension(entry: TlvEntry): UiExtension {
  const decoder = DECODERS[entry.type];
  if (decoder === undefined) return { extension: "unparseableExtension" };
  if (decoder.size !== "variable" && entry.value.length !== decoder.size) return { extension: "unparseableExtension" };
  if (decoder.state === undefined) return { extension: decoder.name };
  try {
    return { extension: decoder.name, state: decoder.state(entry.value) };
  } catch {
    return { extension: "unparseableExtension" };
  }
}
