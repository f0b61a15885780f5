/**
 * SPL Token / Token-2022 accounts in agave's jsonParsed form (`parse_token_v3`): token accounts,
 * mints and multisigs, with amounts rendered as `UiTokenAmount` from the mint.
 */
import { encodeBase58 } from "./base58.ts";
import { sortKeysDeep } from "./json.ts";
import { uiExtension, type UiExtension } from "./token-extensions.ts";
import { isValidTokenAccountData, unpackMint, unpackMultisig, unpackTokenAccount } from "./token-layout.ts";
import { uiTokenAmount, type InterestBearing, type MintInfo, type ScaledUiAmount } from "./ui-amount.ts";

export type { MintInfo, UiTokenAmount } from "./ui-amount.ts";

/** `{type, info}` as it sits under `data.parsed`. */
export interface ParsedToken {
  readonly info: Record<string, unknown>;
  readonly type: "account" | "mint" | "multisig";
}

const STATES = { 1: "initialized", 2: "frozen" } as const;
const INTEREST_BEARING = 10;
const SCALED_UI_AMOUNT = 25;

/** agave's `get_token_account_mint`: the mint of a valid (initialized) token account. */
export function tokenAccountMint(data: Uint8Array): Uint8Array | null {
  return isValidTokenAccountData(data) ? data.subarray(0, 32) : null;
}

/**
 * agave's `get_additional_mint_data`: decimals (plus interest-bearing / scaled-UI-amount settings
 * and the clock, when the mint has them) of data that unpacks as a mint, else null.
 */
export function mintInfo(data: Uint8Array, unixTimestamp: () => bigint): MintInfo | null {
  const mint = unpackMint(data);
  if (mint === null) return null;
  let interestBearing: InterestBearing | undefined;
  let scaledUiAmount: ScaledUiAmount | undefined;
  for (const { type, value } of mint.extensions ?? []) {
    const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
    if (type === INTEREST_BEARING && value.length === 52) {
      interestBearing = {
        initializationTimestamp: view.getBigInt64(32, true),
        preUpdateAverageRate: view.getInt16(40, true),
        lastUpdateTimestamp: view.getBigInt64(42, true),
        currentRate: view.getInt16(50, true),
      };
    } else if (type === SCALED_UI_AMOUNT && value.length === 56) {
      scaledUiAmount = {
        multiplier: view.getFloat64(32, true),
        newMultiplierEffectiveTimestamp: view.getBigInt64(40, true),
        newMultiplier: view.getFloat64(48, true),
      };
    }
  }
  const decimals = mint.base.decimals;
  if (interestBearing === undefined && scaledUiAmount === undefined) return { decimals };
  return { decimals, interestBearing, scaledUiAmount, unixTimestamp: unixTimestamp() };
}

function extensionsOf(list: readonly { type: number; value: Uint8Array }[] | null): UiExtension[] {
  return (list ?? []).map(uiExtension);
}

function key(bytes: Uint8Array | null): string | null {
  return bytes === null ? null : encodeBase58(bytes);
}

/** `UiTokenAmount` with its keys in the sorted order agave's `parsed` maps have. */
function sortedAmount(amount: bigint, mint: MintInfo): Record<string, unknown> {
  const { uiAmount, decimals, amount: text, uiAmountString } = uiTokenAmount(amount, mint);
  return { amount: text, decimals, uiAmount, uiAmountString };
}

// Scans render one mint many times: remember the last mint's base58.
let lastMint: Uint8Array | undefined;
let lastMintText = "";
function mintText(mint: Uint8Array): string {
  if (lastMint === undefined || Buffer.compare(lastMint, mint) !== 0) {
    lastMint = Uint8Array.from(mint);
    lastMintText = encodeBase58(mint);
  }
  return lastMintText;
}

/**
 * Parses token-program account data; null where agave's parser errors (so the caller falls back to
 * base64). A token account needs its mint's info; without it the account is unparseable, as in agave.
 * Keys are written in sorted order, as agave's `parsed` (a serde_json map) has them.
 */
export function parseTokenData(data: Uint8Array, mint: MintInfo | null): ParsedToken | null {
  const account = unpackTokenAccount(data);
  if (account !== null) {
    if (mint === null) return null;
    const base = account.base;
    const info: Record<string, unknown> = {};
    if (base.closeAuthority !== null) info.closeAuthority = encodeBase58(base.closeAuthority);
    if (base.delegate !== null) {
      info.delegate = encodeBase58(base.delegate);
      info.delegatedAmount = sortedAmount(base.delegatedAmount, mint);
    }
    const extensions = extensionsOf(account.extensions);
    if (extensions.length > 0) info.extensions = sortKeysDeep(extensions);
    info.isNative = base.isNative !== null;
    info.mint = mintText(base.mint);
    info.owner = encodeBase58(base.owner);
    if (base.isNative !== null) info.rentExemptReserve = sortedAmount(base.isNative, mint);
    info.state = STATES[base.state];
    info.tokenAmount = sortedAmount(base.amount, mint);
    return { info, type: "account" };
  }
  const mintState = unpackMint(data);
  if (mintState !== null) {
    const base = mintState.base;
    const info: Record<string, unknown> = { decimals: base.decimals };
    const extensions = extensionsOf(mintState.extensions);
    if (extensions.length > 0) info.extensions = sortKeysDeep(extensions);
    info.freezeAuthority = key(base.freezeAuthority);
    info.isInitialized = true;
    info.mintAuthority = key(base.mintAuthority);
    info.supply = base.supply.toString();
    return { info, type: "mint" };
  }
  const multisig = unpackMultisig(data);
  if (multisig !== null) {
    return {
      info: {
        isInitialized: true,
        numRequiredSigners: multisig.m,
        numValidSigners: multisig.n,
        signers: multisig.signers.filter((signer) => signer.some((byte) => byte !== 0)).map(encodeBase58),
      },
      type: "multisig",
    };
  }
  return null;
}
