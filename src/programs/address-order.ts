/**
 * Address order = the order of the 32 bytes read as a big-endian number (the order of Solana's
 * `Pubkey`), computed on the base58 strings without decoding them. The base58 alphabet is in ASCII
 * order and '1' is the digit zero, so once leading '1's are stripped, a shorter string is a smaller
 * number and equal lengths compare as plain strings.
 */

/** Negative, zero or positive as `a` sorts before, with or after `b`. */
export function compareAddresses(a: string, b: string): number {
  const za = leadingOnes(a);
  const zb = leadingOnes(b);
  const la = a.length - za;
  const lb = b.length - zb;
  if (la !== lb) return la - lb;
  for (let i = 0; i < la; i++) {
    const d = a.charCodeAt(za + i) - b.charCodeAt(zb + i);
    if (d !== 0) return d;
  }
  return 0;
}

/** Sorts addresses in place into address order. */
export function sortAddresses(addresses: string[]): string[] {
  return addresses.sort(compareAddresses);
}

/** Index of the first address in `sorted` strictly after `address` (sorted.length if none). */
export function indexAfter(sorted: readonly string[], address: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareAddresses(sorted[mid], address) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

function leadingOnes(s: string): number {
  let i = 0;
  while (i < s.length && s.charCodeAt(i) === 49 /* '1' */) i++;
  return i;
}
