/** The SPL token programs, whose accounts Solgate returns decoded. */
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../solana/program-ids.ts";

/** The `program` name a node's jsonParsed output gives each token program. */
export type TokenProgramName = "spl-token" | "spl-token-2022";

/** The token program's parser name, or undefined for any other program. */
export function tokenProgramName(programId: string): TokenProgramName | undefined {
  if (programId === TOKEN_PROGRAM) return "spl-token";
  if (programId === TOKEN_2022_PROGRAM) return "spl-token-2022";
  return undefined;
}

/**
 * Programs that own too many accounts to list without a `match` filter: hundreds of millions on
 * mainnet, almost all of one or two sizes, so a size filter alone does not narrow them either.
 */
export const DEFAULT_BROAD_PROGRAMS: readonly string[] = [TOKEN_PROGRAM, TOKEN_2022_PROGRAM];
