/**
 * Program addresses the world refers to, as base58 and as raw bytes, and the PDAs real clients
 * derive from them (so a wallet or SDK finds seeded accounts where it would look on mainnet).
 */
import bs58 from "bs58";
import { findProgramAddressSync, type KeyBytes } from "./pda.ts";
import {
  ASSOCIATED_TOKEN_PROGRAM,
  BUBBLEGUM_PROGRAM,
  TOKEN_METADATA_PROGRAM,
  TOKEN_PROGRAM,
} from "../accounts/program-ids.ts";

// The ids themselves are in the one table (accounts/program-ids.ts); the world's modules take them from here too.
export {
  ASSOCIATED_TOKEN_PROGRAM,
  BUBBLEGUM_PROGRAM,
  SYSTEM_PROGRAM,
  TOKEN_METADATA_PROGRAM,
  TOKEN_PROGRAM,
} from "../accounts/program-ids.ts";

const TOKEN_BYTES = bs58.decode(TOKEN_PROGRAM);
const ATA_BYTES = bs58.decode(ASSOCIATED_TOKEN_PROGRAM);
const METADATA_BYTES = bs58.decode(TOKEN_METADATA_PROGRAM);
const BUBBLEGUM_BYTES = bs58.decode(BUBBLEGUM_PROGRAM);
const METADATA_SEED = Buffer.from("metadata");
const EDITION_SEED = Buffer.from("edition");
const ASSET_SEED = Buffer.from("asset");

/** Token Metadata account of a mint: PDA ["metadata", program, mint]. */
export function metadataAddress(mint: KeyBytes): KeyBytes {
  return findProgramAddressSync([METADATA_SEED, METADATA_BYTES, mint], METADATA_BYTES)[0];
}

/** Master edition PDA ["metadata", program, mint, "edition"] and its bump (the metadata's edition_nonce). */
export function masterEditionAddress(mint: KeyBytes): [KeyBytes, number] {
  return findProgramAddressSync([METADATA_SEED, METADATA_BYTES, mint, EDITION_SEED], METADATA_BYTES);
}

/** Associated token account of (wallet, mint) under the classic Token program. */
export function associatedTokenAddress(wallet: KeyBytes, mint: KeyBytes): KeyBytes {
  return findProgramAddressSync([wallet, TOKEN_BYTES, mint], ATA_BYTES)[0];
}

/** Bubblegum asset id of the leaf `index` of `tree`: PDA ["asset", tree, index u64 LE]. */
export function compressedAssetId(tree: KeyBytes, index: number): KeyBytes {
  const nonce = Buffer.alloc(8);
  nonce.writeBigUInt64LE(BigInt(index));
  return findProgramAddressSync([ASSET_SEED, tree, nonce], BUBBLEGUM_BYTES)[0];
}
