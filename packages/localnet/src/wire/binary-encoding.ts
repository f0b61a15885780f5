/**
 * Strict base58 / base64 decoding with agave's limits and wording.
 *
 * Node's `Buffer.from(s, "base64")` silently skips characters it does not know; agave's decoder
 * refuses them. A byte string that a node would refuse must never reach LiteSVM, so decoding here
 * is strict: the input must be canonical (decode, re-encode, compare).
 */
import bs58 from "bs58";
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

function base64ErrorDetail(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const ok = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
    if (!ok && !(c === 61 && i >= text.length - 2)) return `InvalidByte(${i}, ${c})`;
  }
  if (text.length % 4 !== 0) return `InvalidLength(${text.length})`;
  return `InvalidLastSymbol(${Math.max(0, text.length - 1)}, ${text.charCodeAt(text.length - 1) || 0})`;
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
