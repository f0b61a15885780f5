/**
 * What a wallet holds: its fungible token balances under both token programs (from
 * getTokenAccountsByOwner, jsonParsed, with names and symbols from Token Metadata or Token-2022's
 * own metadata extension; NFTs left out), and its NFTs (DAS getAssetsByOwner). Both page by stateless keyset
 * cursors: balances by token account address, NFTs by asset id.
 */
import { createHash } from "node:crypto";
import type { Address, GetMultipleAccountsApi, GetTokenAccountsByOwnerApi, Rpc } from "@solana/kit";
import { isVerifiedMember, standardOf, toNftItem } from "../collections/asset-mapping.ts";
import type { NftStandard } from "../collections/asset-mapping.ts";
import { createCollectionsDas } from "../collections/das-client.ts";
import type { DasAsset } from "../collections/das-client.ts";
import { decodeCollectionMetadata, metadataAddress } from "../collections/token-metadata.ts";
import { CURSOR_SCOPE_BYTES, keysetCursors } from "../page-cursor.ts";
import { compareAddresses, indexAfter } from "../programs/address-order.ts";
import { tokenAccountInfo, toAccountData } from "../programs/account-mapping.ts";
import type { RpcAccount, TokenAmount } from "../programs/account-mapping.ts";
import type { TokenProgramName } from "../programs/token-programs.ts";
import { assertAddress, pageLimit } from "../request-checks.ts";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../solana/program-ids.ts";
import type { DasClient } from "../upstream/upstream.ts";

/** One fungible balance. */
export interface WalletToken {
  tokenAccount: string;
  mint: string;
  program: TokenProgramName;
  amount: TokenAmount;
  state: string;
  /** From the token's metadata; undefined when it has none. */
  name?: string;
  symbol?: string;
}

/** One NFT a wallet holds. */
export interface WalletNft {
  id: string;
  name: string;
  image: string;
  standard: NftStandard;
  compressed: boolean;
  /** Its verified collection, if any. */
  collection?: string;
}

/** A page of a wallet listing. */
export interface WalletPage<T> {
  owner: string;
  items: T[];
  /** Null on the last page. */
  nextCursor: string | null;
}

/** Reads wallets. */
export interface Wallets {
  /**
   * One page of `owner`'s token balances, sorted by token account address.
   * @throws SolgateError INVALID_ADDRESS, INVALID_PARAMETER (`limit`, `cursor`), and the upstream's errors.
   */
  listTokens(request: {
    owner: string;
    limit?: number;
    cursor?: string;
    includeZero?: boolean;
  }): Promise<WalletPage<WalletToken>>;
  /**
   * One page of the NFTs `owner` holds, sorted by id.
   * @throws SolgateError INVALID_ADDRESS, INVALID_PARAMETER (`limit`, `cursor`), and the DAS provider's errors.
   */
  listNfts(request: {
    owner: string;
    limit?: number;
    cursor?: string;
    signal?: AbortSignal;
  }): Promise<WalletPage<WalletNft>>;
}

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
const COMMITMENT = "confirmed";
/** getMultipleAccounts takes at most 100 addresses. */
const MULTIPLE_ACCOUNTS_CHUNK = 100;

const scopeOf = (listing: string) => (owner: string) =>
  createHash("sha256").update(`solgate.wallets.${listing}.v1:`).update(owner).digest().subarray(0, CURSOR_SCOPE_BYTES);

/** ListWalletTokens cursors: scoped by the owner and whether zero balances are listed. */
export const walletTokenCursors = keysetCursors(
  scopeOf("tokens"),
  "the cursor belongs to another listing; send the owner and include_zero of the first page",
);
/** ListWalletNfts cursors: scoped by the owner, keyed by the last asset id consumed (the DAS keyset position). */
export const walletNftCursors = keysetCursors(
  scopeOf("nfts"),
  "the cursor belongs to another wallet; send the owner of the first page",
);

/** What a mint's metadata says, for a wallet's listing. */
interface MintDescription {
  name: string;
  symbol: string;
  nft: boolean;
}

/** Token Metadata's NonFungible (0), NonFungibleEdition (3), ProgrammableNonFungible (4) and its edition (5). */
const NFT_STANDARDS: ReadonlySet<number> = new Set([0, 3, 4, 5]);

/** What the core needs of the upstream. */
export interface WalletsUpstream {
  rpc: Rpc<GetTokenAccountsByOwnerApi & GetMultipleAccountsApi>;
  das: DasClient;
}

/** Creates the core over a chain's upstream. */
export function createWallets(deps: { upstream: WalletsUpstream }): Wallets {
  const { rpc } = deps.upstream;
  const das = createCollectionsDas(deps.upstream.das);

  async function tokenAccountsOf(owner: Address): Promise<WalletToken[]> {
    const programs = [TOKEN_PROGRAM, TOKEN_2022_PROGRAM] as const;
    const lists = await Promise.all(
      programs.map(async (programId) => {
        const { value } = await rpc
          .getTokenAccountsByOwner(owner, { programId }, { encoding: "jsonParsed", commitment: COMMITMENT })
          .send();
        return value.map(({ pubkey, account }) => ({ pubkey, data: toAccountData(account as unknown as RpcAccount) }));
      }),
    );
    const tokens: WalletToken[] = [];
    for (const { pubkey, data } of lists.flat()) {
      const info = tokenAccountInfo(data);
      if (info === undefined || data.format !== "parsed") continue; // not a token account (never from this call)
      tokens.push({
        tokenAccount: pubkey,
        mint: info.mint,
        program: data.program as TokenProgramName,
        amount: info.tokenAmount,
        state: info.state,
      });
    }
    return tokens.sort((a, b) => compareAddresses(a.tokenAccount, b.tokenAccount));
  }

  /**
   * What the tokens' metadata says of their mints: name, symbol, and whether the mint is an NFT
   * (Token Metadata's NonFungible, editions and programmable kinds; or no standard with 0 decimals,
   * as NFTs minted before the field existed). Token Metadata first, else Token-2022's extension.
   */
  async function describeMints(tokens: readonly WalletToken[]): Promise<Map<string, MintDescription>> {
    const described = new Map<string, MintDescription>();
    const mints = [...new Set(tokens.map((t) => t.mint))];
    if (mints.length === 0) return described;
    const decimals = new Map(tokens.map((t) => [t.mint, t.amount.decimals]));
    const pdas = await Promise.all(mints.map((mint) => metadataAddress(mint as Address)));
    const metadata = await getMultiple(pdas, "base64");
    metadata.forEach((account, i) => {
      if (account === null || !Array.isArray(account.data)) return;
      const decoded = decodeCollectionMetadata(Buffer.from(account.data[0], "base64"));
      if (decoded === null || decoded.mint !== mints[i]) return;
      const nft =
        decoded.tokenStandard === null ? decimals.get(mints[i]) === 0 : NFT_STANDARDS.has(decoded.tokenStandard);
      described.set(mints[i], { name: decoded.name, symbol: decoded.symbol, nft });
    });
    const token2022 = [
      ...new Set(tokens.filter((t) => t.program === "spl-token-2022" && !described.has(t.mint)).map((t) => t.mint)),
    ];
    if (token2022.length > 0) {
      const accounts = await getMultiple(token2022 as Address[], "jsonParsed");
      accounts.forEach((account, i) => {
        const found = account === null ? undefined : extensionMetadata(account);
        if (found !== undefined) described.set(token2022[i], { ...found, nft: false });
      });
    }
    return described;
  }

  async function getMultiple(
    addresses: readonly Address[],
    encoding: "base64" | "jsonParsed",
  ): Promise<(RpcAccount | null)[]> {
    const chunks: Address[][] = [];
    for (let i = 0; i < addresses.length; i += MULTIPLE_ACCOUNTS_CHUNK)
      chunks.push(addresses.slice(i, i + MULTIPLE_ACCOUNTS_CHUNK));
    const results = await Promise.all(
      chunks.map(
        async (chunk) =>
          (await rpc.getMultipleAccounts(chunk, { encoding: encoding as "base64", commitment: COMMITMENT }).send())
            .value,
      ),
    );
    return results.flat() as unknown as (RpcAccount | null)[];
  }

  return {
    async listTokens(request) {
      const owner = assertAddress(request.owner, "owner");
      const limit = pageLimit(request.limit, DEFAULT_LIMIT, MAX_LIMIT);
      const includeZero = request.includeZero === true;
      const scope = `${owner}:${includeZero ? "all" : "held"}`;
      const after = request.cursor ? walletTokenCursors.decode(request.cursor, scope) : undefined;
      const all = (await tokenAccountsOf(owner)).filter((t) => includeZero || t.amount.raw > 0n);
      let next =
        after === undefined
          ? 0
          : indexAfter(
              all.map((t) => t.tokenAccount),
              after,
            );
      const items: WalletToken[] = [];
      // NFTs are left out (ListWalletNfts lists them), which can leave a page short: read on until it is full.
      while (items.length < limit && next < all.length) {
        const batch = all.slice(next, next + (limit - items.length));
        const described = await describeMints(batch);
        for (const token of batch) {
          const found = described.get(token.mint);
          if (found?.nft === true) continue;
          items.push(found === undefined ? token : { ...token, name: found.name, symbol: found.symbol });
        }
        next += batch.length;
      }
      return {
        owner,
        items,
        nextCursor: next < all.length ? walletTokenCursors.encode(scope, all[next - 1].tokenAccount) : null,
      };
    },

    async listNfts(request) {
      const owner = assertAddress(request.owner, "owner");
      const limit = pageLimit(request.limit, DEFAULT_LIMIT, MAX_LIMIT);
      const after = request.cursor ? walletNftCursors.decode(request.cursor, owner) : undefined;
      const raw = await das.getOwnerPage({
        owner,
        limit,
        ...(after === undefined ? {} : { after }),
        ...(request.signal ? { signal: request.signal } : {}),
      });
      // Provider data: keep only what this wallet holds, unburnt, and not fungible.
      const items = raw.filter((asset) => isHeldNft(asset, owner)).map(toWalletNft);
      const nextCursor = raw.length === limit ? walletNftCursors.encode(owner, raw[raw.length - 1].id) : null;
      return { owner, items, nextCursor };
    },
  };
}

function isHeldNft(asset: DasAsset, owner: string): boolean {
  if (asset.burnt === true || asset.ownership?.owner !== owner) return false;
  const standard = standardOf(asset);
  return standard !== "FUNGIBLE" && standard !== "FUNGIBLE_ASSET";
}

function toWalletNft(asset: DasAsset): WalletNft {
  const { owner: _owner, ...item } = toNftItem(asset);
  const grouping = Array.isArray(asset.grouping) ? asset.grouping : [];
  const collection = grouping.find(
    (g) => g?.group_key === "collection" && typeof g.group_value === "string" && isVerifiedMember(asset, g.group_value),
  );
  return collection === undefined ? item : { ...item, collection: collection.group_value as string };
}

/** Name and symbol from a jsonParsed Token-2022 mint's `tokenMetadata` extension. */
function extensionMetadata(account: RpcAccount): { name: string; symbol: string } | undefined {
  const data = toAccountData(account);
  if (data.format !== "parsed" || !("fields" in data.parsed)) return undefined;
  const extensions = data.parsed.fields.extensions;
  if (!Array.isArray(extensions)) return undefined;
  for (const extension of extensions) {
    if (
      typeof extension !== "object" ||
      extension === null ||
      Array.isArray(extension) ||
      extension.extension !== "tokenMetadata"
    )
      continue;
    const state = extension.state;
    if (typeof state !== "object" || state === null || Array.isArray(state)) continue;
    if (typeof state.name === "string" && typeof state.symbol === "string")
      return { name: state.name, symbol: state.symbol };
  }
  return undefined;
}
