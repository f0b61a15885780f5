/**
 * solana-test-validator's ledger directory, as far as tools read it: the identity, vote-account and
 * faucet keypairs (solana-keygen's format: a JSON array of 64 bytes, the ed25519 seed then the public
 * key) and `validator.log`. A new directory (or `--reset`) gets fresh keys; an existing one keeps its
 * keys, so the identity and the faucet survive a restart as they do under agave. The chain itself is
 * not kept: LiteSVM holds no ledger on disk, so every start is a new genesis.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import bs58 from "bs58";
import type { ChainKeys } from "../chain/chain.ts";

/** The files this module writes, by role (solana-test-validator's names). */
export const LEDGER_FILES = {
  identity: "validator-keypair.json",
  voteAccount: "vote-account-keypair.json",
  faucet: "faucet-keypair.json",
  log: "validator.log",
} as const;

/** An opened ledger directory. */
export interface LedgerDir {
  readonly dir: string;
  /** The three keys, as the chain takes them (ed25519 seeds). */
  readonly keys: Required<ChainKeys>;
  /** Their addresses. */
  readonly addresses: { identity: string; voteAccount: string; faucet: string };
  /** Appends one line to validator.log, prefixed as agave's logger does (`[time INFO  target] text`). */
  log(text: string, target?: string): void;
  close(): void;
}

const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** The ed25519 public key of a 32-byte seed (the first half of a solana-keygen keypair file). */
export function publicKeyOf(seed: Uint8Array): Uint8Array {
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
  const spki = createPublicKey(privateKey).export({ format: "der", type: "spki" });
  return new Uint8Array(spki.subarray(spki.length - 32));
}

function freshSeed(): Uint8Array {
  const pkcs8 = generateKeyPairSync("ed25519").privateKey.export({ format: "der", type: "pkcs8" });
  return new Uint8Array(pkcs8.subarray(pkcs8.length - 32));
}

/** Reads a keypair file; throws naming the file when it is not 64 bytes whose second half is the first's public key. */
function readKeypair(file: string): Uint8Array {
  let bytes: unknown;
  try {
    bytes = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new Error(`keypair file ${file}: ${(e as Error).message}`);
  }
  if (
    !Array.isArray(bytes) ||
    bytes.length !== 64 ||
    !bytes.every((b) => Number.isInteger(b) && (b as number) >= 0 && (b as number) <= 255)
  ) {
    throw new Error(`keypair file ${file}: not a JSON array of 64 bytes`);
  }
  const seed = Uint8Array.from(bytes.slice(0, 32) as number[]);
  if (!Buffer.from(publicKeyOf(seed)).equals(Buffer.from(bytes.slice(32) as number[]))) {
    throw new Error(`keypair file ${file}: its public half does not match its secret half`);
  }
  return seed;
}

function keypairJson(seed: Uint8Array): string {
  return JSON.stringify([...seed, ...publicKeyOf(seed)]);
}

function fail(dir: string, e: unknown): never {
  const code = (e as NodeJS.ErrnoException).code;
  throw new Error(`ledger directory ${dir} cannot be written${code ? ` (${code})` : ""}`);
}

/**
 * Opens (creating, or with `reset` emptying of the files above) the ledger directory and returns its
 * keys and log. Throws one line naming the directory when it cannot be written, or the file that is bad.
 */
export function openLedgerDir(dir: string, reset: boolean): LedgerDir {
  try {
    mkdirSync(dir, { recursive: true });
    // Only the files this module owns are removed: a directory given by mistake loses nothing else.
    if (reset) for (const name of Object.values(LEDGER_FILES)) rmSync(join(dir, name), { force: true });
  } catch (e) {
    fail(dir, e);
  }
  const key = (role: "identity" | "voteAccount" | "faucet"): Uint8Array => {
    const file = join(dir, LEDGER_FILES[role]);
    if (existsSync(file)) return readKeypair(file);
    const seed = freshSeed();
    try {
      writeFileSync(file, keypairJson(seed), { mode: 0o600 });
    } catch (e) {
      fail(dir, e);
    }
    return seed;
  };
  const keys = { identity: key("identity"), voteAccount: key("voteAccount"), faucet: key("faucet") };
  let fd: number;
  try {
    // A new log per start, as agave starts a new validator-<time>.log and points validator.log at it.
    fd = openSync(join(dir, LEDGER_FILES.log), "w");
  } catch (e) {
    fail(dir, e);
  }
  const address = (seed: Uint8Array) => bs58.encode(publicKeyOf(seed));
  return {
    dir,
    keys,
    addresses: {
      identity: address(keys.identity),
      voteAccount: address(keys.voteAccount),
      faucet: address(keys.faucet),
    },
    log(text, target = "solgate_localnet") {
      const time = new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z");
      writeSync(fd, `[${time} INFO  ${target}] ${text}\n`);
    },
    close() {
      closeSync(fd);
    },
  };
}
