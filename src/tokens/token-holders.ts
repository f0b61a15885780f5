/**
 * Every holder of a mint, page by page, in token account address order (stable across pages and
 * replicas: the cursor holds the last token account served). Like program-account listings, the
 * sorted list of the mint's token accounts comes from one key-only scan (getProgramAccounts with an
 * empty data slice), kept a short while in the key-list cache; each page then reads only its
 * accounts' owner and amount (a 40-byte data slice), so balances on a page are as fresh as the page.
 */
import { createHash } from "node:crypto";
import type { Address, GetAccountInfoApi, GetMultipleAccountsApi, Rpc } from "@solana/kit";
import { SolgateError } from "../errors.ts";
import { CURSOR_SCOPE_BYTES, keysetCursors } from "../page-cursor.ts";
import { formatUnits, toAccountData } from "../programs/account-mapping.ts";
import type { RpcAccount, TokenAmount } from "../programs/account-mapping.ts";
import { indexAfter, sortAddresses } from "../programs/address-order.ts";
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
/** getMultipleAccounts takes at most 100 addresses. */
const MULTIPLE_ACCOUNTS_CHUNK = 100;
/** Owner (offset 32) and amount (offset 64) of a token account. */
const HOLDER_SLICE = { offset: 32, length: 40 };
/** A classic SPL Token account is exactly this long (Token-2022 accounts may carry extensions after it). */
const TOKEN_ACCOUNT_SIZE = 165;

/** ListTokenHolders cursors: scoped by the mint and whether empty accounts are listed. */
export const holderCursors = keysetCursors(
  (scope: string) => createHash("sha256").update("solgate.holders.v1:").update(scope).digest().subarray(0, CURSOR_SCOPE_BYTES),
  "the cursor belongs to another listing; send the mint and include_zero of the first page",
);

/** What the core needs of the upstream. */
export interface TokenHoldersUpstream {
  rpc: Rpc<GetAccountInfoApi & GetMultipleAccountsApi>;
  getProgramAccountKeys: Upstream["getProgramAccountKeys"];
}

/** Creates the core over a chain's upstream. */
export function createTokenHolders(deps: { upstream: TokenHoldersUpstream }, options: { cache?: KeyListCacheOptions } = {}): TokenHolders {
  const { rpc } = deps.upstream;
  const cache = createKeyListCache(options.cache);

  async function mintOf(mint: Address): Promise<{ program: TokenProgramName; programId: Address; decimals: number }> {
    const { value } = await rpc.getAccountInfo(mint, { encoding: "jsonParsed", commitment: COMMITMENT }).send();
    if (value === null) throw new SolgateError("NOT_FOUND", `no account exists at ${mint}`, { mint });
    const program = tokenProgramName(value.owner);
    const data = toAccountData(value as unknown as RpcAccount);
    const decimals = data.format === "parsed" && "fields" in data.parsed && data.parsed.type === "mint" ? data.parsed.fields.decimals : undefined;
    if (program === undefined || typeof decimals !== "number") {
      throw new SolgateError("NOT_FOUND", `${mint} is not a token mint (its account is not a mint of SPL Token or Token-2022)`, { mint });
    }
    return { program, programId: value.owner, decimals };
  }

  async function sortedAccounts(mint: Address, programId: Address): Promise<readonly string[]> {
    return cache.get(`${programId}:${mint}`, async () => {
      const filters = [
        { memcmp: { offset: 0n, bytes: mint, encoding: "base58" as const } },
        ...(programId === TOKEN_PROGRAM ? [{ dataSize: BigInt(TOKEN_ACCOUNT_SIZE) }] : []),
      ];
      return sortAddresses(await deps.upstream.getProgramAccountKeys(programId, { filters, commitment: COMMITMENT }));
    });
  }

  /** Owner and amount of each of `addresses` (null: closed or no longer this mint's since the scan). */
  async function holdings(addresses: readonly string[], programId: Address): Promise<({ owner: string; raw: bigint } | null)[]> {
    const chunks: string[][] = [];
    for (let i = 0; i < addresses.length; i += MULTIPLE_ACCOUNTS_CHUNK) chunks.push(addresses.slice(i, i + MULTIPLE_ACCOUNTS_CHUNK));
    const results = await Promise.all(
      chunks.map(async (chunk) => {
        const { value } = await rpc
          .getMultipleAccounts(chunk as Address[], { encoding: "base64", dataSlice: HOLDER_SLICE, commitment: COMMITMENT })
          .send();
        return value.map((account) => {
          if (account === null || account.owner !== programId) return null;
          const bytes = Buffer.from(account.data[0], "base64");
          if (bytes.length < HOLDER_SLICE.length) return null;
          return { owner: base58OfKey(bytes, 0), raw: bytes.readBigUInt64LE(32) };
        });
      }),
    );
    return results.flat();
  }

  return {
    async list(request) {
      const mint = assertAddress(request.mint, "mint");
      const limit = pageLimit(request.limit, DEFAULT_LIMIT, MAX_LIMIT);
      const includeZero = request.includeZero === true;
      const scope = `${mint}:${includeZero ? "all" : "held"}`;
      const after = request.cursor ? holderCursors.decode(request.cursor, scope) : undefined;
      const { program, programId, decimals } = await mintOf(mint);
      const keys = await sortedAccounts(mint, programId);
      const items: TokenHolder[] = [];
      let next = after === undefined ? 0 : indexAfter(keys, after);
      // Skipped accounts (empty, closed) leave a page short: read on until it is full or the list ends.
      while (items.length < limit && next < keys.length) {
        const batch = keys.slice(next, next + (limit - items.length));
        const read = await holdings(batch, programId);
        read.forEach((holding, i) => {
          if (holding === null || (!includeZero && holding.raw === 0n)) return;
          items.push({ tokenAccount: batch[i], owner: holding.owner, amount: tokenAmount(holding.raw, decimals) });
        });
        next += batch.length;
      }
      const nextCursor = next < keys.length ? holderCursors.encode(scope, keys[next - 1]) : null;
      return { mint, program, items, nextCursor };
    },
  };
}

function tokenAmount(raw: bigint, decimals: number): TokenAmount {
  const uiString = formatUnits(raw, decimals);
  return { raw, decimals, ui: Number(uiString), uiString };
}
