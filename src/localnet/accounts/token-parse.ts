/**
 * SPL Token / Token-2022 accounts in agave's jsonParsed form (`parse_token_v3`): token accounts,
 * mints and multisigs, with amounts rendered as `UiTokenAmount` from the mint's decimals.
 * Known gap: mints with the interest-bearing or scaled-UI-amount extension get plain amounts
 * (agave applies the rate or multiplier to `uiAmount`/`uiAmountString`).
 */
import { encodeBase58 } from "./base58.ts";
import { uiExtension, type UiExtension } from "./token-extensions.ts";
import { isValidTokenAccountData, unpackMint, unpackMultisig, unpackTokenAccount } from "./token-layout.ts";

/** What agave needs from a token account's mint to render amounts. */
export interface MintInfo {
  readonly decimals: number;
}

/** agave's `UiTokenAmount`. */
export interface UiTokenAmount {
  readonly uiAmount: number | null;
  readonly decimals: number;
  readonly amount: string;
  readonly uiAmountString: string;
}

/** `{type, info}` as it sits under `data.parsed`. */
export interface ParsedToken {
  readonly type: "account" | "mint" | "multisig";
  readonly info: Record<string, unknown>;
}

const STATES = { 1: "initialized", 2: "frozen" } as const;
const POWERS_OF_TEN: readonly number[] = Array.from({ length: 20 }, (_, i) => Number(10n ** BigInt(i)));

/** agave's `real_number_string_trimmed`: "1.5" for 1500 at 3 decimals, "0.000000001", "10". */
export function realNumberStringTrimmed(amount: bigint, decimals: number): string {
  const digits = amount.toString();
  if (decimals === 0) return digits;
  const padded = digits.padStart(decimals + 1, "0");
  const text = `${padded.slice(0, padded.length - decimals)}.${padded.slice(padded.length - decimals)}`;
  return text.replace(/0+$/, "").replace(/\.$/, "");
}

/**
 * agave's `token_amount_to_ui_amount_v3` without interest or scaling: `uiAmount` is the IEEE double
 * amount / 10^decimals (null when 10^decimals overflows a u64, i.e. decimals > 19).
 */
export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  const divisor = POWERS_OF_TEN[decimals];
  return {
    uiAmount: divisor === undefined ? null : Number(amount) / divisor,
    decimals,
    amount: amount.toString(),
    uiAmountString: realNumberStringTrimmed(amount, decimals),
  };
}

/** agave's `get_token_account_mint`: the mint of a valid (initialized) token account. */
export function tokenAccountMint(data: Uint8Array): Uint8Array | null {
  return isValidTokenAccountData(data) ? data.subarray(0, 32) : null;
}

/** agave's `get_additional_mint_data`: decimals of data that unpacks as a mint, else null. */
export function mintInfo(data: Uint8Array): MintInfo | null {
  const mint = unpackMint(data);
  return mint === null ? null : { decimals: mint.base.decimals };
}

function extensionsOf(list: readonly { type: number; value: Uint8Array }[] | null): UiExtension[] {
  return (list ?? []).map(uiExtension);
}

function key(bytes: Uint8Array | null): string | null {
  return bytes === null ? null : encodeBase58(bytes);
}

/**
 * Parses token-program account data; null where agave's parser errors (so the caller falls back to
 * base64). A token account needs its mint's info; without it the account is unparseable, as in agave.
 */
export function parseTokenData(data: Uint8Array, mint: MintInfo | null): ParsedToken | null {
  const account = unpackTokenAccount(data);
  if (account !== null) {
    if (mint === null) return null;
    const base = account.base;
    const info: Record<string, unknown> = {
      mint: encodeBase58(base.mint),
      owner: encodeBase58(base.owner),
      tokenAmount: uiTokenAmount(base.amount, mint.decimals),
    };
    if (base.delegate !== null) info.delegate = encodeBase58(base.delegate);
    info.state = STATES[base.state];
    info.isNative = base.isNative !== null;
    if (base.isNative !== null) info.rentExemptReserve = uiTokenAmount(base.isNative, mint.decimals);
    if (base.delegate !== null) info.delegatedAmount = uiTokenAmount(base.delegatedAmount, mint.decimals);
    if (base.closeAuthority !== null) info.closeAuthority = encodeBase58(base.closeAuthority);
    const extensions = extensionsOf(account.extensions);
    if (extensions.length > 0) info.extensions = extensions;
    return { type: "account", info };
  }
  const mintState = unpackMint(data);
  if (mintState !== null) {
    const base = mintState.base;
    const info: Record<string, unknown> = {
      mintAuthority: key(base.mintAuthority),
      supply: base.supply.toString(),
      decimals: base.decimals,
      isInitialized: true,
      freezeAuthority: key(base.freezeAuthority),
    };
    const extensions = extensionsOf(mintState.extensions);
    if (extensions.length > 0) info.extensions = extensions;
    return { type: "mint", info };
  }
  const multisig = unpackMultisig(data);
  if (multisig !== null) {
    return {
      type: "multisig",
      info: {
        numRequiredSigners: multisig.m,
        numValidSigners: multisig.n,
        isInitialized: true,
        signers: multisig.signers.filter((signer) => signer.some((byte) => byte !== 0)).map(encodeBase58),
      },
    };
  }
  return null;
}
