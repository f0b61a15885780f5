/**
 * Accounts and programs to load at start, as solana-test-validator's `--account-dir`,
 * `--account ADDRESS FILE` and `--upgradeable-program ADDRESS SO AUTHORITY` take them, read from
 * `LOCALNET_ACCOUNTS_DIR`, `LOCALNET_ACCOUNTS` and `LOCALNET_PROGRAMS` (config.ts reads the
 * environment; this parses the values). Only the syntax is checked here; files are read at start
 * (load-files.ts), where a bad one is an error naming it.
 */

/** One `--account`: a file, put at `address` (undefined: the file's own `pubkey`). */
export interface AccountFileOption {
  address?: string;
  file: string;
}

/** One upgradeable program: its address, its ELF, and the upgrade authority (none when absent). */
export interface ProgramFileOption {
  address: string;
  file: string;
  upgradeAuthority?: string;
}

/** What to load at start. */
export interface LoadingConfig {
  accountDirs: string[];
  accounts: AccountFileOption[];
  programs: ProgramFileOption[];
}

export const LOADING_ENV = {
  accountDirs: "LOCALNET_ACCOUNTS_DIR",
  accounts: "LOCALNET_ACCOUNTS",
  programs: "LOCALNET_PROGRAMS",
} as const;

function list(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

function pair(item: string, name: string, shape: string): [string, string] {
  const eq = item.indexOf("=");
  if (eq <= 0 || eq === item.length - 1) throw new Error(`${name} entries must be ${shape}, got "${item}"`);
  return [item.slice(0, eq).trim(), item.slice(eq + 1).trim()];
}

/** Parses the three variables; throws an Error naming the variable and the entry. */
export function parseLoadingConfig(env: NodeJS.ProcessEnv): LoadingConfig {
  const accounts = list(env[LOADING_ENV.accounts]).map((item): AccountFileOption => {
    const [address, file] = pair(item, LOADING_ENV.accounts, "ADDRESS=FILE.json (ADDRESS - for the file's own pubkey)");
    return address === "-" ? { file } : { address, file };
  });
  const programs = list(env[LOADING_ENV.programs]).map((item): ProgramFileOption => {
    const [address, rest] = pair(item, LOADING_ENV.programs, "ADDRESS=PROGRAM.so[@AUTHORITY]");
    const at = rest.lastIndexOf("@");
    if (at < 0) return { address, file: rest };
    const authority = rest.slice(at + 1).trim();
    const file = rest.slice(0, at).trim();
    if (file === "" || authority === "")
      throw new Error(`${LOADING_ENV.programs} entries must be ADDRESS=PROGRAM.so[@AUTHORITY], got "${item}"`);
    return authority === "none" ? { address, file } : { address, file, upgradeAuthority: authority };
  });
  return { accountDirs: list(env[LOADING_ENV.accountDirs]), accounts, programs };
}

/** The variables for a launcher's options (the inverse of {@link parseLoadingConfig}). */
export function loadingEnv(config: Partial<LoadingConfig>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, values] of [
    ["accountDirs", config.accountDirs],
    ["accounts", config.accounts?.map((a) => `${a.address ?? "-"}=${a.file}`)],
    [
      "programs",
      config.programs?.map((p) => `${p.address}=${p.file}${p.upgradeAuthority ? `@${p.upgradeAuthority}` : ""}`),
    ],
  ] as const) {
    if (values === undefined) continue;
    for (const value of values)
      if (value.includes(",")) throw new Error(`${LOADING_ENV[key]}: a path with a comma cannot be passed: "${value}"`);
    env[LOADING_ENV[key]] = values.join(",");
  }
  return env;
}
