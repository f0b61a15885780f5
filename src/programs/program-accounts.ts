/**
 * Pages of the accounts a program owns. getProgramAccounts has no pagination, so a listing fetches
 * the matching keys only (a zero-length data slice), sorts them by address, and fetches the data of
 * one page at a time with getMultipleAccounts. Cursors are stateless (see src/page-cursor.ts); a short-
 * lived key cache makes later pages as cheap as the first.
 */
import type { Address, GetAccountInfoApi, GetMultipleAccountsApi, Rpc } from "@solana/kit";
import { SolgateError, isSolgateError } from "../errors.ts";
import { keysetCursors } from "../page-cursor.ts";
import { nodeErrorOf } from "../upstream/node-errors.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { indexAfter, sortAddresses } from "./address-order.ts";
import { toProgramAccountItem } from "./account-mapping.ts";
import type { ProgramAccountItem, RpcAccount } from "./account-mapping.ts";
import { createKeyListCache } from "./key-list-cache.ts";
import type { KeyListCacheOptions } from "./key-list-cache.ts";
import { isFiltered, normalizeQuery, toRpcFilters } from "./program-query.ts";
import type { NormalizedQuery, ProgramAccountsQuery } from "./program-query.ts";
import { DEFAULT_BROAD_PROGRAMS } from "./token-programs.ts";

export type { ProgramAccountsQuery } from "./program-query.ts";
export type { ProgramAccountItem, AccountData, JsonValue, TokenAccountInfo, TokenAmount } from "./account-mapping.ts";

/** What this core needs of the upstream, and no more. */
export interface ProgramAccountsUpstream {
  rpc: Rpc<GetAccountInfoApi & GetMultipleAccountsApi>;
  getProgramAccountKeys: Upstream["getProgramAccountKeys"];
}

/** One page of a listing. */
export interface ProgramAccountsPage {
  /** The program, as asked. */
  programId: string;
  /** Sorted by address. */
  items: ProgramAccountItem[];
  /** Continues the listing; null on the last page. */
  nextCursor: string | null;
}

/** Lists a program's accounts page by page. */
export interface ProgramAccounts {
  /**
   * One page of the accounts `query.programId` owns that match its filters.
   * @throws SolgateError INVALID_ADDRESS, INVALID_PARAMETER (`details.field`), NOT_FOUND (no such
   *   program), QUERY_TOO_BROAD (needs a filter, or matches more accounts than served), and the
   *   upstream's UPSTREAM_UNAVAILABLE / RATE_LIMITED.
   */
  list(query: ProgramAccountsQuery): Promise<ProgramAccountsPage>;
}

/** Options of {@link createProgramAccounts}. */
export interface ProgramAccountsOptions {
  /** Programs that need a `match` filter (default: SPL Token and Token-2022). */
  broadPrograms?: readonly string[];
  /** A query matching more accounts than this is refused as QUERY_TOO_BROAD (default 250,000). */
  maxMatchingAccounts?: number;
  /** Key-list cache tuning (TTL, total keys). */
  cache?: KeyListCacheOptions;
}

/** Keys and their data are read at one commitment, so a page does not list what its data fetch cannot see. */
const COMMITMENT = "confirmed";
/** getMultipleAccounts takes at most 100 addresses. */
const MULTIPLE_ACCOUNTS_CHUNK = 100;

/** ListProgramAccounts cursors: scoped by the query's hash and keyed by the last address of the page. */
export const programCursors = keysetCursors(
  (queryHash: Uint8Array) => queryHash,
  "the cursor belongs to another query; send the same programId, size and match as for the first page",
);

/** Creates the core over a chain's upstream. */
export function createProgramAccounts(
  deps: { upstream: ProgramAccountsUpstream },
  options: ProgramAccountsOptions = {},
): ProgramAccounts {
  const { upstream } = deps;
  const rpc = upstream.rpc;
  const broadPrograms = new Set(options.broadPrograms ?? DEFAULT_BROAD_PROGRAMS);
  const maxMatchingAccounts = options.maxMatchingAccounts ?? 250_000;
  const cache = createKeyListCache(options.cache);

  async function loadSortedKeys(query: NormalizedQuery): Promise<readonly string[]> {
    await assertIsProgram(query.programId);
    let keys: string[];
    try {
      // One key past the cap is enough to know the query is too broad; the scan stops reading there.
      keys = await upstream.getProgramAccountKeys(query.programId, {
        filters: toRpcFilters(query),
        commitment: COMMITMENT,
        limit: maxMatchingAccounts,
      });
    } catch (error) {
      throw tooBroadOr(error, query);
    }
    if (keys.length > maxMatchingAccounts) {
      throw new SolgateError(
        "QUERY_TOO_BROAD",
        `more than ${maxMatchingAccounts} accounts match, more than are served; add a size or match filter`,
        { programId: query.programId, matching: keys.length, max: maxMatchingAccounts },
      );
    }
    return sortAddresses(keys);
  }

  async function assertIsProgram(programId: Address): Promise<void> {
    const { value } = await rpc
      .getAccountInfo(programId, { encoding: "base64", dataSlice: { offset: 0, length: 0 }, commitment: COMMITMENT })
      .send();
    if (value === null) throw new SolgateError("NOT_FOUND", `no account exists at ${programId}`, { programId });
    if (!value.executable) {
      throw new SolgateError("NOT_FOUND", `${programId} is not a program (its account is not executable)`, {
        programId,
      });
    }
  }

  async function fetchItems(programId: string, addresses: readonly string[]): Promise<ProgramAccountItem[]> {
    const accounts = await fetchAccounts(addresses, "jsonParsed");
    const items: ProgramAccountItem[] = [];
    accounts.forEach((account, i) => {
      // Closed or reassigned between the key scan and now: no longer the program's, so not listed.
      if (account !== null && account.owner === programId) items.push(toProgramAccountItem(addresses[i], account));
    });
    return items;
  }

  async function fetchAccounts(
    addresses: readonly string[],
    encoding: "base64" | "jsonParsed",
  ): Promise<(RpcAccount | null)[]> {
    const chunks: string[][] = [];
    for (let i = 0; i < addresses.length; i += MULTIPLE_ACCOUNTS_CHUNK) {
      chunks.push(addresses.slice(i, i + MULTIPLE_ACCOUNTS_CHUNK));
    }
    const results = await Promise.all(
      chunks.map(async (chunk) => {
        const { value } = await rpc
          .getMultipleAccounts(chunk as Address[], { encoding: encoding as "base64", commitment: COMMITMENT })
          .send();
        return value as unknown as (RpcAccount | null)[];
      }),
    );
    return results.flat();
  }

  return {
    async list(request) {
      const query = normalizeQuery(request);
      const after = request.cursor ? programCursors.decode(request.cursor, query.hash) : undefined;
      if (broadPrograms.has(query.programId) && query.matches.length === 0) {
        throw new SolgateError(
          "QUERY_TOO_BROAD",
          `${query.programId} owns too many accounts to list without a match filter; add a match filter (e.g. the mint at offset 0 or the owner at offset 32)`,
          { programId: query.programId },
        );
      }
      const keys = await cache.get(query.hash.toString("hex"), () => loadSortedKeys(query));
      const start = after === undefined ? 0 : indexAfter(keys, after);
      const end = Math.min(keys.length, start + query.limit);
      const pageKeys = keys.slice(start, end);
      const items = pageKeys.length > 0 ? await fetchItems(query.programId, pageKeys) : [];
      const nextCursor = end < keys.length ? programCursors.encode(query.hash, pageKeys[pageKeys.length - 1]) : null;
      return { programId: query.programId, items, nextCursor };
    },
  };
}

/**
 * A failed key scan: nodes refuse scans they will not serve (`scan-refused`: key excluded from a
 * secondary index, or a scan error), and an unfiltered scan that times out is too broad rather
 * than an outage. Anything else passes through.
 */
function tooBroadOr(error: unknown, query: NormalizedQuery): unknown {
  const nodeError = nodeErrorOf(error);
  // The scan's parameters are the client's filters: a node that refuses them (agave 4.4 refuses a token
  // program's mint or owner match that is not 32 bytes) refused the client's query, with its reason.
  if (nodeError?.kind === "invalid-params" && isFiltered(query)) {
    return new SolgateError(
      "INVALID_PARAMETER",
      `the node refused these filters: ${nodeError.message.slice(0, 200)}`,
      { field: "match", programId: query.programId },
      { cause: error },
    );
  }
  const scanRefused = nodeError?.kind === "scan-refused";
  const timedOutUnfiltered =
    !isFiltered(query) &&
    isSolgateError(error) &&
    error.reason === "UPSTREAM_UNAVAILABLE" &&
    error.details.failure === "timeout";
  if (scanRefused || timedOutUnfiltered) {
    return new SolgateError(
      "QUERY_TOO_BROAD",
      `the node will not scan all accounts of ${query.programId} for this query; add a size or match filter`,
      { programId: query.programId },
      { cause: error },
    );
  }
  return error;
}
