/**
 * One account file in solana-test-validator's format (what `solana account --output json` writes):
 * `{"pubkey": "...", "account": {"lamports": N, "data": ["<text>", "base64"], "owner": "...",
 * "executable": false, "rentEpoch": N, "space": N}}`, data in base64, base64+zstd or base58.
 * Every failure is an Error naming the file and what is wrong with it.
 */
import { readFileSync } from "node:fs";
import zlib from "node:zlib";
import { decodeBase58 } from "../accounts/base58.ts";
import { decodeBase64Strict } from "../accounts/base64.ts";
import { isParsedPubkey, parsePubkey } from "../accounts/base58.ts";
import type { AccountInput } from "../chain/chain.ts";
import { parseJson } from "../rpc/json.ts";

/** An account read from a file, with the address the file names. */
export interface AccountFromFile {
  pubkey: string;
  account: AccountInput;
}

const U64_MAX = 0xffff_ffff_ffff_ffffn;

class FileProblem extends Error {}

function u64(value: unknown, field: string): bigint {
  const n =
    typeof value === "bigint" ? value : typeof value === "number" && Number.isSafeInteger(value) ? BigInt(value) : null;
  if (n === null || n < 0n || n > U64_MAX) throw new FileProblem(`"${field}" must be an unsigned 64-bit integer`);
  return n;
}

/** Checks a base58 address; returns it. */
export function address(value: unknown, field: string): string {
  if (typeof value !== "string" || !isParsedPubkey(parsePubkey(value)))
    throw new FileProblem(`"${field}" is not a valid address: ${JSON.stringify(value)}`);
  return value;
}

function decodeData(value: unknown): Uint8Array {
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== "string" || typeof value[1] !== "string") {
    throw new FileProblem(`"account.data" must be ["<text>", "<encoding>"]`);
  }
  const [text, encoding] = value as [string, string];
  try {
    if (encoding === "base64") return decodeBase64Strict(text);
    if (encoding === "base58") return decodeBase58(text);
    if (encoding === "base64+zstd") return new Uint8Array(zlib.zstdDecompressSync(decodeBase64Strict(text)));
  } catch (error) {
    throw new FileProblem(`"account.data" is not valid ${encoding}: ${(error as Error).message}`);
  }
  throw new FileProblem(`"account.data" has an unknown encoding "${encoding}" (base64, base64+zstd or base58)`);
}

/** Parses file text (exported for tests of the rules; {@link readAccountFile} reads the file). */
export function parseAccountFile(text: string): AccountFromFile {
  let json: unknown;
  try {
    json = parseJson(text);
  } catch (error) {
    throw new FileProblem(`not JSON: ${(error as Error).message}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new FileProblem("must be a JSON object with pubkey and account");
  const { pubkey, account } = json as Record<string, unknown>;
  if (typeof account !== "object" || account === null || Array.isArray(account))
    throw new FileProblem(`"account" must be an object`);
  const a = account as Record<string, unknown>;
  const data = decodeData(a.data);
  if (a.space !== undefined && a.space !== null && u64(a.space, "account.space") !== BigInt(data.length)) {
    throw new FileProblem(`"account.space" is ${a.space} but the data has ${data.length} bytes`);
  }
  if (a.executable !== undefined && typeof a.executable !== "boolean")
    throw new FileProblem(`"account.executable" must be a boolean`);
  return {
    pubkey: address(pubkey, "pubkey"),
    account: {
      lamports: u64(a.lamports, "account.lamports"),
      data,
      owner: address(a.owner, "account.owner"),
      executable: a.executable === true,
      rentEpoch: a.rentEpoch === undefined || a.rentEpoch === null ? 0n : u64(a.rentEpoch, "account.rentEpoch"),
    },
  };
}

/** Reads and parses one account file; throws `account file <path>: <reason>`. */
export function readAccountFile(path: string): AccountFromFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(
      `account file ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  try {
    return parseAccountFile(text);
  } catch (error) {
    if (error instanceof FileProblem) throw new Error(`account file ${path}: ${error.message}`);
    throw error;
  }
}

export { FileProblem };
