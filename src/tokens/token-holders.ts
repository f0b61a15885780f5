/**
 * Every holder of a mint, page by page, in token account address order (stable across pages and
 * replicas: the cursor holds the last token account served). One getProgramAccounts reads every
 * token account of the mint with only its owner and amount (a 40-byte data slice); the sorted
 * snapshot is kept in the key-list cache (20 s after its last read, 120 s at most), so a listing's
 * pages are one consistent view, and page 100 costs what page 1 costs.
 */
import { createHash } from "node:crypto";
import type { Address, GetAccountInfoApi, Rpc } from "@solana/kit";
import { SolgateError } from "../errors.ts";
import { CURSOR_SCOPE_BYTES, keysetCursors } from "../page-cursor.ts";
import { formatUnits, toAccountData } from "../programs/account-mapping.ts";
import type { RpcAccount, TokenAmount } from "../programs/account-mapping.ts";
import { compareAddresses } from "../programs/address-order.ts";
import { createLruCache } from "../collections/lru-cache.ts";
import { createKeyListCache } from "../programs/key-list-cache.ts";
import type { KeyListCacheOptions } from "../programs/key-list-cache.ts";
import { tokenProgramName } from "../programs/token-programs.ts";
import type { TokenProgramName } from "../programs/token-programs.ts";
import { assertAddress, pageLimit } from "../request-checks.ts";
import { base58OfKey } from "../solana/base58-key.ts";
import { TOKEN_PROGRAM } from "../solana/program-ids.ts";
import type { Upstream } from "../upstream/upstream.ts";

/** One token account holding the mint. */
export interface TokenHolder {
  tokenAccount: string;
  owner: string;
  amount: TokenAmount;
}

/** One page of a mint's holders. */
export interface TokenHoldersPage {
  mint: string;
  program: TokenProgramName;
  items: TokenHolder[];
  /** Null on the last page. */
  nextCursor: string | null;
}

/** Lists the holders of mints. */
export interface TokenHolders {
  /**
   * One page of the token accounts holding `mint`, sorted by token account address; accounts holding
   * nothing are skipped unless `includeZero`.
   * @throws SolgateError INVALID_ADDRESS, INVALID_PARAMETER (`limit`, `cursor`), NOT_FOUND (no mint
   *   there), and the upstream's UPSTREAM_UNAVAILABLE / RATE_LIMITED.
   */
  list(request: { mint: string; limit?: number; cursor?: string; includeZero?: boolean }): Promise<TokenHoldersPage>;
}

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
const COMMITMENT = "confirmed";
/** Owner (offset 32) and amount (offset 64) of a token account. */
const HOLDER_SLICE = { offset: 32, length: 40 };
/** A classic SPL Token account is exactly this long (Token-2022 accounts may carry extensions after it). */
const TOKEN_ACCOUNT_SIZE = 165;

/** ListTokenHolders cursors: scoped by the mint and whether empty accounts are listed. */
export const holderCursors = keysetCursors(
  (scope: string) =>
    createHash("sha256").update("solgate.holders.v1:").update(scope).digest().subarray(0, CURSOR_SCOPE_BYTES),
  "the cursor belongs to another listing; send the mint and include_zero of the first page",
);

/** What the core needs of the upstream. */
export interface TokenHoldersUpstream {
  rpc: Rpc<GetAccountInfoApi>;
  getProgramAccountSlices: Upstream["getProgramAccountSlices"];
}

/** What a listing needs of its mint. */
interface MintFacts {
  program: TokenProgramName;
  programId: Address;
  decimals: number;
}

/** How long a mint's facts are kept (only a Token-2022 mint with a close authority can change them). */
const MINT_TTL_MS = 120_000;

/** One token account in a cached snapshot. */
interface Holding {
  tokenAccount: string;
  owner: string;
  raw: bigint;
}

/** Creates the core over a chain's upstream. */
export function createTokenHolders(
  deps: { upstream: TokenHoldersUpstream },
  options: { cache?: KeyListCacheOptions } = {},
): TokenHolders {
  const { rpc } = deps.upstream;
  const cache = createKeyListCache<Holding>(options.cache);
  // A mint's program and decimals never change: every page of a listing after the first skips the lookup.
  const mints = createLruCache<MintFacts>({ maxEntries: 10_000 });
  const mintOf = (mint: Address) =>
    mints.getOrLoad(mint, async () => ({ value: await lookUpMint(mint), ttlMs: MINT_TTL_MS }));

  async function lookUpMint(mint: Address): Promise<MintFacts> {
    const { value } = await rpc.getAccountInfo(mint, { encoding: "jsonParsed", commitment: COMMITMENT }).send();
    if (value === null) throw new SolgateError("NOT_FOUND", `no account exists at ${mint}`, { mint });
    const program = tokenProgramName(value.owner);
    const data = toAccountData(value as unknown as RpcAccount);
    const decimals =
      data.format === "parsed" && "fields" in data.parsed && data.parsed.type === "mint"
        ? data.parsed.fields.decimals
        : undefined;
    if (program === undefined || typeof decimals !== "number") {
      throw new SolgateError(
        "NOT_FOUND",
        `${mint} is not a token mint (its account is not a mint of SPL Token or Token-2022)`,
        { mint },
      );
    }
    return { program, programId: value.owner, decimals };
  }

  /** Every token account of `mint`, sorted by address, with owner and amount. */
  function snapshot(mint: Address, programId: Address): Promise<readonly Holding[]> {
    return cache.get(`${programId}:${mint}`, async () => {
      const filters = [
        { memcmp: { offset: 0n, bytes: mint, encoding: "base58" as const } },
        ...(programId === TOKEN_PROGRAM ? [{ dataSize: BigInt(TOKEN_ACCOUNT_SIZE) }] : []),
      ];
      const accounts = await deps.upstream.getProgramAccountSlices(programId, {
        dataSlice: HOLDER_SLICE,
        filters,
        commitment: COMMITMENT,
      });
      const holdings: Holding[] = [];
      for (const { pubkey, data } of accounts) {
        if (data.length < HOLDER_SLICE.length) continue;
        holdings.push({ tokenAccount: pubkey, owner: base58OfKey(data, 0), raw: data.readBigUInt64LE(32) });
      }
      return holdings.sort((a, b) => compareAddresses(a.tokenAccount, b.tokenAccount));
    });
  }

  return {
    async list(request) {
      const mint = assertAddress(request.mint, "mint");
      const limit = pageLimit(request.limit, DEFAULT_LIMIT, MAX_LIMIT);
      const includeZero = request.includeZero === true;
      const scope = `${mint}:${includeZero ? "all" : "held"}`;
      const after = request.cursor ? holderCursors.decode(request.cursor, scope) : undefined;
      const { program, programId, decimals } = await mintOf(mint);
      const holdings = await snapshot(mint, programId);
      let next = after === undefined ? 0 : indexAfter(holdings, after);
      const items: TokenHolder[] = [];
      for (; next < holdings.length && items.length < limit; next++) {
        const h = holdings[next];
        if (includeZero || h.raw > 0n)
          items.push({ tokenAccount: h.tokenAccount, owner: h.owner, amount: tokenAmount(h.raw, decimals) });
      }
      // Past the last item: only empty accounts (left out) may remain.
      while (!includeZero && next < holdings.length && holdings[next].raw === 0n) next++;
      const nextCursor = next < holdings.length ? holderCursors.encode(scope, holdings[next - 1].tokenAccount) : null;
      return { mint, program, items, nextCursor };
    },
  };
}

/** Index of the first holding whose token account sorts after `address`. */
function indexAfter(holdings: readonly Holding[], address: string): number {
  let low = 0;
  let high = holdings.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareAddresses(holdings[mid].tokenAccount, address) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

function tokenAmount(raw: bigint, decimals: number): TokenAmount {
  const uiString = formatUnits(raw, decimals);
  return { raw, decimals, ui: Number(uiString), uiString };
}
