/**
 * Turning accounts as a node returns them (base64, or jsonParsed for the token programs) into the
 * items of a page. Token accounts come out decoded; everything else, mints included (the contract
 * has no shape for them), as base64.
 */
import type { TokenProgramName } from "./token-programs.ts";

/** An SPL token amount. */
export interface TokenAmount {
  /** Base units (u64). */
  raw: bigint;
  decimals: number;
  /** raw / 10^decimals as a float, for display. */
  ui: number;
  /** raw / 10^decimals, exact. */
  uiString: string;
}

/** The decoded fields of an SPL token account. */
export interface TokenAccountInfo {
  mint: string;
  owner: string;
  tokenAmount: TokenAmount;
  /** `initialized` or `frozen`. */
  state: string;
}

/** An account's data: decoded for token accounts, raw otherwise. */
export type AccountData =
  | { format: "parsed"; program: TokenProgramName; parsed: { type: "account"; info: TokenAccountInfo } }
  | { format: "base64"; base64: string };

/** One account on a page. */
export interface ProgramAccountItem {
  address: string;
  lamports: bigint;
  /** lamports / 1e9, for display. */
  sol: number;
  space: bigint;
  data: AccountData;
}

/** An account as kit returns it from getMultipleAccounts (base64 or jsonParsed encoding). */
export interface RpcAccount {
  lamports: bigint;
  owner: string;
  space?: bigint;
  data: readonly [string, string] | { program: string; parsed: unknown; space?: bigint | number };
}

/**
 * The page item for `account`, or `undefined` when the node returned a parsed form this contract
 * cannot carry (a mint, a multisig): the caller fetches those again as base64.
 */
export function toProgramAccountItem(address: string, account: RpcAccount): ProgramAccountItem | undefined {
  const lamports = BigInt(account.lamports);
  const base = { address, lamports, sol: lamportsToSol(lamports) };
  const data = account.data;
  if (isBase64Data(data)) {
    const byteLength = Buffer.byteLength(data[0], "base64");
    return { ...base, space: account.space === undefined ? BigInt(byteLength) : BigInt(account.space), data: { format: "base64", base64: data[0] } };
  }
  const parsed = toTokenAccount(data);
  if (parsed === undefined) return undefined;
  const space = account.space ?? data.space;
  return { ...base, space: space === undefined ? 0n : BigInt(space), data: parsed };
}

/** SOL as a float without going through a Number of the whole lamport count (which may exceed 2^53). */
export function lamportsToSol(lamports: bigint): number {
  return Number(lamports / 1_000_000_000n) + Number(lamports % 1_000_000_000n) / 1e9;
}

function isBase64Data(data: RpcAccount["data"]): data is readonly [string, string] {
  return Array.isArray(data) && data[1] === "base64";
}

/** A node's jsonParsed token account -> the contract's shape; undefined for any other parsed type. */
function toTokenAccount(data: { program: string; parsed: unknown }): AccountData | undefined {
  if (data.program !== "spl-token" && data.program !== "spl-token-2022") return undefined;
  const parsed = data.parsed as { type?: unknown; info?: Record<string, unknown> } | null;
  if (parsed?.type !== "account" || typeof parsed.info !== "object" || parsed.info === null) return undefined;
  const info = parsed.info;
  const amount = info.tokenAmount as { amount?: unknown; decimals?: unknown; uiAmount?: unknown; uiAmountString?: unknown } | undefined;
  if (typeof info.mint !== "string" || typeof info.owner !== "string" || amount === undefined) return undefined;
  const raw = BigInt(amount.amount as string | bigint);
  const decimals = Number(amount.decimals);
  const uiString = typeof amount.uiAmountString === "string" ? amount.uiAmountString : formatUnits(raw, decimals);
  // Nodes send uiAmount as a float; kit turns whole-number JSON into bigint, and older nodes send null.
  const ui = amount.uiAmount === null || amount.uiAmount === undefined ? Number(uiString) : Number(amount.uiAmount);
  return {
    format: "parsed",
    program: data.program,
    parsed: {
      type: "account",
      info: {
        mint: info.mint,
        owner: info.owner,
        tokenAmount: { raw, decimals, ui, uiString },
        state: typeof info.state === "string" ? info.state : "initialized",
      },
    },
  };
}

/** raw / 10^decimals as an exact decimal string without trailing zeros, as nodes write uiAmountString. */
export function formatUnits(raw: bigint, decimals: number): string {
  if (decimals === 0) return raw.toString();
  const scale = 10n ** BigInt(decimals);
  const whole = raw / scale;
  const fraction = (raw % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  return fraction.length > 0 ? `${whole}.${fraction}` : whole.toString();
}
