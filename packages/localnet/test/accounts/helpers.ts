/** Shared setup for the account-method tests: a real LiteSVM, the index, fixtures, JSON on the wire. */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { LiteSVM } from "litesvm";
import bs58 from "bs58";
import type { Address } from "@solana/kit";
import {
  createAccountIndex,
  createAccountMethods,
  parseJson,
  toJson,
  type AccountIndex,
} from "../../src/accounts/index.ts";
import type { MethodContext, MethodTable } from "../../src/rpc/protocol.ts";
import { JsonRpcError } from "../../src/rpc/protocol.ts";
import { settleZstdFrames } from "../../src/accounts/zstd-frame.ts";

export const TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" as Address;
export const TOKEN_2022 = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb" as Address;
export const U64_MAX = 0xffff_ffff_ffff_ffffn;
export const SLOT = 4242n;

const FIXTURES = join(import.meta.dirname, "../../../../test/fixtures/solana");

/** Reads a fixture with u64 precision (bigints beyond 2^53). */
export function fixture(path: string): any {
  return parseJson(readFileSync(join(FIXTURES, path), "utf8"));
}

/** Fixture files of a folder. */
export function fixtureFiles(folder: string): string[] {
  return readdirSync(join(FIXTURES, folder)).map((name) => join(folder, name));
}

/** What a value looks like on the wire (through the server's serializer, read back exactly). */
export function wire(value: unknown): any {
  return parseJson(toJson(value));
}

export interface TestChain {
  svm: LiteSVM;
  index: AccountIndex;
  methods: MethodTable;
  ctx: MethodContext;
  /** Calls a method and returns its result as it would appear on the wire. */
  call(method: string, ...params: unknown[]): Promise<any>;
  /** Calls a method expecting a JSON-RPC error; returns {code, message, data}. */
  fail(method: string, ...params: unknown[]): Promise<{ code: number; message: string; data?: unknown }>;
}

export function createTestChain(): TestChain {
  const svm = new LiteSVM();
  const index = createAccountIndex(svm);
  const methods = createAccountMethods({ svm, index });
  const ctx: MethodContext = { slotAt: () => SLOT };
  return {
    svm,
    index,
    methods,
    ctx,
    async call(method, ...params) {
      const result = await methods[method](params, ctx);
      // As the server does before it writes an answer: base64+zstd frames are compressed asynchronously.
      await settleZstdFrames();
      return wire(result);
    },
    async fail(method, ...params) {
      try {
        await methods[method](params, ctx);
      } catch (error) {
        if (error instanceof JsonRpcError) return { code: error.code, message: error.message, data: error.data };
        throw error;
      }
      throw new Error(`${method} did not fail`);
    },
  };
}

/** A getAccountInfo-shaped fixture value as a seed for the index. */
export function seedFromValue(
  address: string,
  value: { lamports: number | bigint; data: [string, string]; owner: string; rentEpoch: number | bigint },
) {
  return {
    address: address as Address,
    owner: value.owner as Address,
    lamports: BigInt(value.lamports),
    data: new Uint8Array(Buffer.from(value.data[0], "base64")),
    rentEpoch: BigInt(value.rentEpoch),
  };
}

/** 82 bytes of an initialized mint. */
export function mintData(fields: {
  decimals: number;
  supply?: bigint;
  mintAuthority?: string | null;
  freezeAuthority?: string | null;
}): Uint8Array {
  const data = new Uint8Array(82);
  const view = new DataView(data.buffer);
  if (fields.mintAuthority) {
    data[0] = 1;
    data.set(bs58.decode(fields.mintAuthority), 4);
  }
  view.setBigUint64(36, fields.supply ?? 0n, true);
  data[44] = fields.decimals;
  data[45] = 1;
  if (fields.freezeAuthority) {
    data[46] = 1;
    data.set(bs58.decode(fields.freezeAuthority), 50);
  }
  return data;
}

/** 165 bytes of a token account. */
export function tokenAccountData(fields: {
  mint: string;
  owner: string;
  amount: bigint;
  state?: number;
  delegate?: string;
  delegatedAmount?: bigint;
  isNative?: bigint;
  closeAuthority?: string;
}): Uint8Array {
  const data = new Uint8Array(165);
  const view = new DataView(data.buffer);
  data.set(bs58.decode(fields.mint), 0);
  data.set(bs58.decode(fields.owner), 32);
  view.setBigUint64(64, fields.amount, true);
  if (fields.delegate) {
    data[72] = 1;
    data.set(bs58.decode(fields.delegate), 76);
  }
  data[108] = fields.state ?? 1;
  if (fields.isNative !== undefined) {
    data[109] = 1;
    view.setBigUint64(113, fields.isNative, true);
  }
  view.setBigUint64(121, fields.delegatedAmount ?? 0n, true);
  if (fields.closeAuthority) {
    data[129] = 1;
    data.set(bs58.decode(fields.closeAuthority), 133);
  }
  return data;
}

/** A fresh random address. */
export function randomAddress(): Address {
  return bs58.encode(crypto.getRandomValues(new Uint8Array(32))) as Address;
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "bigint") return "number";
  return typeof value;
}

/**
 * Differences in shape between two JSON values: missing or extra keys and differing JSON types,
 * recursively (arrays compared element-wise up to the shorter length, non-empty ones required to
 * share their first element's shape).
 */
export function shapeDiff(actual: unknown, expected: unknown, path = "$"): string[] {
  const a = jsonType(actual);
  const e = jsonType(expected);
  if (a !== e) return [`${path}: ${a} vs ${e}`];
  if (a === "array") {
    const xs = actual as unknown[];
    const ys = expected as unknown[];
    const diffs: string[] = [];
    for (let i = 0; i < Math.min(xs.length, ys.length); i++) diffs.push(...shapeDiff(xs[i], ys[i], `${path}[${i}]`));
    return diffs;
  }
  if (a === "object") {
    const x = actual as Record<string, unknown>;
    const y = expected as Record<string, unknown>;
    const diffs: string[] = [];
    for (const key of new Set([...Object.keys(x), ...Object.keys(y)])) {
      if (!(key in x)) diffs.push(`${path}.${key}: missing`);
      else if (!(key in y)) diffs.push(`${path}.${key}: extra`);
      else diffs.push(...shapeDiff(x[key], y[key], `${path}.${key}`));
    }
    return diffs;
  }
  return [];
}

/** Compares two addresses as agave orders pubkeys (by bytes). */
export function byPubkeyBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(bs58.decode(a)), Buffer.from(bs58.decode(b)));
}
