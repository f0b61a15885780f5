/** Well-known program and account addresses: the localnet's one table of them. */
import type { Address } from "@solana/kit";

export const SYSTEM_PROGRAM = "11111111111111111111111111111111" as Address;
export const SYSVAR_OWNER = "Sysvar1111111111111111111111111111111111111" as Address;
export const NATIVE_LOADER = "NativeLoader1111111111111111111111111111111" as Address;
export const BPF_LOADER_DEPRECATED = "BPFLoader1111111111111111111111111111111111" as Address;
export const BPF_LOADER = "BPFLoader2111111111111111111111111111111111" as Address;
export const BPF_LOADER_UPGRADEABLE = "BPFLoaderUpgradeab1e11111111111111111111111" as Address;
export const LOADER_V4 = "LoaderV411111111111111111111111111111111111" as Address;
export const STAKE_PROGRAM = "Stake11111111111111111111111111111111111111" as Address;
export const VOTE_PROGRAM = "Vote111111111111111111111111111111111111111" as Address;
export const CONFIG_PROGRAM = "Config1111111111111111111111111111111111111" as Address;
export const ADDRESS_LOOKUP_TABLE_PROGRAM = "AddressLookupTab1e1111111111111111111111111" as Address;
export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" as Address;
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb" as Address;
export const ASSOCIATED_TOKEN_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL" as Address;
export const TOKEN_METADATA_PROGRAM = "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s" as Address;
/** Bubblegum: compressed NFT asset ids are PDAs of this program over (tree, leaf index). */
export const BUBBLEGUM_PROGRAM = "BGUMAp9Gq7iTEuizy4pqaxsTyUCBK68MDfK752saRPUY" as Address;
/** Wrapped SOL; agave answers its decimals (9) without reading the account. */
export const NATIVE_MINT = "So11111111111111111111111111111111111111112" as Address;
export const NATIVE_MINT_DECIMALS = 9;

/** Whether an owner is one of the two SPL Token programs (agave's `is_known_spl_token_id`). */
export function isTokenProgram(owner: string): boolean {
  return owner === TOKEN_PROGRAM || owner === TOKEN_2022_PROGRAM;
}

/**
 * Owners whose accounts exist before any transaction runs (loaders, builtins, sysvars, SPL programs,
 * native mints): the index reads them from LiteSVM once at start, since LiteSVM cannot list accounts.
 */
export const GENESIS_OWNERS: readonly Address[] = [
  NATIVE_LOADER,
  BPF_LOADER_DEPRECATED,
  BPF_LOADER,
  BPF_LOADER_UPGRADEABLE,
  LOADER_V4,
  SYSVAR_OWNER,
  SYSTEM_PROGRAM,
  TOKEN_PROGRAM,
  TOKEN_2022_PROGRAM,
];

/**
 * Owners whose accounts change without a transaction the chain reports (sysvars move with the
 * clock): scans over them re-read LiteSVM instead of trusting the index's copies.
 */
export const VOLATILE_OWNERS: ReadonlySet<string> = new Set([SYSVAR_OWNER]);
