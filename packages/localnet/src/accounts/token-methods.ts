/**
 * SPL Token reads: getTokenAccountsByOwner / ByDelegate, getTokenAccountBalance, getTokenSupply and
 * getTokenLargestAccounts, with agave's checks and messages ("Invalid param: could not find mint",
 * "Invalid param: not a Token account", ...).
 */
import type { Address } from "@solana/kit";
import { invalidParams, type MethodContext, type MethodTable } from "../rpc/protocol.ts";
import type { IndexedAccount } from "./account-index.ts";
import { encodeBase58 } from "./base58.ts";
import { encodeMatches } from "./program-accounts.ts";
import type { Filter } from "./filters.ts";
import {
  accountInfoConfig,
  checkArity,
  commitmentConfig,
  contextSlot,
  decodeParams,
  expectString,
  invalidType,
  SerdeError,
  unknownVariant,
  verifyPubkey,
} from "./params.ts";
import { isTokenProgram, NATIVE_MINT, NATIVE_MINT_DECIMALS, TOKEN_PROGRAM } from "./program-ids.ts";
import { rpcResponse } from "./response.ts";
import { scanMintLookup, type AccountServices } from "./services.ts";
import { unpackTokenAccount } from "./token-layout.ts";
import { mintInfo } from "./token-parse.ts";
import { uiTokenAmount, type MintInfo } from "./ui-amount.ts";

/** How many accounts getTokenLargestAccounts returns (agave's `NUM_LARGEST_ACCOUNTS`). */
const NUM_LARGEST_ACCOUNTS = 20;

type TokenAccountsFilter = { readonly mint: string } | { readonly programId: string };

/** Decodes `RpcTokenAccountsFilter` (`{"mint": ...}` or `{"programId": ...}`). */
function decodeTokenFilter(value: unknown): TokenAccountsFilter {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalidType(value, "string or map");
  const keys = Object.keys(value);
  if (keys.length !== 1) throw new SerdeError("invalid value: map, expected map with a single key");
  const inner = (value as Record<string, unknown>)[keys[0]];
  if (keys[0] === "mint") return { mint: expectString(inner) };
  if (keys[0] === "programId") return { programId: expectString(inner) };
  throw unknownVariant(keys[0], ["mint", "programId"]);
}

export function createTokenMethods(services: AccountServices): MethodTable {
  const { index, store } = services;

  const now = () => store.unixTimestamp();

  /** agave's `get_mint_owner_and_additional_data`: [token program, mint info] of a mint. */
  function mintOwnerAndInfo(mint: Address, key: Uint8Array): [Address, MintInfo] {
    if (mint === NATIVE_MINT) return [TOKEN_PROGRAM, { decimals: NATIVE_MINT_DECIMALS }];
    const account = store.read(key);
    if (account === null) throw invalidParams("Invalid param: could not find mint");
    const info = mintInfo(account.data, now);
    if (info === null) throw invalidParams("Invalid param: Token mint could not be unpacked");
    return [encodeBase58(account.owner) as Address, info];
  }

  /** agave's `get_token_program_id_and_mint`. */
  function programAndMint(filter: TokenAccountsFilter): [Address, Uint8Array | null] {
    if ("mint" in filter) {
      const mint = verifyPubkey(filter.mint);
      const [owner] = mintOwnerAndInfo(mint.address, mint.bytes);
      if (!isTokenProgram(owner)) throw invalidParams("Invalid param: not a Token mint");
      return [owner, mint.bytes];
    }
    const program = verifyPubkey(filter.programId).address;
    if (!isTokenProgram(program)) throw invalidParams("Invalid param: unrecognized Token program id");
    return [program, null];
  }

  /** Shared body of getTokenAccountsByOwner / ByDelegate. */
  function tokenAccountsBy(
    params: unknown[],
    ctx: MethodContext,
    candidatesOf: (key: Uint8Array, program: Address, mint: Uint8Array | null) => [readonly IndexedAccount[], Filter[]],
  ): unknown {
    const request = decodeParams(() => {
      checkArity(params, 2, 3);
      return {
        key: expectString(params[0]),
        filter: decodeTokenFilter(params[1]),
        config: accountInfoConfig(params[2]),
      };
    });
    const key = verifyPubkey(request.key);
    // agave's verify_token_account_filter runs before the slot check, like the owner's verify_pubkey.
    const filter: TokenAccountsFilter =
      "mint" in request.filter
        ? { mint: verifyPubkey(request.filter.mint).address }
        : { programId: verifyPubkey(request.filter.programId).address };
    const slot = contextSlot(ctx, request.config);
    const [program, mint] = programAndMint(filter);
    const [candidates, filters] = candidatesOf(key.bytes, program, mint);
    const encoding = request.config.encoding ?? "binary";
    const accounts = encodeMatches(
      candidates,
      filters,
      program,
      encoding,
      request.config.dataSlice,
      scanMintLookup(store),
    );
    return rpcResponse(slot, services.apiVersion, accounts);
  }

  /** Reads an account for the balance/supply methods (agave's "could not find account"). */
  function readExisting(text: string) {
    const account = store.read(verifyPubkey(text).bytes);
    if (account === null) throw invalidParams("Invalid param: could not find account");
    return account;
  }

  function decodeMintParam(params: unknown[]) {
    return decodeParams(() => {
      checkArity(params, 1, 2);
      return { address: expectString(params[0]), commitment: commitmentConfig(params[1]) };
    });
  }

  return {
    getTokenAccountsByOwner(params, ctx) {
      return tokenAccountsBy(params, ctx, (owner, program, mint) => [
        index.tokenAccountsByOwner(program, owner),
        mint === null ? [] : [{ kind: "memcmp", offset: 0, bytes: mint }],
      ]);
    },

    getTokenAccountsByDelegate(params, ctx) {
      return tokenAccountsBy(params, ctx, (delegate, program, mint) => {
        const filters: Filter[] = [
          { kind: "memcmp", offset: 72, bytes: Uint8Array.of(1, 0, 0, 0) },
          { kind: "memcmp", offset: 76, bytes: delegate },
          { kind: "tokenAccountState" },
        ];
        return [mint === null ? index.byOwner(program) : index.tokenAccountsByMint(program, mint), filters];
      });
    },

    getTokenAccountBalance(params, ctx) {
      const request = decodeMintParam(params);
      const slot = contextSlot(ctx, { commitment: request.commitment, minContextSlot: undefined });
      const account = readExisting(request.address);
      if (!isTokenProgram(encodeBase58(account.owner))) throw invalidParams("Invalid param: not a Token account");
      const state = unpackTokenAccount(account.data);
      if (state === null) throw invalidParams("Invalid param: not a Token account");
      const mint = state.base.mint;
      const [, info] = mintOwnerAndInfo(encodeBase58(mint) as Address, mint);
      return rpcResponse(slot, services.apiVersion, uiTokenAmount(state.base.amount, info));
    },

    getTokenSupply(params, ctx) {
      const request = decodeMintParam(params);
      const slot = contextSlot(ctx, { commitment: request.commitment, minContextSlot: undefined });
      const account = readExisting(request.address);
      if (!isTokenProgram(encodeBase58(account.owner))) throw invalidParams("Invalid param: not a Token mint");
      const info = mintInfo(account.data, now);
      if (info === null) throw invalidParams("Invalid param: mint could not be unpacked");
      const supply = new DataView(account.data.buffer, account.data.byteOffset).getBigUint64(36, true);
      return rpcResponse(slot, services.apiVersion, uiTokenAmount(supply, info));
    },

    getTokenLargestAccounts(params, ctx) {
      const request = decodeMintParam(params);
      const mint = verifyPubkey(request.address);
      const slot = contextSlot(ctx, { commitment: request.commitment, minContextSlot: undefined });
      const [program, info] = mintOwnerAndInfo(mint.address, mint.bytes);
      if (!isTokenProgram(program)) throw invalidParams("Invalid param: not a Token mint");
      // Keep the 20 largest by (amount, pubkey), as agave's min-heap of that tuple does.
      const top: Array<{ amount: bigint; entry: IndexedAccount }> = [];
      for (const entry of index.tokenAccountsByMint(program, mint.bytes)) {
        const amount = unpackTokenAccount(entry.data)?.base.amount ?? 0n;
        top.push({ amount, entry });
        if (top.length > NUM_LARGEST_ACCOUNTS * 8) prune(top);
      }
      prune(top);
      const value = top.map(({ amount, entry }) => ({ address: entry.address, ...uiTokenAmount(amount, info) }));
      return rpcResponse(slot, services.apiVersion, value);
    },
  };
}

/** Sorts by (amount, pubkey) descending and keeps the first {@link NUM_LARGEST_ACCOUNTS}. */
function prune(list: Array<{ amount: bigint; entry: IndexedAccount }>): void {
  list.sort((a, b) =>
    a.amount !== b.amount
      ? a.amount > b.amount
        ? -1
        : 1
      : a.entry.sortKey > b.entry.sortKey
        ? -1
        : a.entry.sortKey < b.entry.sortKey
          ? 1
          : 0,
  );
  list.length = Math.min(list.length, NUM_LARGEST_ACCOUNTS);
}
