/**
 * getProgramAccounts over the account index. Token scans confined to token accounts by their
 * filters go through the owner or mint index (agave's `get_spl_token_{owner,mint}_filter`), the
 * rest walk the program's accounts. Results come in pubkey byte order, as agave's sorted scan.
 */
import type { MethodTable } from "../rpc/protocol.ts";
import type { AccountIndex, IndexedAccount } from "./account-index.ts";
import { withElementTexts } from "../rpc/json.ts";
import {
  encodeAccount,
  encodeParsedTokenAccount,
  slicedKeyedJson,
  type AccountEncoding,
  type DataSlice,
  type MintLookup,
} from "./encode-account.ts";
import { decodeFilters, filtersAllow, tokenIndexKey, verifyFilters, type Filter } from "./filters.ts";
import {
  accountInfoConfig,
  checkArity,
  contextSlot,
  decodeParams,
  expectBool,
  expectObject,
  expectString,
  optional,
  verifyPubkey,
} from "./params.ts";
import { isTokenProgram } from "./program-ids.ts";
import { rpcResponse } from "./response.ts";
import { scanMintLookup, type AccountServices } from "./services.ts";
import type { Address } from "@solana/kit";

/** agave's `RpcKeyedAccount`. */
export interface KeyedAccount {
  readonly pubkey: string;
  readonly account: unknown;
}

/** The accounts a scan must look at: an index bucket when the filters allow it, else the program. */
export function scanCandidates(
  index: AccountIndex,
  program: Address,
  filters: readonly Filter[],
): readonly IndexedAccount[] {
  const owner = tokenIndexKey(program, filters, 32);
  if (owner !== null) return index.tokenAccountsByOwner(program, owner);
  const mint = tokenIndexKey(program, filters, 0);
  if (mint !== null) return index.tokenAccountsByMint(program, mint);
  return index.byOwner(program);
}

/**
 * Encodes the accounts that pass the filters. jsonParsed over a token program follows agave's
 * `get_parsed_token_accounts`: accounts that do not parse are left out, and dataSlice is ignored.
 */
export function encodeMatches(
  candidates: readonly IndexedAccount[],
  filters: readonly Filter[],
  program: string,
  encoding: AccountEncoding,
  slice: DataSlice | undefined,
  mints: MintLookup,
): KeyedAccount[] {
  const results: KeyedAccount[] = [];
  if (encoding === "base64" && slice !== undefined) {
    // A few bytes of many accounts (a mint's holders): the accounts' texts are memoised with their slice.
    const texts: string[] = [];
    for (const entry of candidates) {
      if (!filtersAllow(filters, entry.data)) continue;
      const account = encodeAccount(entry, encoding, slice, mints);
      results.push({ pubkey: entry.address, account });
      texts.push(slicedKeyedJson(entry, entry.address, account));
    }
    return withElementTexts(results, texts);
  }
  const parsedTokens = encoding === "jsonParsed" && isTokenProgram(program);
  for (const entry of candidates) {
    if (!filtersAllow(filters, entry.data)) continue;
    if (parsedTokens) {
      const account = encodeParsedTokenAccount(entry, mints);
      if (account !== null) results.push({ pubkey: entry.address, account });
    } else {
      results.push({ pubkey: entry.address, account: encodeAccount(entry, encoding, slice, mints) });
    }
  }
  return results;
}

/** The getProgramAccounts handler. */
export function createProgramAccountsMethods(services: AccountServices): MethodTable {
  return {
    getProgramAccounts(params, ctx) {
      const request = decodeParams(() => {
        checkArity(params, 1, 2);
        const program = expectString(params[0]);
        const raw = optional(params[1], (v) => expectObject(v, "RpcProgramAccountsConfig")) ?? {};
        return {
          program,
          config: accountInfoConfig(raw, "RpcProgramAccountsConfig"),
          filters: decodeFilters(raw.filters),
          withContext: optional(raw.withContext, expectBool) ?? false,
          // sortResults=false lets agave skip sorting; the index is sorted anyway.
          sortResults: optional(raw.sortResults, expectBool) ?? true,
        };
      });
      const program = verifyPubkey(request.program).address;
      const filters = verifyFilters(request.filters);
      const slot = contextSlot(ctx, request.config);
      const candidates = scanCandidates(services.index, program, filters);
      const encoding = request.config.encoding ?? "binary";
      const results = encodeMatches(
        candidates,
        filters,
        program,
        encoding,
        request.config.dataSlice,
        scanMintLookup(services.store),
      );
      return request.withContext ? rpcResponse(slot, services.apiVersion, results) : results;
    },
  };
}
