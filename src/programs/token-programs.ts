/** The SPL token programs, whose accounts Solgate returns decoded. */

/** SPL Token. */
export const TOKEN_PROGRAM_ID = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
/** SPL Token-2022. */
export const TOKEN_2022_PROGRAM_ID = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";

/** The `program` name a node's jsonParsed output gives each token program. */
export type TokenProgramName = "spl-token" | "spl-token-2022";

/** The token program's parser name, or undefined for any other program. */
export function tokenProgramName(programId: string): TokenProgramName | undefined {
  if (programId === TOKEN_PROGRAM_ID) return "spl-token";
  if (programId === TOKEN_2022_PROGRAM_ID) return "spl-token-2022";
  return undefined;
}

/**
 * Programs that own too many accounts to list without a `match` filter: hundreds of millions on
 * mainnet, almost all of one or two sizes, so a size filter alone does not narrow them either.
 */
export const DEFAULT_BROAD_PROGRAMS: readonly string[] = [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID];
