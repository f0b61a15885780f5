/**
 * agave's shred version (`solana_shred_version::compute_shred_version`): the genesis hash, extended
 * with each hard fork (a test validator has none), folded into 16 bits by XOR of its big-endian
 * 2-byte chunks, plus one (saturating) so it is never 0.
 */
import bs58 from "bs58";

/** The shred version of a chain with this genesis hash (base58) and no hard forks. */
export function shredVersionOf(genesisHash: string): number {
  const hash = bs58.decode(genesisHash);
  if (hash.length !== 32) throw new RangeError("a genesis hash is 32 bytes");
  let version = 0;
  for (let i = 0; i < 32; i += 2) version ^= (hash[i]! << 8) | hash[i + 1]!;
  return Math.min(version + 1, 0xffff);
}
