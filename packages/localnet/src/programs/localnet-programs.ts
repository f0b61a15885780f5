/**
 * The emulated programs as the chain holds them: the stand-in deployed at Token Metadata, Bubblegum,
 * Account Compression and SPL Noop, and the registry the executor consults (emulated-programs.ts).
 */
import bs58 from "bs58";
import type { LiteSvm } from "../chain/litesvm-native.ts";
import { BUBBLEGUM_PROGRAM, TOKEN_METADATA_PROGRAM } from "../accounts/program-ids.ts";
import {
  ACCOUNT_COMPRESSION_PROGRAM,
  createBubblegum,
  NOOP_PROGRAM,
  type BubblegumState,
} from "./bubblegum-program.ts";
import { createEmulatedPrograms, type EmulatedPrograms, type ProgramHandler } from "./emulated-programs.ts";
import { standInProgramElf } from "./stand-in-program.ts";
import { tokenMetadataProgram } from "./token-metadata-program.ts";

export { ACCOUNT_COMPRESSION_PROGRAM, NOOP_PROGRAM };

export interface LocalnetPrograms {
  readonly registry: EmulatedPrograms;
  readonly bubblegum: BubblegumState;
}

/** Creates the registry and deploys the stand-in at each emulated program's address. */
export function installLocalnetPrograms(svm: LiteSvm): LocalnetPrograms {
  const bubblegum = createBubblegum();
  const handlers = new Map<string, ProgramHandler>([
    [TOKEN_METADATA_PROGRAM, tokenMetadataProgram],
    [BUBBLEGUM_PROGRAM, bubblegum.handler],
  ]);
  const ids = [TOKEN_METADATA_PROGRAM, BUBBLEGUM_PROGRAM, ACCOUNT_COMPRESSION_PROGRAM, NOOP_PROGRAM];
  const elf = standInProgramElf();
  for (const id of ids) svm.addProgram(bs58.decode(id), elf);
  return { registry: createEmulatedPrograms(handlers, ids), bubblegum };
}
