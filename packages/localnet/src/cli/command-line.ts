/**
 * solana-test-validator's flags, as far as they apply to the localnet, turned into the `LOCALNET_*`
 * variables config.ts reads (a flag wins over its variable). `node:util`'s parseArgs splits the
 * arguments; the flags that take two or three values (`--account ADDRESS FILE`) collect the positional
 * arguments after them, which parseArgs has no notion of. Every argument is either used or refused:
 * an unknown flag, a flag of solana-test-validator's the localnet cannot honour, a missing or extra
 * value is a {@link CommandLineError} (the command prints one line and exits with code 2).
 */
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import bs58 from "bs58";
import { LOCALNET_ENV } from "../config.ts";
import { publicKeyOf } from "../ledger/ledger-dir.ts";
import { loadingEnv, type AccountFileOption, type ProgramFileOption } from "../loading/loading-options.ts";
import { BLOCK_LIMIT_ENV, blockLimitsWithout, BLOCK_LIMIT_FEATURES } from "./block-limit-features.ts";

/** A bad command line; its message is the one line the command prints. */
export class CommandLineError extends Error {}

/** What the command line asks for. */
export type CommandLine =
  | { kind: "help" }
  | { kind: "version" }
  | {
      kind: "run";
      /** Variables to set over the caller's environment. */
      env: Record<string, string>;
      /** Lines to print at start about flags that are accepted but change nothing. */
      notes: string[];
    };

interface Flag {
  /** Values after the flag: [required, optional]. */
  values: [string[], string[]];
  short?: string;
  /** The variable it sets (named in --help). */
  variable: string;
  help: string;
}

const FLAGS: Record<string, Flag> = {
  ledger: {
    values: [["DIR"], []],
    variable: LOCALNET_ENV.ledgerDir,
    help: "ledger directory: identity, vote-account and faucet keypairs, validator.log (default: test-ledger)",
  },
  reset: {
    values: [[], []],
    short: "r",
    variable: LOCALNET_ENV.ledgerReset,
    help: "start afresh: new keys in the ledger directory (without it an existing directory keeps its keys)",
  },
  quiet: { values: [[], []], short: "q", variable: LOCALNET_ENV.quiet, help: "print nothing at start" },
  "rpc-port": {
    values: [["PORT"], []],
    variable: `${LOCALNET_ENV.port} (PubSub also on PORT+1: ${LOCALNET_ENV.pubsubPort})`,
    help: "JSON-RPC port (default 8899; 0: a free port); PubSub on the next port, as agave, and on this one",
  },
  "bind-address": {
    values: [["HOST"], []],
    variable: LOCALNET_ENV.host,
    help: "address to listen on (default 127.0.0.1)",
  },
  account: {
    values: [["ADDRESS", "FILE"], []],
    variable: "LOCALNET_ACCOUNTS",
    help: "load an account from a JSON file (`solana account --output json`); ADDRESS - takes the file's pubkey",
  },
  "account-dir": {
    values: [["DIR"], []],
    variable: "LOCALNET_ACCOUNTS_DIR",
    help: "load every *.json account file in DIR",
  },
  "bpf-program": {
    values: [["ADDRESS", "PROGRAM.so"], []],
    variable: "LOCALNET_PROGRAMS",
    help: "deploy a program, not upgradeable (ADDRESS may be a keypair file)",
  },
  "upgradeable-program": {
    values: [["ADDRESS", "PROGRAM.so", "AUTHORITY"], []],
    variable: "LOCALNET_PROGRAMS (ADDRESS=SO@AUTHORITY)",
    help: "deploy an upgradeable program; AUTHORITY an address, a keypair file or none",
  },
  "deactivate-feature": {
    values: [["FEATURE"], []],
    variable: `${BLOCK_LIMIT_ENV.block}, ${BLOCK_LIMIT_ENV.account}, ${BLOCK_LIMIT_ENV.reducedSlotMs}`,
    help: `deactivate a block-limit feature: ${Object.values(BLOCK_LIMIT_FEATURES)
      .map((f) => f.simd)
      .join(", ")} (others are refused)`,
  },
  "slots-per-epoch": {
    values: [["SLOTS"], []],
    variable: LOCALNET_ENV.slotsPerEpoch,
    help: "slots per epoch, no warm-up (at least 32)",
  },
  "ticks-per-slot": {
    values: [["TICKS"], []],
    variable: LOCALNET_ENV.slotMs,
    help: "slot length in ticks of 6.25 ms (agave's 160 ticks a second; default 64 = 400 ms)",
  },
  "faucet-sol": {
    values: [["SOL"], []],
    variable: LOCALNET_ENV.faucetSol,
    help: "the faucet's balance in SOL (default 1,000,000,000)",
  },
  "limit-ledger-size": {
    values: [[], ["SHRED_COUNT"]],
    variable: "none",
    help: "accepted; the localnet keeps no ledger on disk (LOCALNET_BLOCK_RETENTION bounds the blocks it holds)",
  },
  help: { values: [[], []], short: "h", variable: "none", help: "print this help" },
  version: { values: [[], []], short: "V", variable: "none", help: "print the version" },
};

/** solana-test-validator flags the localnet refuses, each with its reason. */
const REFUSED: Record<string, string> = {
  url: "the localnet never reaches another cluster",
  clone:
    "the localnet never reaches another cluster (save the account with `solana account --output json` and use --account)",
  "clone-upgradeable-program":
    "the localnet never reaches another cluster (dump the program and use --upgradeable-program)",
  "maybe-clone": "the localnet never reaches another cluster",
  "clone-feature-set": "the localnet never reaches another cluster",
  "warp-slot": "the chain starts at LOCALNET_START_SLOT instead",
  "geyser-plugin-config": "geyser plugins are not loaded",
  mint: "the faucet keypair in the ledger directory (faucet-keypair.json) holds the SOL",
  "gossip-port": "the localnet has no gossip",
  "gossip-host": "the localnet has no gossip",
  "dynamic-port-range": "the localnet opens only its JSON-RPC and PubSub ports",
  "faucet-port": "the localnet has no faucet port (requestAirdrop is served over JSON-RPC)",
};

const SHORT: Record<string, string> = Object.fromEntries(
  Object.entries(FLAGS)
    .filter(([, f]) => f.short)
    .map(([name, f]) => [f.short!, name]),
);

/** The address in a solana-keygen keypair file, or undefined if `value` is not one. */
function keypairFileAddress(value: string): string | undefined {
  if (!value.endsWith(".json") || !existsSync(value)) return undefined;
  let bytes: unknown;
  try {
    bytes = JSON.parse(readFileSync(value, "utf8"));
  } catch {
    throw new CommandLineError(`keypair file ${value} is not JSON`);
  }
  if (!Array.isArray(bytes) || bytes.length !== 64) throw new CommandLineError(`keypair file ${value} is not 64 bytes`);
  return bs58.encode(publicKeyOf(Uint8Array.from(bytes.slice(0, 32) as number[])));
}

function integerValue(flag: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max)
    throw new CommandLineError(`--${flag} must be an integer between ${min} and ${max}, got "${raw}"`);
  return value;
}

/** Parses `args` (without the node and script paths); throws {@link CommandLineError}. */
export function parseCommandLine(args: string[]): CommandLine {
  const options = Object.fromEntries(
    Object.entries(FLAGS).map(([name, f]) => [
      name,
      {
        type: f.values[0].length > 0 ? ("string" as const) : ("boolean" as const),
        multiple: true,
        ...(f.short ? { short: f.short } : {}),
      },
    ]),
  );
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  const uses: { name: string; values: string[] }[] = [];
  for (const token of tokens) {
    const open = uses.at(-1);
    const wanted = open ? FLAGS[open.name]!.values : undefined;
    if (token.kind === "option-terminator") throw new CommandLineError("unexpected argument --");
    if (token.kind === "positional") {
      if (open && wanted && open.values.length < wanted[0].length) open.values.push(token.value);
      else if (open && wanted && wanted[1].length > 0 && open.values.length === 0) open.values.push(token.value);
      else throw new CommandLineError(`unexpected argument "${token.value}" (see --help)`);
      continue;
    }
    if (open && wanted && open.values.length < wanted[0].length) {
      throw new CommandLineError(`--${open.name} needs ${wanted[0].join(" ")}`);
    }
    const name = token.rawName.startsWith("--") ? token.name : (SHORT[token.name] ?? token.name);
    const flag = FLAGS[name];
    if (flag === undefined) {
      const reason = REFUSED[name];
      throw new CommandLineError(
        reason
          ? `${token.rawName} is not supported: ${reason}`
          : `unknown flag ${token.rawName} (see --help for the flags the localnet takes)`,
      );
    }
    const values: string[] = [];
    if (token.value !== undefined) {
      if (flag.values[0].length === 0) throw new CommandLineError(`${token.rawName} takes no value`);
      if (!token.inlineValue && token.value.startsWith("-") && token.value !== "-")
        throw new CommandLineError(`--${name} needs ${flag.values[0].join(" ")}`);
      values.push(token.value);
    }
    uses.push({ name, values });
  }
  const last = uses.at(-1);
  if (last && last.values.length < FLAGS[last.name]!.values[0].length) {
    throw new CommandLineError(`--${last.name} needs ${FLAGS[last.name]!.values[0].join(" ")}`);
  }
  if (uses.some((u) => u.name === "help")) return { kind: "help" };
  if (uses.some((u) => u.name === "version")) return { kind: "version" };
  return { kind: "run", ...toEnv(uses) };
}

function single(uses: { name: string; values: string[] }[], name: string): string | undefined {
  const found = uses.filter((u) => u.name === name);
  if (found.length > 1) throw new CommandLineError(`--${name} given more than once`);
  return found[0]?.values[0];
}

function toEnv(uses: { name: string; values: string[] }[]): { env: Record<string, string>; notes: string[] } {
  const env: Record<string, string> = {};
  const notes: string[] = [];
  const set = (key: keyof typeof LOCALNET_ENV, value: string | undefined) => {
    if (value !== undefined) env[LOCALNET_ENV[key]] = value;
  };
  set("ledgerDir", single(uses, "ledger"));
  for (const name of ["reset", "quiet"] as const) {
    if (uses.some((u) => u.name === name)) set(name === "reset" ? "ledgerReset" : "quiet", "1");
  }
  const rpcPort = single(uses, "rpc-port");
  if (rpcPort !== undefined) {
    const port = integerValue("rpc-port", rpcPort, 0, 65534);
    set("port", String(port));
    set("pubsubPort", String(port === 0 ? 0 : port + 1));
  }
  set("host", single(uses, "bind-address"));
  const slots = single(uses, "slots-per-epoch");
  if (slots !== undefined) set("slotsPerEpoch", String(integerValue("slots-per-epoch", slots, 32, 2 ** 40)));
  const ticks = single(uses, "ticks-per-slot");
  // agave's tick is 1/160 s (DEFAULT_TICKS_PER_SECOND); the localnet's clock is in whole milliseconds.
  if (ticks !== undefined)
    set("slotMs", String(Math.round((integerValue("ticks-per-slot", ticks, 1, 9600) * 1000) / 160)));
  set("faucetSol", single(uses, "faucet-sol"));
  if (uses.some((u) => u.name === "limit-ledger-size")) {
    const count = single(uses, "limit-ledger-size");
    if (count !== undefined) integerValue("limit-ledger-size", count, 0, Number.MAX_SAFE_INTEGER);
    notes.push(
      "--limit-ledger-size accepted: the localnet keeps no ledger on disk (it holds LOCALNET_BLOCK_RETENTION blocks)",
    );
  }

  const address = (value: string) => keypairFileAddress(value) ?? value;
  const accounts: AccountFileOption[] = uses
    .filter((u) => u.name === "account")
    .map(({ values: [a, file] }) => (a === "-" ? { file: file! } : { address: address(a!), file: file! }));
  const programs: ProgramFileOption[] = uses
    .filter((u) => u.name === "bpf-program" || u.name === "upgradeable-program")
    .map(({ values: [a, file, authority] }) =>
      authority === undefined || authority === "none"
        ? { address: address(a!), file: file! }
        : { address: address(a!), file: file!, upgradeAuthority: address(authority) },
    );
  const accountDirs = uses.filter((u) => u.name === "account-dir").map((u) => u.values[0]!);
  try {
    Object.assign(
      env,
      loadingEnv({
        accountDirs: accountDirs.length > 0 ? accountDirs : undefined,
        accounts: accounts.length > 0 ? accounts : undefined,
        programs: programs.length > 0 ? programs : undefined,
      }),
    );
  } catch (e) {
    throw new CommandLineError((e as Error).message);
  }

  const features = uses.filter((u) => u.name === "deactivate-feature").map((u) => u.values[0]!);
  if (features.length > 0) {
    let limits;
    try {
      limits = blockLimitsWithout(features);
    } catch (e) {
      throw new CommandLineError((e as Error).message);
    }
    env[BLOCK_LIMIT_ENV.block] = String(limits.block);
    env[BLOCK_LIMIT_ENV.account] = String(limits.account);
    env[BLOCK_LIMIT_ENV.reducedSlotMs] = String(limits.reducedSlotMs);
  }
  return { env, notes };
}

/** The --help text: every flag, what it does and the variable it sets. */
export function helpText(version: string): string {
  const rows = Object.entries(FLAGS).map(([name, f]) => {
    const head = `${f.short ? `-${f.short}, ` : "    "}--${name}${[...f.values[0], ...f.values[1].map((v) => `[${v}]`)]
      .map((v) => ` ${v}`)
      .join("")}`;
    const variable = f.variable === "none" ? "" : `\n${" ".repeat(8)}variable: ${f.variable}`;
    return `  ${head}\n${" ".repeat(8)}${f.help}${variable}`;
  });
  return [
    `solgate-localnet ${version}: a Solana test chain on LiteSVM, started as solana-test-validator is`,
    "",
    "Usage: solgate-localnet [FLAGS]",
    "",
    "Flags (solana-test-validator's; each sets a LOCALNET_* variable, and wins over it):",
    ...rows,
    "",
    "Every other LOCALNET_* variable of packages/localnet/README.md applies as well. An unknown flag, or one",
    "of solana-test-validator's the localnet cannot honour (--clone, --url, --warp-slot, ...), exits with code 2.",
  ].join("\n");
}
