/**
 * What counts as a Jito tip, the one definition the fee market's block scans (src/fees/block-tips.ts,
 * src/fees/geyser-block.ts) and the bundle checks (src/transactions/bundles.ts) share, and the localnet's
 * (packages/localnet/src/chain/bundles.ts, `staticTip`): a top-level System program Transfer (instruction 2,
 * destination the second account) or TransferWithSeed (instruction 11, destination the third account), both
 * with the lamports as a u64 right after the u32 index. Whether the destination is a tip account is the
 * caller's to compare (a static key, a base58 address, or one loaded from a lookup table).
 */
import { KEY_BYTES } from "./wire-bytes.ts";

/** The least System instruction data that carries lamports: u32 instruction index, then u64 lamports. */
export const TRANSFER_DATA_BYTES = 12;
const TRANSFER = 2;
/** Bytes read in place: a Uint8Array, or kit's read-only one. */
type Bytes = ArrayLike<number> & { readonly buffer: ArrayBufferLike; readonly byteOffset: number };
const TRANSFER_WITH_SEED = 11;

/**
 * Where the destination sits among a System instruction's accounts when it moves lamports (Transfer: 1,
 * TransferWithSeed: 2); -1 when it does not, or lists too few accounts. Reads `bytes` in place from `dataAt`
 * (`dataLength` bytes), so a byte walk over a block costs no copy.
 */
export function transferDestinationPosition(
  bytes: Bytes,
  dataAt: number,
  dataLength: number,
  accountCount: number,
): number {
  if (dataLength < TRANSFER_DATA_BYTES || bytes[dataAt + 1] !== 0 || bytes[dataAt + 2] !== 0 || bytes[dataAt + 3] !== 0)
    return -1;
  const kind = bytes[dataAt];
  const position = kind === TRANSFER ? 1 : kind === TRANSFER_WITH_SEED ? 2 : -1;
  return position >= 0 && position < accountCount ? position : -1;
}

/** The lamports of a transfer whose data starts at `dataAt` (after {@link transferDestinationPosition} said yes). */
export function transferLamports(bytes: Bytes, dataAt: number): bigint {
  return Buffer.from(bytes.buffer, bytes.byteOffset + dataAt + 4, 8).readBigUInt64LE(0);
}

/** Whether the 32 bytes at `at` are the System program's key (all zero). */
export function isSystemProgramKey(bytes: Uint8Array, at: number): boolean {
  for (let i = 0; i < KEY_BYTES; i++) if (bytes[at + i] !== 0) return false;
  return true;
}
