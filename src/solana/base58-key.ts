/**
 * Base58 of 32-byte keys, for addresses that stay in memory. The common encoders build their output by
 * appending one character at a time, which leaves V8 holding a rope of ~45 string pieces per address:
 * measured here, about 1 KB each for `bs58.encode` against ~70 B for a flat string. The fee window keeps
 * up to 100,000 addresses, so this one writes the digits into a byte buffer and makes one flat string.
 * It divides the 256-bit number by 58^5 at a time over 16-bit limbs (remainder * 2^16 + limb < 2^53,
 * so doubles stay exact), which also makes it faster than bs58.
 *
 * The gateway's one base58 encoder of keys (bs58 still decodes, and encodes other lengths). The localnet
 * package has its own (packages/localnet/src/accounts/base58.ts): the gateway must run without the
 * localnet installed, and the localnet must not reach into the gateway's sources.
 */

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const DIVISOR = 58 ** 5;
// Scratch space, reused: encoding is synchronous and never re-entered.
const limbs = new Uint32Array(16);
const digits = new Uint8Array(50);
const chars = Buffer.alloc(64);

/** The base58 text of the 32 bytes at `bytes[offset]`, as a flat string. */
export function base58OfKey(bytes: Uint8Array, offset = 0): string {
  if (offset < 0 || offset + 32 > bytes.length) throw new RangeError("a key is 32 bytes");
  let zeros = 0;
  while (zeros < 32 && bytes[offset + zeros] === 0) zeros++;
  for (let i = 0; i < 16; i++) limbs[i] = (bytes[offset + 2 * i] << 8) | bytes[offset + 2 * i + 1];
  let count = 0;
  let start = zeros >> 1; // leading zero limbs need no division
  while (start < 16) {
    let remainder = 0;
    for (let i = start; i < 16; i++) {
      const value = remainder * 65536 + limbs[i];
      const quotient = Math.floor(value / DIVISOR);
      remainder = value - quotient * DIVISOR;
      limbs[i] = quotient;
    }
    while (start < 16 && limbs[start] === 0) start++;
    for (let d = 0; d < 5; d++) {
      digits[count++] = remainder % 58;
      remainder = Math.floor(remainder / 58);
    }
  }
  // The last group of five may carry leading zero digits that are not part of the number.
  while (count > 0 && digits[count - 1] === 0) count--;
  let length = 0;
  for (let i = 0; i < zeros; i++) chars[length++] = 49; // "1" per leading zero byte
  for (let i = count - 1; i >= 0; i--) chars[length++] = CODES[digits[i]];
  // Native latin1 decoding makes one flat string in one step (String.fromCharCode costs 5x more).
  return chars.toString("latin1", 0, length);
}
