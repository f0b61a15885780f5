/**
 * solana-test-validator's flags to LOCALNET_* variables: what each sets, that config.ts accepts the
 * result, and that every bad command line is refused with one line (never ignored).
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import { blockLimitsWithout } from "../../src/cli/block-limit-features.ts";
import { commandEnv } from "../../src/cli/cli-env.ts";
import { CommandLineError, helpText, parseCommandLine } from "../../src/cli/command-line.ts";
import { LOCALNET_ENV, loadLocalnetConfig } from "../../src/config.ts";

const A = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const B = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";

function envOf(args: string[]): Record<string, string> {
  const parsed = parseCommandLine(args);
  if (parsed.kind !== "run") throw new Error(`not a run: ${parsed.kind}`);
  return parsed.env;
}

function refusal(args: string[]): string {
  try {
    parseCommandLine(args);
  } catch (e) {
    expect(e).toBeInstanceOf(CommandLineError);
    return (e as Error).message;
  }
  throw new Error(`accepted: ${args.join(" ")}`);
}

describe("parseCommandLine", () => {
  it("turns solana-test-validator's flags into the variables config.ts reads", () => {
    const env = envOf([
      "--ledger",
      "/tmp/l",
      "-r",
      "-q",
      "--rpc-port",
      "9000",
      "--account",
      A,
      "/f/a.json",
      "--account",
      "-",
      "/f/b.json",
      "--account-dir",
      "/d1",
      "--account-dir",
      "/d2",
      "--bpf-program",
      A,
      "/p/a.so",
      "--upgradeable-program",
      B,
      "/p/b.so",
      A,
      "--upgradeable-program",
      "11111111111111111111111111111112",
      "/p/c.so",
      "none",
      "--slots-per-epoch",
      "64",
      "--ticks-per-slot",
      "8",
      "--faucet-sol",
      "12.5",
      "--bind-address",
      "0.0.0.0",
    ]);
    expect(env).toEqual({
      LOCALNET_LEDGER_DIR: "/tmp/l",
      LOCALNET_LEDGER_RESET: "1",
      LOCALNET_QUIET: "1",
      LOCALNET_PORT: "9000",
      LOCALNET_PUBSUB_PORT: "9001",
      LOCALNET_HOST: "0.0.0.0",
      LOCALNET_ACCOUNTS: `${A}=/f/a.json,-=/f/b.json`,
      LOCALNET_ACCOUNTS_DIR: "/d1,/d2",
      LOCALNET_PROGRAMS: `${A}=/p/a.so,${B}=/p/b.so@${A},11111111111111111111111111111112=/p/c.so`,
      LOCALNET_SLOTS_PER_EPOCH: "64",
      LOCALNET_SLOT_MS: "50",
      LOCALNET_FAUCET_SOL: "12.5",
    });
    const config = loadLocalnetConfig(env);
    expect(config.ledger).toEqual({ dir: "/tmp/l", reset: true });
    expect(config.pubsubPort).toBe(9001);
    expect(config.slotsPerEpoch).toBe(64n);
    expect(config.faucetLamports).toBe(12_500_000_000n);
    expect(config.slotMs).toBe(50);
    expect(config.loading.programs[1]).toEqual({ address: B, file: "/p/b.so", upgradeAuthority: A });
  });

  it("takes a keypair file where solana-test-validator takes ADDRESS_OR_KEYPAIR", () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
    const pub = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
    const file = path.join(mkdtempSync(path.join(tmpdir(), "cli-")), "program.json");
    writeFileSync(file, JSON.stringify([...seed, ...pub]));
    expect(envOf(["--bpf-program", file, "/p/a.so"]).LOCALNET_PROGRAMS).toBe(`${bs58.encode(pub)}=/p/a.so`);
  });

  it("accepts --limit-ledger-size with or without a count, with a note", () => {
    for (const args of [["--limit-ledger-size"], ["--limit-ledger-size", "50000000"]]) {
      const parsed = parseCommandLine(args);
      expect(parsed.kind === "run" && parsed.env).toEqual({});
      expect(parsed.kind === "run" && parsed.notes).toEqual([expect.stringMatching(/^--limit-ledger-size accepted/)]);
    }
  });

  it("answers --help and --version", () => {
    expect(parseCommandLine(["--help"]).kind).toBe("help");
    expect(parseCommandLine(["-h"]).kind).toBe("help");
    expect(parseCommandLine(["-V"]).kind).toBe("version");
  });

  it("names each flag's variable in --help", () => {
    const help = helpText("x");
    for (const variable of [
      "LOCALNET_LEDGER_DIR",
      "LOCALNET_LEDGER_RESET",
      "LOCALNET_QUIET",
      "LOCALNET_PORT",
      "LOCALNET_PUBSUB_PORT",
      "LOCALNET_ACCOUNTS",
      "LOCALNET_ACCOUNTS_DIR",
      "LOCALNET_PROGRAMS",
      "LOCALNET_BLOCK_CU_LIMIT",
      "LOCALNET_SLOTS_PER_EPOCH",
      "LOCALNET_SLOT_MS",
      "LOCALNET_FAUCET_SOL",
    ]) {
      expect(help).toContain(variable);
    }
    // Every flag that sets something says which variable, right under it.
    const entries = help.split(/\n(?= {2}(?:-\w, | {4})--)/).slice(1);
    expect(entries.length).toBe(16);
    for (const entry of entries) {
      const flag = /--[\w-]+/.exec(entry)![0];
      if (["--help", "--version", "--limit-ledger-size"].includes(flag)) expect(entry).not.toContain("variable:");
      else expect(entry).toMatch(/\n {8}variable: LOCALNET_[A-Z_]+/);
    }
  });

  it("refuses what it cannot honour, with one line", () => {
    expect(refusal(["--bogus"])).toBe("unknown flag --bogus (see --help for the flags the localnet takes)");
    expect(refusal(["-x"])).toBe("unknown flag -x (see --help for the flags the localnet takes)");
    expect(refusal(["--clone", A])).toMatch(/^--clone is not supported: the localnet never reaches another cluster/);
    expect(refusal(["--url", "devnet"])).toMatch(/^--url is not supported/);
    expect(refusal(["--account", A])).toBe("--account needs ADDRESS FILE");
    expect(refusal(["--upgradeable-program", A, "/p.so"])).toBe(
      "--upgradeable-program needs ADDRESS PROGRAM.so AUTHORITY",
    );
    expect(refusal(["--account", A, "--reset"])).toBe("--account needs ADDRESS FILE");
    expect(refusal(["--ledger", "--reset"])).toBe("--ledger needs DIR");
    expect(refusal(["--ledger"])).toBe("--ledger needs DIR");
    expect(refusal(["--ledger", "a", "--ledger", "b"])).toBe("--ledger given more than once");
    expect(refusal(["stray"])).toBe('unexpected argument "stray" (see --help)');
    expect(refusal(["--reset", "yes"])).toBe('unexpected argument "yes" (see --help)');
    expect(refusal(["--reset=1"])).toBe("--reset takes no value");
    expect(refusal(["--rpc-port", "70000"])).toBe('--rpc-port must be an integer between 0 and 65534, got "70000"');
    expect(refusal(["--slots-per-epoch", "8"])).toBe(
      '--slots-per-epoch must be an integer between 32 and 1099511627776, got "8"',
    );
    expect(refusal(["--account", A, "/a,b.json"])).toMatch(/a path with a comma cannot be passed/);
    expect(refusal(["--deactivate-feature", "nope"])).toBe(
      '--deactivate-feature: "nope" is not a feature id (a base58 address)',
    );
    expect(refusal(["--deactivate-feature", B])).toMatch(
      /^--deactivate-feature TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA: the localnet can deactivate only the block-limit features/,
    );
  });
});

describe("--deactivate-feature", () => {
  it("maps agave 4.4's block-limit features to the limits it applies without them", () => {
    const F50 = "5oMCU3JPaFLr8Zr4ct7yFA7jdk6Mw1RmB8K4u9ZbS42z";
    const F60 = "6oMCUgfY6BzZ6jwB681J6ju5Bh6CjVXbd7NeWYqiXBSu";
    const F100 = "P1BCUMpAC7V2GRBRiJCNUgpMyWZhoqt3LKo712ePqsz";
    const FACCOUNT = "htsptAwi2yRoZH83SKaUXykeZGtZHgxkS2QwW1pssR8";
    const S350 = "iBRL5RuWhw4yqaAZu96RUULHckHTZAoe2b77qaV38JZ";
    const S300 = "iBRLL3k18HST852F1Mf3Lv83waTNQmmqvKDxvYGwQFL";
    const S250 = "iBRLMc81UjRa8fn8A6eE8bJTnRbgQoPTynM51akENCV";
    const S200 = "iBRLjhJnkmDZgNoZRDMW11d8ZV7HvsL3vAyRjZB5npW";
    // The localnet's defaults are what they give with nothing deactivated.
    const defaults = loadLocalnetConfig({});
    expect(blockLimitsWithout([])).toEqual({
      block: Number(defaults.blockCostLimit),
      account: Number(defaults.accountCostLimit),
      reducedSlotMs: defaults.reducedSlotMs,
    });
    expect(blockLimitsWithout([])).toEqual({ block: 100_000_000, account: 40_000_000, reducedSlotMs: 200 });
    // slot_params.rs: SIMD-0286 scales LEGACY_SLOT_PARAMS' 60M / 24M by 100 / 60; nothing else is gated in 4.4.
    expect(blockLimitsWithout([F100])).toEqual({ block: 60_000_000, account: 24_000_000, reducedSlotMs: 200 });
    expect(blockLimitsWithout([F50, F60, FACCOUNT])).toEqual(blockLimitsWithout([]));
    // The shortest slot time still active is the regime; none: 400 ms, the baseline's.
    expect(blockLimitsWithout([S200]).reducedSlotMs).toBe(250);
    expect(blockLimitsWithout([S200, S250, S300]).reducedSlotMs).toBe(350);
    expect(blockLimitsWithout([S200, S250, S300, S350]).reducedSlotMs).toBe(400);
    const env = envOf(["--deactivate-feature", F100, "--deactivate-feature", S200]);
    expect(env).toEqual({
      LOCALNET_BLOCK_CU_LIMIT: "60000000",
      LOCALNET_ACCOUNT_CU_LIMIT: "24000000",
      LOCALNET_REDUCED_SLOT_MS: "250",
    });
    // config.ts reads them.
    expect(loadLocalnetConfig(env)).toMatchObject({
      blockCostLimit: 60_000_000n,
      accountCostLimit: 24_000_000n,
      reducedSlotMs: 250,
    });
    expect(() => loadLocalnetConfig({ LOCALNET_REDUCED_SLOT_MS: "150" })).toThrow(
      'LOCALNET_REDUCED_SLOT_MS must be one of 200, 250, 300, 350, 400 (ms; 400: no slot-time regime), got "150"',
    );
  });
});

describe("the command's environment", () => {
  it("defaults to solana-test-validator's ledger and ports, an empty chain, and lets variables then flags override", () => {
    expect(commandEnv({}, {})).toMatchObject({
      LOCALNET_LEDGER_DIR: "test-ledger",
      LOCALNET_PUBSUB_PORT: "8900",
      LOCALNET_WORLD: "0",
      LOCALNET_TRAFFIC: "0",
    });
    expect(commandEnv({ LOCALNET_PORT: "7000", LOCALNET_WORLD: "1" }, {})).toMatchObject({
      LOCALNET_PUBSUB_PORT: "7001",
      LOCALNET_WORLD: "1",
    });
    expect(commandEnv({ LOCALNET_PORT: "0" }, {})[LOCALNET_ENV.pubsubPort]).toBe("0");
    expect(commandEnv({ LOCALNET_LEDGER_DIR: "/env" }, { LOCALNET_LEDGER_DIR: "/flag" })[LOCALNET_ENV.ledgerDir]).toBe(
      "/flag",
    );
  });
});
