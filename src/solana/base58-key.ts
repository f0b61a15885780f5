/**
/**
 * Base58 of 32-byte keys, for addresses that stay in memory. The common encoders build their output by
 * appending one character at a time, which leaves V8 holding a rope of ~45 string pieces per address:
 * measured here, about 1 KB each for `bs58.encode` against ~70 B for a flat string. The fee window keeps
 * up to 100,000 addresses, so this one writes the digits into a byte buffer and makes one flat string.
 *
 * Listing a mint's 100,000 holders encodes 100,000 owners, so it is also built for speed: no long
 * division. The key is read as 16 limbs of 16 bits; each limb's weight 2^(16 * (15 - i)) is known
 * ahead in base 58^5 (a table of 16 x 9 digits), so the number's base-58^5 digits are sums of
 * limb x table digit (each sum < 16 * 2^16 * 58^5 < 2^53: doubles stay exact), followed by one carry
 * pass; each of the 9 digits then gives 5 base-58 characters. Measured (test/bench/base58-micro-bench.ts):
 * 4.5x faster than bs58.encode, where dividing the limbs by 58^5 over and over was 1.8x.
 *
 * The gateway's one base58 encoder of keys (bs58 still decodes, and encodes other lengths). The localnet
 * package has its own (packages/localnet/src/accounts/base58.ts): the gateway must run without the
 * localnet installed, and the localnet must not reach into the gateway's sources.
 */

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const BASE = 58 ** 5;
/** 2^256 < 58^45: nine base-58^5 digits hold any key. */
const GROUPS = 9;
/** WEIGHTS[i * GROUPS + j]: digit j (least significant first) of 2^(16 * (15 - i)) in base 58^5. */
const WEIGHTS = new Float64Array(16 * GROUPS);
/** SPANS[i]: how many of limb i's weight digits are not zero (the rest are skipped). */
const SPANS = new Uint8Array(16);
for (let i = 0; i < 16; i++) {
  let weight = 1n << BigInt(16 * (15 - i));
  for (let j = 0; j < GROUPS; j++) {
    WEIGHTS[i * GROUPS + j] = Number(weight % BigInt(BASE));
    weight /= BigInt(BASE);
    if (WEIGHTS[i * GROUPS + j] !== 0) SPANS[i] = j + 1;
  }
}
// Scratch space, reused: encoding is synchronous and never re-entered.
const groups = new Float64Array(GROUPS);
const digits = new Uint8Array(GROUPS * 5);
const chars = Buffer.alloc(64);

/** The base58 text of the 32 bytes at `bytes[offset]`, as a flat string. */
export function base58OfKey(bytes: Uint8Array, offset = 0): string {
  if (offset < 0 || offset + 32 > bytes.length) throw new RangeError("a key is 32 bytes");
  let zeros = 0;
  while (zeros < 32 && bytes[offset + zeros] === 0) zeros++;
  groups.fill(0);
  // Limbs of leading zero bytes add nothing.
  for (let i = zeros >> 1; i < 16; i++) {
    const limb = (bytes[offset + 2 * i] << 8) | bytes[offset + 2 * i + 1];
    const row = i * GROUPS;
    const span = SPANS[i];
    for (let j = 0; j < span; j++) groups[j] += limb * WEIGHTS[row + j];
  }
  let carry = 0;
  let count = 0;
  for (let j = 0; j < GROUPS; j++) {
    const value = groups[j] + carry;
    carry = Math.floor(value / BASE);
    let group = value - carry * BASE; // < 58^5 < 2^31: int arithmetic from here
    for (let d = 0; d < 5; d++) {
      const next = (group / 58) | 0;
      digits[count++] = group - next * 58;
      group = next;
    }
  }
  // The number's leading zero digits are not written; a "1" per leading zero byte is.
  while (count > 0 && digits[count - 1] === 0) count--;
  let length = 0;
  for (let i = 0; i < zeros; i++) chars[length++] = 49;
  for (let i = count - 1; i >= 0; i--) chars[length++] = CODES[digits[i]];
  // Native latin1 decoding makes one flat string in one step (String.fromCharCode costs 5x more).
  return chars.toString("latin1", 0, length);
}
