/**
 * Jito tips in a block's transactions: the lamports of top-level System transfers (src/solana/jito-tips.ts
 * says which) to one of Jito's tip accounts named as a static key (what a block engine counts as a bundle's tip; a tip through a lookup
 * table or a CPI is not seen). A byte walk over the wire message, like block-transactions.ts' scan, so that
 * a mainnet block's ~1,500 transactions cost no full decode; only a transfer's destination is compared.
 */
import { getShortU16Decoder } from "@solana/kit";
import { JITO_TIP_ACCOUNT_KEYS } from "../solana/jito-tip-accounts.ts";
import { isSystemProgramKey, transferDestinationPosition, transferLamports } from "../solana/jito-tips.ts";
import { KEY_BYTES, keyEqualsAt, SIGNATURE_BYTES } from "../solana/wire-bytes.ts";
const shortU16 = getShortU16Decoder();

/** Reads a compact-u16 at `at`: [value, next offset], or undefined when the bytes end first. */
function shortVecAt(wire: Uint8Array, at: number): [number, number] | undefined {
  if (at >= wire.length) return undefined;
  try {
    return shortU16.read(wire, at);
  } catch {
    return undefined;
  }
}

/**
 * The lamports a wire transaction (legacy or v0) tips Jito's tip accounts; 0 when none, or when the bytes
 * do not walk (truncated or inconsistent: the price scan counts those).
 */
export function tipOfWire(wire: Uint8Array): bigint {
  let read = shortVecAt(wire, 0);
  if (read === undefined) return 0n;
  let at = read[1] + read[0] * SIGNATURE_BYTES;
  if ((wire[at] ?? 0) & 0x80) at++; // version prefix
  at += 3; // header
  read = shortVecAt(wire, at);
  if (read === undefined) return 0n;
  const [keyCount, keysAt] = read;
  at = keysAt + keyCount * KEY_BYTES + KEY_BYTES; // keys, then the recent blockhash
  read = shortVecAt(wire, at);
  if (read === undefined) return 0n;
  const [instructions] = read;
  at = read[1];
  let tip = 0n;
  for (let i = 0; i < instructions; i++) {
    const program = wire[at];
    if (program === undefined || program >= keyCount) return 0n;
    const accounts = shortVecAt(wire, at + 1);
    if (accounts === undefined) return 0n;
    const accountsAt = accounts[1];
    const data = shortVecAt(wire, accountsAt + accounts[0]);
    if (data === undefined || data[1] + data[0] > wire.length) return 0n;
    const dataAt = data[1];
    const position = transferDestinationPosition(wire, dataAt, data[0], accounts[0]);
    if (position >= 0 && isSystemProgramKey(wire, keysAt + program * KEY_BYTES)) {
      const destination = wire[accountsAt + position]!;
      // An index past the static keys is an account from a lookup table: not a tip Jito counts.
      if (
        destination < keyCount &&
        JITO_TIP_ACCOUNT_KEYS.some((key) => keyEqualsAt(wire, keysAt + destination * KEY_BYTES, key))
      )
        tip += transferLamports(wire, dataAt);
    }
    at = dataAt + data[0];
  }
  return tip;
}
