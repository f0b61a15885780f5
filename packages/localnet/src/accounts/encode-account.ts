/**
 * Accounts in agave's `UiAccount` shape: `{lamports, data, owner, executable, rentEpoch, space}`,
 * with data as a legacy base58 string ("binary"), `[text, "base58" | "base64" | "base64+zstd"]`,
 * or `{program, parsed, space}` for jsonParsed (falling back to `[base64, "base64"]` when no parser
 * applies), following agave's `encode_account` / `encode_ui_account` / `get_parsed_token_account`.
 */
import type { Address } from "@solana/kit";
import { JsonRpcError, RpcErrorCode } from "../rpc/protocol.ts";
import { encodeBase58 } from "./base58.ts";
import { jsonU64, sortKeysDeep, type JsonU64 } from "./json.ts";
import { parseProgramData } from "./parse-program-data.ts";
import { isTokenProgram, TOKEN_PROGRAM } from "./program-ids.ts";
import { parseTokenData, tokenAccountMint, type MintInfo } from "./token-parse.ts";
import { zstdFrame } from "./zstd-frame.ts";

/** Encodings a request may name (agave's `UiAccountEncoding`). */
export type AccountEncoding = "binary" | "base58" | "base64" | "jsonParsed" | "base64+zstd";

/** `dataSlice` of a request. */
export interface DataSlice {
  readonly offset: number;
  readonly length: number;
}

/** What encoding needs of an account; the index's entries fit, and so do LiteSVM reads. */
export interface EncodableAccount {
  /** The account's own address; needed to parse sysvars (jsonParsed), optional otherwise. */
  readonly address?: string;
  readonly owner: Address;
  readonly lamports: bigint;
  readonly executable: boolean;
  readonly rentEpoch: bigint;
  readonly data: Uint8Array;
  /** Memos filled in on first use; index entries keep them (see {@link EncodingMemo}). */
  memo?: EncodingMemo;
}

/**
 * What a scan would otherwise recompute for every account on every request: the base64 data and
 * whole `UiAccount` objects (base64, the last base64 data slice, and jsonParsed for token accounts).
 * Index entries are replaced on every change, so memos can only go stale through outside inputs: the
 * jsonParsed one records the mint decimals it was rendered with. Memoised objects are shared: never
 * mutate a response.
 */
export interface EncodingMemo {
  base64?: string;
  base64Account?: UiAccount;
  /**
   * The base64 `UiAccount` of the last data slice asked for: scans for a few bytes of many accounts
   * (owner and amount of every holder of a mint) repeat the same slice. `keyedJson` is the JSON text
   * of the scan's `RpcKeyedAccount` for it (see {@link slicedKeyedJson}).
   */
  base64Slice?: { readonly offset: number; readonly length: number; readonly account: UiAccount; keyedJson?: string };
  parsedToken?: { readonly decimals: number | null; readonly account: UiAccount | null };
}

/** agave's `UiAccount`. */
export interface UiAccount {
  readonly lamports: JsonU64;
  readonly data: unknown;
  readonly owner: string;
  readonly executable: boolean;
  readonly rentEpoch: JsonU64;
  readonly space: number;
}

/** Finds the decimals of a token account's mint; null when the mint is missing or not a mint. */
export type MintLookup = (mint: Uint8Array) => MintInfo | null;

/** Largest data agave encodes as base58 (`MAX_BASE58_BYTES`). */
const MAX_BASE58_BYTES = 128;

/** agave's `slice_data`. */
function sliceData(data: Uint8Array, slice: DataSlice | undefined): Uint8Array {
  if (slice === undefined) return data;
  if (slice.offset >= data.length) return data.subarray(0, 0);
  return data.subarray(slice.offset, Math.min(data.length, slice.offset + slice.length));
}

function memoOf(account: EncodableAccount): EncodingMemo {
  account.memo ??= {};
  return account.memo;
}

function toBase64(account: EncodableAccount, slice: DataSlice | undefined): string {
  if (slice === undefined) {
    const memo = memoOf(account);
    memo.base64 ??= Buffer.from(account.data.buffer, account.data.byteOffset, account.data.byteLength).toString(
      "base64",
    );
    return memo.base64;
  }
  const part = sliceData(account.data, slice);
  return Buffer.from(part.buffer, part.byteOffset, part.byteLength).toString("base64");
}

function uiAccount(account: EncodableAccount, data: unknown): UiAccount {
  return {
    lamports: jsonU64(account.lamports),
    data,
    owner: account.owner,
    executable: account.executable,
    rentEpoch: jsonU64(account.rentEpoch),
    space: account.data.length,
  };
}

/** The -32600 agave answers when base58 was asked for more than 128 bytes. */
export function base58TooLargeError(): JsonRpcError {
  return new JsonRpcError(
    RpcErrorCode.INVALID_REQUEST,
    `Encoded binary (base 58) data should be less than ${MAX_BASE58_BYTES} bytes, please use Base64 encoding.`,
  );
}

/**
 * A token-program account with jsonParsed data (agave's `get_parsed_token_account` parse step), or
 * null when agave's parser would fail (the token account's mint is unknown, or the data unpacks as
 * nothing).
 */
export function encodeParsedTokenAccount(account: EncodableAccount, mints: MintLookup): UiAccount | null {
  const mintKey = tokenAccountMint(account.data);
  const mint = mintKey === null ? null : mints(mintKey);
  // Rendering base58 owners and mints dominates jsonParsed scans. Amounts of interest-bearing or
  // scaled mints move with the clock: never memoised.
  const timeless = mint === null || (mint.interestBearing === undefined && mint.scaledUiAmount === undefined);
  const decimals = mint === null ? null : mint.decimals;
  const memo = memoOf(account);
  if (timeless && memo.parsedToken !== undefined && memo.parsedToken.decimals === decimals)
    return memo.parsedToken.account;
  const parsed = parseTokenData(account.data, mint);
  const program = account.owner === TOKEN_PROGRAM ? "spl-token" : "spl-token-2022";
  const encoded = parsed === null ? null : uiAccount(account, { program, parsed, space: account.data.length });
  if (timeless) memo.parsedToken = { decimals, account: encoded };
  return encoded;
}

/**
 * Encodes one account as agave's RPC does. Throws the -32600 base58 error like agave's
 * `encode_account` when base58/binary would exceed 128 bytes.
 */
export function encodeAccount(
  account: EncodableAccount,
  encoding: AccountEncoding,
  slice: DataSlice | undefined,
  mints: MintLookup,
): UiAccount {
  switch (encoding) {
    case "binary":
    case "base58": {
      const full = account.data.length;
      const sliced = slice === undefined ? full : Math.min(slice.length, Math.max(0, full - slice.offset));
      if (sliced > MAX_BASE58_BYTES) throw base58TooLargeError();
      // agave checks the unsliced length again inside `encode_bs58` and answers with this text.
      const text =
        full <= MAX_BASE58_BYTES
          ? encodeBase58(sliceData(account.data, slice))
          : "error: data too large for bs58 encoding";
      return uiAccount(account, encoding === "binary" ? text : [text, "base58"]);
    }
    case "base64":
      if (slice !== undefined) {
        const memo = memoOf(account);
        const last = memo.base64Slice;
        if (last !== undefined && last.offset === slice.offset && last.length === slice.length) return last.account;
        const sliced = uiAccount(account, [toBase64(account, slice), "base64"]);
        memo.base64Slice = { offset: slice.offset, length: slice.length, account: sliced };
        return sliced;
      }
      return (memoOf(account).base64Account ??= uiAccount(account, [toBase64(account, undefined), "base64"]));
    case "base64+zstd": {
      // Settled (compressed as agave's streaming encoder does) before the answer is written out.
      return uiAccount(account, [zstdFrame(sliceData(account.data, slice)), "base64+zstd"]);
    }
    case "jsonParsed": {
      if (isTokenProgram(account.owner)) {
        // agave's get_parsed_token_account passes no slice: the fallback is the whole data.
        return encodeParsedTokenAccount(account, mints) ?? uiAccount(account, [toBase64(account, undefined), "base64"]);
      }
      const parsed = parseProgramData(account.owner, account.data, account.address);
      if (parsed === null) return uiAccount(account, [toBase64(account, slice), "base64"]);
      return uiAccount(account, {
        program: parsed.program,
        parsed: sortKeysDeep(parsed.parsed),
        space: account.data.length,
      });
    }
  }
}

/**
 * `JSON.stringify({ pubkey: address, account })` for the base64 `account` of `slice` that
 * {@link encodeAccount} gave, memoised with it: what a sliced scan of many accounts sends per account.
 */
export function slicedKeyedJson(account: EncodableAccount, address: string, encoded: UiAccount): string {
  const memo = account.memo?.base64Slice;
  if (memo === undefined || memo.account !== encoded) return JSON.stringify({ pubkey: address, account: encoded });
  memo.keyedJson ??= JSON.stringify({ pubkey: address, account: encoded });
  return memo.keyedJson;
}
