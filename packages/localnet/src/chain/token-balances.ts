/**
 * Pre/post token balances of a transaction, in agave's `UiTransactionTokenBalance` shape.
 *
 * Only the fixed SPL Token account layout is read (mint at 0, owner at 32, amount at 64, state at
 * 108); Token-2022 accounts share it. Mint decimals are cached: they never change after
 * initialization.
 */
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../accounts/program-ids.ts";

/** A token balance entry as a node reports it. */
export interface TokenBalanceJson {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: { amount: string; decimals: number; uiAmount: number | null; uiAmountString: string };
}

/** Formats `amount / 10^decimals` without floating point error, trailing zeros trimmed. */
export function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const s = amount.toString().padStart(decimals + 1, "0");
  const whole = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, "");
  return frac.length > 0 ? `${whole}.${frac}` : whole;
}

/** Is this account data an initialized token account of a token program? */
export function isTokenAccount(owner: string, data: Uint8Array): boolean {
  if (owner !== TOKEN_PROGRAM && owner !== TOKEN_2022_PROGRAM) return false;
  if (data.length < 165) return false;
  if (data.length > 165 && (owner !== TOKEN_2022_PROGRAM || data[165] !== 2)) return false;
  return data[108] === 1 || data[108] === 2;
}

/** Builds one token balance entry; `decimalsOf` returns null when the mint cannot be read. */
export function tokenBalance(
  accountIndex: number,
  owner: string,
  data: Uint8Array,
  encode: (bytes: Uint8Array) => string,
  decimalsOf: (mint: string) => number | null,
): TokenBalanceJson | null {
  const mint = encode(data.subarray(0, 32));
  const decimals = decimalsOf(mint);
  if (decimals === null) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const amount = view.getBigUint64(64, true);
  const text = uiAmountString(amount, decimals);
  return {
    accountIndex,
    mint,
    owner: encode(data.subarray(32, 64)),
    programId: owner,
    uiTokenAmount: { amount: amount.toString(), decimals, uiAmount: Number(text), uiAmountString: text },
  };
}
