/**
 * Strict base64 decoding as agave's `BASE64_STANDARD` engine does it (canonical padding required,
 * no stray trailing bits). Node's own decoder silently skips bad characters, which would let a
 * malformed memcmp filter match bytes the client never meant.
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const VALUE = new Int16Array(256).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i;
const PAD = 0x3d;

/** A decode failure worded as the `base64` crate's `DecodeError` Debug output. */
export class Base64DecodeError extends Error {}

/**
 * The `base64` crate's `DecodeError` as agave 4.4 prints it (`{:?}`): base64 0.23, whose Debug is
 * its Display ("Invalid symbol 33, offset 3.", "Invalid input length: 5", "Invalid last symbol
 * 0x42 ('B') at offset 2, decoded as 0b00000001.", "Invalid padding"; 0.22, under agave 3.0,
 * printed the variants: InvalidByte(3, 33) and so on).
 */
export const base64ErrorText = {
  invalidByte: (offset: number, byte: number) => `Invalid symbol ${byte}, offset ${offset}.`,
  invalidLength: (length: number) => `Invalid input length: ${length}`,
  invalidLastSymbol: (offset: number, symbol: number) =>
    `Invalid last symbol 0x${symbol.toString(16).padStart(2, "0")} ('${String.fromCharCode(symbol)}') at offset ${offset}, decoded as 0b${VALUE[symbol]!.toString(2).padStart(8, "0")}.`,
  invalidPadding: () => "Invalid padding",
};

/**
 * Decodes standard, padded base64; throws {@link Base64DecodeError} (worded by
 * {@link base64ErrorText}) on anything non-canonical.
 */
export function decodeBase64Strict(text: string): Uint8Array {
  const bytes = Buffer.from(text, "utf8");
  let symbols = bytes.length;
  while (symbols > 0 && bytes[symbols - 1] === PAD) symbols--;
  for (let i = 0; i < symbols; i++) {
    if (VALUE[bytes[i]] < 0) throw new Base64DecodeError(base64ErrorText.invalidByte(i, bytes[i]!));
  }
  const padding = bytes.length - symbols;
  if (symbols % 4 === 1) throw new Base64DecodeError(base64ErrorText.invalidLength(symbols));
  const expectedPadding = (4 - (symbols % 4)) % 4;
  if (padding !== expectedPadding) {
    if (padding > 2) throw new Base64DecodeError(base64ErrorText.invalidByte(symbols + 2, PAD));
    throw new Base64DecodeError(base64ErrorText.invalidPadding());
  }
  const last = symbols - 1;
  if (last >= 0) {
    const value = VALUE[bytes[last]];
    const leftover = symbols % 4;
    // 2 symbols carry 12 bits for 1 byte (4 spare), 3 symbols carry 18 bits for 2 bytes (2 spare).
    const spareMask = leftover === 2 ? 0x0f : leftover === 3 ? 0x03 : 0;
    if ((value & spareMask) !== 0) throw new Base64DecodeError(base64ErrorText.invalidLastSymbol(last, bytes[last]!));
  }
  return new Uint8Array(Buffer.from(text, "base64"));
}
