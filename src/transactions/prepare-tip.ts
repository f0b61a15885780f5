/**
 * PrepareTransaction's tip: what a client asks for (a level of landed tips, or lamports), checked against
 * the ceiling (SOLGATE_TIP_MAX_LAMPORTS), resolved into an amount and a random tip account of the block
 * engine, and added to the draft as a System transfer from its fee payer.
 *
 * The rules, as docs/landing.md states them:
 * - lamports over the ceiling are refused (TIP_OVER_CEILING), below Jito's 1,000-lamport minimum too
 *   (INVALID_PARAMETER): the client named the amount, so it is not changed behind its back;
 * - a level is a market figure the client did not see: above the ceiling it is clamped to it, below the
 *   minimum raised to it, and the answer says so;
 * - no block engine: TIPS_UNAVAILABLE; levels unknown: TIP_LEVELS_UNKNOWN.
 */
import { randomInt } from "node:crypto";
import { appendTransactionMessageInstruction, createNoopSigner } from "@solana/kit";
import type { Address, TransactionMessage, TransactionMessageWithFeePayer } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { SolgateError } from "../errors.ts";
import { TIP_LEVELS } from "../fees/tip-levels.ts";
import type { TipLevelName, TipLevelSource } from "../fees/tip-levels.ts";
import { MIN_TIP_LAMPORTS } from "./bundle-checks.ts";

/** A checked tip request. */
export type TipChoice =
  | { readonly kind: "level"; readonly level: TipLevelName }
  | { readonly kind: "lamports"; readonly lamports: bigint };

/** The default ceiling on a tip: 0.001 SOL (above Jito's p99 on most days; a spike of the feed is capped at it). */
export const DEFAULT_TIP_MAX_LAMPORTS = 1_000_000n;

/** What PrepareTransaction needs to add tips. */
export interface PrepareTipSource {
  /** The block engine's tip accounts (getTipAccounts, cached by the engine client). */
  tipAccounts(): Promise<readonly string[]>;
  readonly levels: TipLevelSource;
}

/** The tip added to a draft: exactly what the transfer pays, and why that amount. */
export interface PreparedTip {
  readonly account: string;
  readonly lamports: bigint;
  /** The level the amount came from; undefined when the client gave lamports. */
  readonly level: TipLevelName | undefined;
  /** What the level stood for before the ceiling and the minimum (the lamports asked for, otherwise). */
  readonly levelLamports: bigint;
  readonly clamped: boolean;
  readonly raisedToMinimum: boolean;
}

const U64_MAX = (1n << 64n) - 1n;

const invalidTip = (message: string) =>
  new SolgateError("INVALID_PARAMETER", message, { field: "tip", allowed: [...TIP_LEVELS] });

/**
 * Checks a tip request as a handler hands it over: a level name (`"p25"` ... `"p99"`; empty means p50) or
 * lamports, not both; undefined for none.
 * @throws SolgateError INVALID_PARAMETER (field `tip`).
 */
export function parseTip(input: { level?: string; lamports?: bigint } | undefined): TipChoice | undefined {
  if (input === undefined) return undefined;
  const { level, lamports } = input;
  if (level !== undefined && lamports !== undefined) throw invalidTip("tip takes a level or lamports, not both");
  if (lamports !== undefined) {
    if (typeof lamports !== "bigint" || lamports < 0n || lamports > U64_MAX)
      throw invalidTip("tip.lamports must be a u64");
    if (lamports < MIN_TIP_LAMPORTS)
      throw invalidTip(`tip.lamports is ${lamports}; a block engine takes no tip below ${MIN_TIP_LAMPORTS} lamports`);
    return { kind: "lamports", lamports };
  }
  if (level === undefined || level === "") return { kind: "level", level: "p50" };
  if (!(TIP_LEVELS as readonly string[]).includes(level)) {
    throw invalidTip(
      `unknown tip level ${JSON.stringify(level.slice(0, 40))}; use one of ${TIP_LEVELS.join(", ")} or lamports`,
    );
  }
  return { kind: "level", level: level as TipLevelName };
}

/**
 * The amount and account of a tip (no message is touched).
 * @throws SolgateError TIPS_UNAVAILABLE, TIP_OVER_CEILING, TIP_LEVELS_UNKNOWN, UPSTREAM_UNAVAILABLE (the engine
 * did not give its tip accounts).
 */
export async function resolveTip(
  choice: TipChoice,
  source: PrepareTipSource | undefined,
  maxLamports: bigint,
): Promise<PreparedTip> {
  // The client's own amount is checked first: refused whatever the server's state.
  if (choice.kind === "lamports" && choice.lamports > maxLamports) {
    throw new SolgateError(
      "TIP_OVER_CEILING",
      `a tip of ${choice.lamports} lamports is over this server's ceiling of ${maxLamports} (SOLGATE_TIP_MAX_LAMPORTS)`,
      { lamports: String(choice.lamports), maxLamports: String(maxLamports) },
    );
  }
  if (source === undefined) {
    throw new SolgateError(
      "TIPS_UNAVAILABLE",
      "this chain has no block engine configured (SOLGATE_JITO_URL), so there is no tip account to pay",
      {},
    );
  }
  let amount: Omit<PreparedTip, "account">;
  if (choice.kind === "lamports") {
    amount = {
      lamports: choice.lamports,
      level: undefined,
      levelLamports: choice.lamports,
      clamped: false,
      raisedToMinimum: false,
    };
  } else {
    const levelLamports = source.levels.current()?.[choice.level];
    if (levelLamports === undefined) {
      throw new SolgateError(
        "TIP_LEVELS_UNKNOWN",
        `no landed tips are known yet, so level ${choice.level} stands for nothing; give lamports or retry`,
        { level: choice.level },
        { retryAfterMs: 10_000 },
      );
    }
    const clamped = levelLamports > maxLamports;
    const raisedToMinimum = !clamped && levelLamports < MIN_TIP_LAMPORTS;
    amount = {
      lamports: clamped ? maxLamports : raisedToMinimum ? MIN_TIP_LAMPORTS : levelLamports,
      level: choice.level,
      levelLamports,
      clamped,
      raisedToMinimum,
    };
  }
  let accounts: readonly string[];
  try {
    accounts = await source.tipAccounts();
  } catch (error) {
    throw new SolgateError(
      "UPSTREAM_UNAVAILABLE",
      "the block engine did not give its tip accounts",
      {},
      { cause: error, retryAfterMs: 1000 },
    );
  }
  return { ...amount, account: accounts[randomInt(accounts.length)]! };
}

/** The draft with the tip's transfer (from its fee payer) appended. */
export function withTipTransfer<M extends TransactionMessage & TransactionMessageWithFeePayer>(
  message: M,
  tip: PreparedTip,
): M {
  const instruction = getTransferSolInstruction({
    // The fee payer signs later; a no-op signer only names it as the transfer's signing source.
    source: createNoopSigner(message.feePayer.address),
    destination: tip.account as Address,
    amount: tip.lamports,
  });
  return appendTransactionMessageInstruction(instruction, message) as M;
}
