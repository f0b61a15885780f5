/**
 * Loads what LOCALNET_ACCOUNTS_DIR, LOCALNET_ACCOUNTS and LOCALNET_PROGRAMS name into the chain,
 * before the server answers: every file is read and checked first (a bad one stops the start with
 * an error naming it), then plain accounts are written, then executable ones, then the programs
 * (programdata before program, as LiteSVM compiles a program when its account is written).
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import type { AccountInput, Chain } from "../chain/chain.ts";
import { address, FileProblem, readAccountFile } from "./account-file.ts";
import type { LoadingConfig } from "./loading-options.ts";
import { readProgramFile, upgradeableProgramAccounts } from "./upgradeable-program.ts";

interface Write {
  address: string;
  account: AccountInput;
  source: string;
}

function accountDirFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    throw new Error(
      `account directory ${dir}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  return names
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => path.join(dir, name));
}

function checkedAddress(value: string, what: string): string {
  try {
    return address(value, what);
  } catch (error) {
    if (error instanceof FileProblem) throw new Error(error.message.replace(/^"(.*?)"/, "$1"));
    throw error;
  }
}

/**
 * Loads everything; resolves to the number of accounts written. Throws an Error naming the bad file.
 * Files at `genesisOwned` addresses are read and checked but not written: solana-test-validator's
 * genesis writes its own accounts over the user's (see genesis-precedence.ts).
 */
export function loadFiles(chain: Chain, config: LoadingConfig, genesisOwned: ReadonlySet<string> = new Set()): number {
  const plain: Write[] = [];
  for (const dir of config.accountDirs) {
    for (const file of accountDirFiles(dir)) {
      const { pubkey, account } = readAccountFile(file);
      plain.push({ address: pubkey, account, source: file });
    }
  }
  for (const option of config.accounts) {
    const address =
      option.address === undefined
        ? undefined
        : checkedAddress(option.address, `LOCALNET_ACCOUNTS address for ${option.file}`);
    const { pubkey, account } = readAccountFile(option.file);
    plain.push({ address: address ?? pubkey, account, source: option.file });
  }
  const programs: Write[] = [];
  for (const option of config.programs) {
    const programId = checkedAddress(option.address, `LOCALNET_PROGRAMS address for ${option.file}`);
    const authority =
      option.upgradeAuthority === undefined
        ? undefined
        : checkedAddress(option.upgradeAuthority, `upgrade authority for ${option.file}`);
    const elf = readProgramFile(option.file);
    const built = upgradeableProgramAccounts(programId, elf, {
      slot: chain.genesisSlot,
      upgradeAuthority: authority,
      rentExempt: (size) => chain.svm.minimumBalanceForRentExemption(BigInt(size)),
    });
    programs.push({ address: built.programdataAddress, account: built.programdata, source: option.file });
    programs.push({ address: programId, account: built.program, source: option.file });
  }
  const ordered = [
    ...plain.filter((w) => !w.account.executable),
    ...plain.filter((w) => w.account.executable),
    ...programs,
  ].filter((write) => !genesisOwned.has(write.address));
  for (const write of ordered) {
    try {
      chain.setAccount(write.address, write.account);
    } catch (error) {
      throw new Error(`${write.source}: LiteSVM refused account ${write.address}: ${(error as Error).message}`);
    }
  }
  return ordered.length;
}
