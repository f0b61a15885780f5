/**
 * A program deployed as solana-test-validator's `--upgradeable-program` does it: under the BPF
 * upgradeable loader, a program account (`UpgradeableLoaderState::Program`, pointing at its
 * programdata address, the PDA of `[program id]` under the loader) and a programdata account
 * (`ProgramData`: deployment slot, optional upgrade authority, then the ELF at offset 45), both
 * rent-exempt. Hand-written bincode of two fixed layouts (no JS library writes them).
 */
import { readFileSync } from "node:fs";
import bs58 from "bs58";
import type { AccountInput } from "../chain/chain.ts";
import { findProgramAddressSync } from "../world/pda.ts";

export const UPGRADEABLE_LOADER = "BPFLoaderUpgradeab1e11111111111111111111111";
/** `UpgradeableLoaderState::size_of_programdata_metadata()`. */
export const PROGRAMDATA_METADATA_SIZE = 45;
const PROGRAM_ACCOUNT_SIZE = 36;
/** ELF `e_machine` of BPF (247) and SBF (263) objects. */
const SBF_MACHINES = new Set([247, 263]);

/** The two accounts of a deployed program. */
export interface UpgradeableProgramAccounts {
  programdataAddress: string;
  programdata: AccountInput;
  program: AccountInput;
}

/** Why bytes are not an SBF ELF (undefined when they are). */
export function sbfElfProblem(elf: Uint8Array): string | undefined {
  if (elf.length < 64 || elf[0] !== 0x7f || elf[1] !== 0x45 || elf[2] !== 0x4c || elf[3] !== 0x46)
    return "not an ELF file";
  if (elf[4] !== 2 || elf[5] !== 1) return "not a 64-bit little-endian ELF";
  const machine = elf[18]! | (elf[19]! << 8);
  if (!SBF_MACHINES.has(machine)) return `ELF for machine ${machine}, not BPF/SBF (247/263)`;
  return undefined;
}

/** The programdata address of a program id. */
export function programdataAddress(programId: string): string {
  return bs58.encode(findProgramAddressSync([bs58.decode(programId)], bs58.decode(UPGRADEABLE_LOADER))[0]);
}

/** Builds the program and programdata accounts; `rentExempt` gives the minimum balance of a size. */
export function upgradeableProgramAccounts(
  programId: string,
  elf: Uint8Array,
  options: { slot: bigint; upgradeAuthority?: string; rentExempt: (size: number) => bigint },
): UpgradeableProgramAccounts {
  const dataAddress = programdataAddress(programId);
  const program = new Uint8Array(PROGRAM_ACCOUNT_SIZE);
  const pv = new DataView(program.buffer);
  pv.setUint32(0, 2, true); // UpgradeableLoaderState::Program
  program.set(bs58.decode(dataAddress), 4);

  const programdata = new Uint8Array(PROGRAMDATA_METADATA_SIZE + elf.length);
  const dv = new DataView(programdata.buffer);
  dv.setUint32(0, 3, true); // UpgradeableLoaderState::ProgramData
  dv.setBigUint64(4, options.slot, true);
  if (options.upgradeAuthority !== undefined) {
    programdata[12] = 1;
    programdata.set(bs58.decode(options.upgradeAuthority), 13);
  }
  programdata.set(elf, PROGRAMDATA_METADATA_SIZE);
  return {
    programdataAddress: dataAddress,
    programdata: {
      lamports: options.rentExempt(programdata.length),
      data: programdata,
      owner: UPGRADEABLE_LOADER,
      executable: false,
    },
    program: {
      lamports: options.rentExempt(program.length),
      data: program,
      owner: UPGRADEABLE_LOADER,
      executable: true,
    },
  };
}

/** Reads a program file; throws `program file <path>: <reason>`. */
export function readProgramFile(path: string): Uint8Array {
  let elf: Uint8Array;
  try {
    elf = new Uint8Array(readFileSync(path));
  } catch (error) {
    throw new Error(
      `program file ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  const problem = sbfElfProblem(elf);
  if (problem !== undefined) throw new Error(`program file ${path}: ${problem}`);
  return elf;
}
