/**
 * SPL Token mint (82 B) and token account (165 B) layouts, written and read at fixed offsets.
 *
 * Why not `@solana-program/token`'s codecs: they take base58 addresses and cost ~55 µs per token
 * account here; seeding 110k accounts needs raw bytes in and out. Tests check these against that
 * package's decoders and against real mainnet accounts.
 */
import type { KeyBytes } from "./pda.ts";

export const MINT_SIZE = 82;
export const TOKEN_ACCOUNT_SIZE = 165;
/** Rent-exempt minimums at 3,480 lamports per byte-year over 2 years (what mainnet accounts hold). */
export const MINT_RENT_LAMPORTS = 1_461_600n;
export const TOKEN_ACCOUNT_RENT_LAMPORTS = 2_039_280n;

/** Token account `state`. */
export const TokenAccountState = { Uninitialized: 0, Initialized: 1, Frozen: 2 } as const;

export interface MintFields {
  mintAuthority: KeyBytes | null;
  supply: bigint;
  decimals: number;
  freezeAuthority: KeyBytes | null;
}

export interface TokenAccountFields {
  mint: KeyBytes;
  owner: KeyBytes;
  amount: bigint;
  delegate: KeyBytes | null;
  state: number;
  delegatedAmount: bigint;
  closeAuthority: KeyBytes | null;
}

function writeCOptionKey(out: Uint8Array, view: DataView, offset: number, key: KeyBytes | null): void {
  if (key === null) return;
  view.setUint32(offset, 1, true);
  out.set(key, offset + 4);
}

function readCOptionKey(data: Uint8Array, view: DataView, offset: number): KeyBytes | null {
  return view.getUint32(offset, true) === 1 ? data.slice(offset + 4, offset + 36) : null;
}

/** Encodes an initialized mint. */
export function encodeMint(fields: MintFields): Uint8Array {
  const out = new Uint8Array(MINT_SIZE);
  const view = new DataView(out.buffer);
  writeCOptionKey(out, view, 0, fields.mintAuthority);
  view.setBigUint64(36, fields.supply, true);
  out[44] = fields.decimals;
  out[45] = 1;
  writeCOptionKey(out, view, 46, fields.freezeAuthority);
  return out;
}

/** Decodes a mint; null when the bytes are not an initialized 82-byte mint. */
export function decodeMint(data: Uint8Array): MintFields | null {
  if (data.length !== MINT_SIZE || data[45] !== 1) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return {
    mintAuthority: readCOptionKey(data, view, 0),
    supply: view.getBigUint64(36, true),
    decimals: data[44],
    freezeAuthority: readCOptionKey(data, view, 46),
  };
}

/** Encodes a (non-native) token account. */
export function encodeTokenAccount(fields: TokenAccountFields): Uint8Array {
  const out = new Uint8Array(TOKEN_ACCOUNT_SIZE);
  const view = new DataView(out.buffer);
  out.set(fields.mint, 0);
  out.set(fields.owner, 32);
  view.setBigUint64(64, fields.amount, true);
  writeCOptionKey(out, view, 72, fields.delegate);
  out[108] = fields.state;
  view.setBigUint64(121, fields.delegatedAmount, true);
  writeCOptionKey(out, view, 129, fields.closeAuthority);
  return out;
}

/** Decodes a token account; null when the bytes are not an initialized 165-byte token account. */
export function decodeTokenAccount(data: Uint8Array): TokenAccountFields | null {
  if (data.length !== TOKEN_ACCOUNT_SIZE || data[108] === TokenAccountState.Uninitialized || data[108] > 2) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return {
    mint: data.slice(0, 32),
    owner: data.slice(32, 64),
    amount: view.getBigUint64(64, true),
    delegate: readCOptionKey(data, view, 72),
    state: data[108],
    delegatedAmount: view.getBigUint64(121, true),
    closeAuthority: readCOptionKey(data, view, 129),
  };
}
