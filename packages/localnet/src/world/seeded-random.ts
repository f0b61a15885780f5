/**
 * Determinism for the world and the traffic: a small seeded PRNG, addresses derived from
 * (seed, label, index), and ed25519 keypairs derived the same way.
 *
 * Derived values depend only on their own label and index, never on how many values were drawn
 * before, so changing one size (e.g. fewer token holders) leaves every other address unchanged.
 */
import { createHash, createPrivateKey, createPublicKey, hash, type KeyObject } from "node:crypto";
import bs58 from "bs58";
import type { KeyBytes } from "./pda.ts";

/** A deterministic source of numbers. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Standard normal (Box-Muller). */
  normal(): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
}

/** sfc32 seeded from SHA-256 of the seed text: fast, 128-bit state, good enough statistics. */
export function createRandom(seed: string): Random {
  const h = createHash("sha256").update(seed).digest();
  let a = h.readUInt32LE(0);
  let b = h.readUInt32LE(4);
  let c = h.readUInt32LE(8);
  let d = h.readUInt32LE(12);
  const next = (): number => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return {
    next,
    int: (n) => Math.floor(next() * n),
    normal: () => {
      const u = 1 - next();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
    },
    pick: (items) => items[Math.floor(next() * items.length)],
  };
}

/** 32 bytes derived from (seed, label, index): used as an address nobody holds a key for. */
export function deriveKey(seed: string, label: string, index = 0): KeyBytes {
  // A Buffer is a Uint8Array; no copy needed.
  return hash("sha256", `solgate-world/${seed}/${label}/${index}`, "buffer");
}

/** A keypair someone (the demo user, the traffic generator) signs with. */
export interface SeededKeypair {
  /** Base58 public key. */
  address: string;
  publicKey: KeyBytes;
  /** The 32-byte ed25519 seed (solana-cli's "secret key" is seed followed by public key). */
  secretSeed: Uint8Array;
  /** A node:crypto private key for fast synchronous signing. */
  privateKey: KeyObject;
}

// PKCS#8 wrapper for a raw ed25519 seed (RFC 8410): node:crypto imports seeds only this way.
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** Ed25519 keypair from a 32-byte seed. */
export function keypairFromSeed(secretSeed: Uint8Array): SeededKeypair {
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, secretSeed]),
    format: "der",
    type: "pkcs8",
  });
  const jwk = createPublicKey(privateKey).export({ format: "jwk" });
  const publicKey = new Uint8Array(Buffer.from(jwk.x as string, "base64url"));
  return { address: bs58.encode(publicKey), publicKey, secretSeed, privateKey };
}

/** Keypair derived from (seed, label, index). */
export function deriveKeypair(seed: string, label: string, index = 0): SeededKeypair {
  return keypairFromSeed(deriveKey(seed, `keypair/${label}`, index));
}

/** solana-cli keypair file contents: a JSON array of the 64 bytes seed ‖ public key. */
export function solanaCliKeypairJson(keypair: SeededKeypair): string {
  return JSON.stringify([...keypair.secretSeed, ...keypair.publicKey]);
}
