/**
 * Strict base58 / base64 decoding with agave's limits and wording.
 *
 * Node's `Buffer.from(s, "base64")` silently skips characters it does not know; agave's decoder
 * refuses them. A byte string that a node would refuse must never reach LiteSVM, so decoding here
 * is strict: the input must be canonical (decode, re-encode, compare).
 */
import bs58 from "bs58";
import { base64ErrorText } from "../accounts/base64.ts";
import { invalidParams } from "../rpc/protocol.ts";

/** Largest wire transaction a node accepts (PACKET_DATA_SIZE). */
export const PACKET_DATA_SIZE = 1232;
/** Longest base58 transaction string agave accepts before decoding. */
export const MAX_BASE58_SIZE = 1683;
/** Longest base64 transaction string agave accepts before decoding. */
export const MAX_BASE64_SIZE = 1644;

/** Binary encodings a transaction may arrive in. */
export type BinaryEncoding = "base58" | "base64";

const BASE64_ALPHABET = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes standard padded base64, refusing anything a strict decoder would refuse; null when invalid. */
export function decodeBase64Strict(text: string): Uint8Array | null {
  if (text.length % 4 !== 0 || !BASE64_ALPHABET.test(text)) return null;
  const bytes = Buffer.from(text, "base64");
  // Non-zero trailing bits or misplaced padding survive Buffer's decoder; the round trip catches them.
  if (bytes.toString("base64") !== text) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes base58 (Bitcoin alphabet); null when invalid. */
export function decodeBase58Strict(text: string): Uint8Array | null {
  try {
    return bs58.decode(text);
  } catch {
    return null;
  }
}

const PAD = 61; // "="

function base64Value(c: number): number {
  if (c >= 65 && c <= 90) return c - 65;
  if (c >= 97 && c <= 122) return c - 71;
  if (c >= 48 && c <= 57) return c + 4;
  if (c === 43) return 62;
  if (c === 47) return 63;
  return -1;
}

/**
 * The `Debug` text of the error the Rust `base64` crate (0.23 as in agave 4.4, STANDARD engine:
 * canonical padding, no trailing bits) gives for input it refuses, which agave puts after "invalid
 * base64 encoding: " (worded by {@link base64ErrorText}).
 * Same checks in the same order: a trailing invalid byte when the length is 1 mod 4, the bytes of
 * the complete quads before the last, then the last quad's padding, length, padding count and
 * trailing bits. Only called for input the strict decoder refused.
 */
export function base64ErrorDetail(text: string): string {
  // The crate reads bytes: a non-ASCII character is several, and indices count them.
  const input = Buffer.from(text, "utf8");
  const length = input.length;
  const rem = length % 4;
  if (rem === 1) {
    const last = input[length - 1]!;
    if (last !== PAD && base64Value(last) < 0) return base64ErrorText.invalidByte(length - 1, last);
  }
  const body = Math.max(0, length - rem - (rem === 0 ? 4 : 0));
  for (let i = 0; i < body; i++) {
    const c = input[i]!;
    if (base64Value(c) < 0) return base64ErrorText.invalidByte(i, c);
  }
  let morsels = 0;
  let padding = 0;
  let firstPad = 0;
  let lastSymbol = 0;
  const values: number[] = [];
  for (let i = body; i < length; i++) {
    const c = input[i]!;
    if (c === PAD) {
      if (i - body < 2) return base64ErrorText.invalidByte(i, PAD);
      if (padding === 0) firstPad = i - body;
      padding++;
      continue;
    }
    if (padding > 0) return base64ErrorText.invalidByte(body + firstPad, PAD);
    lastSymbol = c;
    const value = base64Value(c);
    if (value < 0) return base64ErrorText.invalidByte(i, c);
    values.push(value);
    morsels++;
  }
  if (length > 0 && morsels < 2) return base64ErrorText.invalidLength(body + morsels);
  if ((padding + morsels) % 4 !== 0) return base64ErrorText.invalidPadding();
  const bytes = Math.floor((morsels * 6) / 8);
  let bits = 0;
  for (let i = 0; i < 4; i++) bits = bits * 64 + (values[i] ?? 0);
  const unused = 24 - bytes * 8; // bits of the 24 the symbols carry beyond the decoded bytes
  if (unused > 0 && bits % 2 ** unused !== 0) return base64ErrorText.invalidLastSymbol(body + morsels - 1, lastSymbol);
  return base64ErrorText.invalidPadding();
}

function base58ErrorDetail(text: string): string {
  const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  for (let i = 0; i < text.length; i++) {
    if (!alphabet.includes(text[i]!)) return `InvalidCharacter { character: '${text[i]}', index: ${i} }`;
  }
  return "BufferTooSmall";
}

/**
 * Decodes a transaction-sized payload the way agave's `decode_and_deserialize` does before
 * deserializing: size checks on the text, strict decoding, size check on the bytes.
 * Throws `-32602` with agave's message on failure.
 */
export function decodeWirePayload(encoded: string, encoding: BinaryEncoding, typeName: string): Uint8Array {
  let bytes: Uint8Array | null;
  if (encoding === "base58") {
    if (encoded.length > MAX_BASE58_SIZE) {
      throw invalidParams(
        `base58 encoded ${typeName} too large: ${encoded.length} bytes (max: encoded/raw ${MAX_BASE58_SIZE}/${PACKET_DATA_SIZE})`,
      );
    }
    bytes = decodeBase58Strict(encoded);
    if (bytes === null) throw invalidParams(`invalid base58 encoding: ${base58ErrorDetail(encoded)}`);
  } else {
    if (encoded.length > MAX_BASE64_SIZE) {
      throw invalidParams(
        `base64 encoded ${typeName} too large: ${encoded.length} bytes (max: encoded/raw ${MAX_BASE64_SIZE}/${PACKET_DATA_SIZE})`,
      );
    }
    bytes = decodeBase64Strict(encoded);
    if (bytes === null) throw invalidParams(`invalid base64 encoding: ${base64ErrorDetail(encoded)}`);
  }
  if (bytes.length > PACKET_DATA_SIZE) {
    throw invalidParams(`decoded ${typeName} too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`);
  }
  return bytes;
}
