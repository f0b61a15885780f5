/**
 * Base58 as agave uses it at the RPC edge: pubkey parsing with agave's `ParsePubkeyError` outcomes,
 * and decoding with the `bs58` crate's error descriptions (they surface in -32602 messages).
 */
import bs58 from "bs58";
import type { Address } from "@solana/kit";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const IS_BASE58 = new Uint8Array(128);
for (const char of ALPHABET) IS_BASE58[char.charCodeAt(0)] = 1;

/** Longest base58 text of a 32-byte value (agave's `MAX_BASE58_LEN`). */
const MAX_PUBKEY_BASE58_LEN = 44;

/** A decode failure worded as the `bs58` crate's `Debug` output. */
export class Base58DecodeError extends Error {}

/** Rust's `Debug` rendering of a `char`. */
function rustDebugChar(char: string): string {
  if (char === "'") return "'\\''";
  if (char === "\\") return "'\\\\'";
  if (char === "\n") return "'\\n'";
  if (char === "\r") return "'\\r'";
  if (char === "\t") return "'\\t'";
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x20 || code === 0x7f) return `'\\u{${code.toString(16)}}'`;
  return `'${char}'`;
}

/**
 * Checks that text is base58; returns the `bs58` crate's error description for the first bad
 * character (indexes count UTF-8 bytes, as Rust does), or undefined when the text is valid.
 */
export function base58Problem(text: string): string | undefined {
  let byteIndex = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code > 0x7f) return `NonAsciiCharacter { index: ${byteIndex} }`;
    if (IS_BASE58[code] === 0) return `InvalidCharacter { character: ${rustDebugChar(char)}, index: ${byteIndex} }`;
    byteIndex += 1;
  }
  return undefined;
}

/** Decodes base58 text or throws {@link Base58DecodeError} with the crate's wording. */
export function decodeBase58(text: string): Uint8Array {
  const problem = base58Problem(text);
  if (problem !== undefined) throw new Base58DecodeError(problem);
  return bs58.decode(text);
}

const CHAR_CODES = Uint8Array.from(ALPHABET, (char) => char.charCodeAt(0));
const ONE = 0x31; // "1", the zero digit
const BASE58_POW5 = 58 ** 5;
const limbs = new Uint16Array(16);
const out = new Uint16Array(48);

/**
 * Base58 of exactly 32 bytes by long division over 16-bit limbs, five digits per pass (values stay
 * below 2^46, exact in doubles). About twice as fast as the generic `bs58` encoder, which matters
 * when a scan renders 100,000 owners and mints.
 */
function encodeBase58Key(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < 32 && bytes[zeros] === 0) zeros++;
  for (let i = 0; i < 16; i++) limbs[i] = (bytes[2 * i] << 8) | bytes[2 * i + 1];
  let at = out.length;
  let start = zeros >> 1;
  while (start < 16) {
    let remainder = 0;
    for (let i = start; i < 16; i++) {
      const value = remainder * 65536 + limbs[i];
      const quotient = Math.floor(value / BASE58_POW5);
      limbs[i] = quotient;
      remainder = value - quotient * BASE58_POW5;
    }
    for (let k = 0; k < 5; k++) {
      const quotient = Math.floor(remainder / 58);
      out[--at] = CHAR_CODES[remainder - quotient * 58];
      remainder = quotient;
    }
    while (start < 16 && limbs[start] === 0) start++;
  }
  while (at < out.length && out[at] === ONE) at++; // zero digits padded by the last pass
  for (let i = 0; i < zeros; i++) out[--at] = ONE; // each leading zero byte is one "1"
  return String.fromCharCode.apply(null, out.subarray(at) as unknown as number[]);
}

/** Encodes bytes as base58 text. */
export function encodeBase58(bytes: Uint8Array): string {
  return bytes.length === 32 ? encodeBase58Key(bytes) : bs58.encode(bytes);
}

/** Why a string is not a pubkey, in agave's `ParsePubkeyError` variant names. */
export type PubkeyProblem = "WrongSize" | "Invalid";

/** A parsed pubkey: the canonical text and the 32 bytes. */
export interface ParsedPubkey {
  readonly address: Address;
  readonly bytes: Uint8Array;
}

/**
 * Parses a pubkey exactly as agave's `Pubkey::from_str`: longer than 44 characters or decoding to
 * fewer than 32 bytes is `WrongSize`; a non-base58 character or more than 32 bytes is `Invalid`.
 */
export function parsePubkey(text: string): ParsedPubkey | PubkeyProblem {
  if (Buffer.byteLength(text, "utf8") > MAX_PUBKEY_BASE58_LEN) return "WrongSize";
  if (base58Problem(text) !== undefined) return "Invalid";
  const bytes = bs58.decode(text);
  if (bytes.length > 32) return "Invalid";
  if (bytes.length < 32) return "WrongSize";
  return { address: text as Address, bytes };
}

/** Whether a value is a parsed pubkey rather than a problem. */
export function isParsedPubkey(value: ParsedPubkey | PubkeyProblem): value is ParsedPubkey {
  return typeof value !== "string";
}
