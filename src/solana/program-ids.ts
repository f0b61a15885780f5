/**
 * The on-chain programs Solgate names, by address: the one table of program ids. (The localnet, a
 * package of its own, keeps its own table: packages/localnet/src/accounts/program-ids.ts.)
 */
import type { Address } from "@solana/kit";

/** The System program. */
export const SYSTEM_PROGRAM = "11111111111111111111111111111111" as Address;
/** The Compute Budget program. */
export const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111" as Address;
/** The Address Lookup Table program. */
export const ADDRESS_LOOKUP_TABLE_PROGRAM = "AddressLookupTab1e1111111111111111111111111" as Address;
/** The Vote program. */
export const VOTE_PROGRAM = "Vote111111111111111111111111111111111111111" as Address;
/** SPL Token. */
export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" as Address;
/** SPL Token-2022. */
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb" as Address;
/** Metaplex Token Metadata. */
export const TOKEN_METADATA_PROGRAM = "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s" as Address;

/** Programs the runtime runs natively (builtins); their instructions get the small compute allowance. */
export const BUILTIN_PROGRAMS: ReadonlySet<string> = new Set([
  SYSTEM_PROGRAM,
  COMPUTE_BUDGET_PROGRAM,
  ADDRESS_LOOKUP_TABLE_PROGRAM,
  VOTE_PROGRAM,
  "Stake11111111111111111111111111111111111111",
  "Config1111111111111111111111111111111111111",
  "BPFLoader1111111111111111111111111111111111",
  "BPFLoader2111111111111111111111111111111111",
  "BPFLoaderUpgradeab1e11111111111111111111111",
  "LoaderV411111111111111111111111111111111111",
  "Ed25519SigVerify111111111111111111111111111",
  "KeccakSecp256k11111111111111111111111111111",
  "Secp256r1SigVerify1111111111111111111111111",
]);
