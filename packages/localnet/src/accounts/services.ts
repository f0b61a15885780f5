/** What the account method handlers share: the index, LiteSVM reads, and mint lookups. */
import type { AccountIndex } from "./account-index.ts";
import { encodeBase58 } from "./base58.ts";
import type { MintLookup } from "./encode-account.ts";
import { NATIVE_MINT, NATIVE_MINT_DECIMALS } from "./program-ids.ts";
import type { SvmStore } from "./svm-store.ts";
import { mintInfo, type MintInfo } from "./token-parse.ts";

export interface AccountServices {
  readonly index: AccountIndex;
  readonly store: SvmStore;
  readonly apiVersion: string;
}

/**
 * Mint lookup for a single account read (agave's `get_parsed_token_account`): reads the mint from
 * LiteSVM, whatever its owner, no shortcut for wrapped SOL.
 */
export function liveMintLookup(store: SvmStore): MintLookup {
  return (mint) => {
    const account = store.read(mint);
    return account === null ? null : mintInfo(account.data, () => store.unixTimestamp());
  };
}

/**
 * Mint lookup for scans (agave's `get_parsed_token_accounts`): wrapped SOL is answered without a
 * read; other mints are read once per request.
 */
export function scanMintLookup(store: SvmStore): MintLookup {
  // agave reads one bank's clock per request; so do we.
  let now: bigint | undefined;
  const unixTimestamp = () => (now ??= store.unixTimestamp());
  const memo = new Map<string, MintInfo | null>();
  // Most scans are over one mint: compare with the last one before building a map key.
  let lastMint: Uint8Array | undefined;
  let lastInfo: MintInfo | null = null;
  return (mint) => {
    if (lastMint !== undefined && sameBytes(lastMint, mint)) return lastInfo;
    lastMint = mint;
    lastInfo = lookup(mint);
    return lastInfo;
  };

  function lookup(mint: Uint8Array): MintInfo | null {
    const key = Buffer.from(mint.buffer, mint.byteOffset, mint.byteLength).toString("latin1");
    let info = memo.get(key);
    if (info === undefined) {
      if (encodeBase58(mint) === NATIVE_MINT) {
        info = { decimals: NATIVE_MINT_DECIMALS };
      } else {
        const account = store.read(mint);
        info = account === null ? null : mintInfo(account.data, unixTimestamp);
      }
      memo.set(key, info);
    }
    return info;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
