/**
 * Every holder of a mint, page by page, in token account address order (stable across pages and
 * replicas: the cursor holds the last token account served). One getProgramAccounts reads every
 * token account of the mint with only its owner and amount (a 40-byte data slice); the sorted
 * snapshot is kept in the key-list cache (20 s after its last read, 120 s at most), so a listing's
 * pages are one consistent view, and page 100 costs what page 1 costs. A snapshot is columns (the
 * addresses, one buffer of slices, owners in base58 made as pages serve them), not an object per
 * holder: 100,000 holders are a few arrays for the collector to walk.
 */
import { createHash } from "node:crypto";
import type { Address, GetAccountInfoApi, Rpc } from "@solana/kit";
import { SolgateError } from "../errors.ts";
import { CURSOR_SCOPE_BYTES, keysetCursors } from "../page-cursor.ts";
import { formatUnits, toAccountData } from "../programs/account-mapping.ts";
import type { RpcAccount, TokenAmount } from "../programs/account-mapping.ts";
import { compareAddresses, indexAfter } from "../programs/address-order.ts";
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

/** Every token account of a mint with its owner and amount, sorted by address. */
export interface Snapshot {
  /** How many token accounts. */
  readonly length: number;
  /** Their addresses, in address order. */
  readonly accounts: readonly string[];
  /** Account i's owner (32 bytes) and amount (u64 LE) at `i * HOLDER_SLICE.length`. */
  readonly slices: Buffer;
  /** Account i's owner in base58, once a page has served it. */
  readonly owners: (string | undefined)[];
}

/** Creates the core over a chain's upstream. */
export function createTokenHolders(
  deps: { upstream: TokenHoldersUpstream },
  options: { cache?: KeyListCacheOptions } = {},
): TokenHolders {
  const { rpc } = deps.upstream;
  const cache = createKeyListCache<Snapshot>(options.cache);
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
  function snapshot(mint: Address, programId: Address): Promise<Snapshot> {
    return cache.get(`${programId}:${mint}`, async () => {
      const filters = [
        { memcmp: { offset: 0n, bytes: mint, encoding: "base58" as const } },
        ...(programId === TOKEN_PROGRAM ? [{ dataSize: BigInt(TOKEN_ACCOUNT_SIZE) }] : []),
      ];
      const found = await deps.upstream.getProgramAccountSlices(programId, {
        dataSlice: HOLDER_SLICE,
        filters,
        commitment: COMMITMENT,
      });
      return sortedSnapshot(found.keys, found.data, found.lengths);
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
      const { length, accounts, slices, owners } = await snapshot(mint, programId);
      let next = after === undefined ? 0 : indexAfter(accounts, after);
      const items: TokenHolder[] = [];
      for (; next < length && items.length < limit; next++) {
        const at = next * HOLDER_SLICE.length;
        if (!includeZero && isZero(slices, at + 32)) continue;
        items.push({
          tokenAccount: accounts[next],
          owner: (owners[next] ??= base58OfKey(slices, at)),
          amount: tokenAmount(slices.readBigUInt64LE(at + 32), decimals),
        });
      }
      // Past the last item: only empty accounts (left out) may remain.
      while (!includeZero && next < length && isZero(slices, next * HOLDER_SLICE.length + 32)) next++;
      const nextCursor = next < length ? holderCursors.encode(scope, accounts[next - 1]) : null;
      return { mint, program, items, nextCursor };
    },
  };
}

/**
 * The snapshot of a scan's accounts (in the node's order): the whole slices only (a shorter one is
 * not a token account), sorted by address. Nodes answer in address order, so that is checked first
 * and the scan's own arrays are kept when it holds.
 */
export function sortedSnapshot(keys: string[], data: Buffer, lengths: Uint32Array): Snapshot {
  const width = HOLDER_SLICE.length;
  let inOrder = true;
  for (let i = 0; i < keys.length && inOrder; i++) {
    inOrder = lengths[i] === width && (i === 0 || compareAddresses(keys[i - 1], keys[i]) < 0);
  }
  if (inOrder) return { length: keys.length, accounts: keys, slices: data, owners: new Array(keys.length) };
  const order: number[] = [];
  for (let i = 0; i < keys.length; i++) if (lengths[i] === width) order.push(i);
  order.sort((a, b) => compareAddresses(keys[a], keys[b]));
  const slices = Buffer.allocUnsafe(order.length * width);
  for (let i = 0; i < order.length; i++) data.copy(slices, i * width, order[i] * width, (order[i] + 1) * width);
  return { length: order.length, accounts: order.map((i) => keys[i]), slices, owners: new Array(order.length) };
}

/** Whether the u64 at `bytes[at]` is zero. */
function isZero(bytes: Buffer, at: number): boolean {
  return bytes.readUInt32LE(at) === 0 && bytes.readUInt32LE(at + 4) === 0;
}

function tokenAmount(raw: bigint, decimals: number): TokenAmount {
  const uiString = formatUnits(raw, decimals);
  return { raw, decimals, ui: Number(uiString), uiString };
}
