/** Sizes on Solana's wire, and the key comparison the byte walks over blocks share. */

/** An ed25519 public key (an account address). */
export const KEY_BYTES = 32;
/** An ed25519 signature. */
export const SIGNATURE_BYTES = 64;

/** Whether the 32 bytes at `at` in `bytes` are `key`, compared in place (no copy, no base58). */
export function keyEqualsAt(bytes: Uint8Array, at: number, key: Uint8Array): boolean {
  for (let i = 0; i < KEY_BYTES; i++) if (bytes[at + i] !== key[i]) return false;
  return true;
}
