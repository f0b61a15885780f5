/**
 * The collections core: a collection's details and verified size, and its verified members page
 * by page. Transport-free; it reads the chain through the upstream (DAS for assets and groups, one
 * getAccountInfo for the collection NFT's Metadata account), off-chain JSON through a guarded
 * fetcher, and floor prices through a market lookup.
 *
 * What counts as a collection: an address whose Metadata account has `collection_details` (a
 * sized collection, V1, or a V2 one), or, failing that, the group value of at least one verified,
 * unburnt member. An asset that is neither, or no asset at all, is NOT_FOUND. A collection whose
 * NFT is not readable (a real collection whose members alone are on this chain) is still one: its
 * name and symbol are then empty.
 *
 * Item count: the on-chain `collection_details` V1 size where there is one (Token Metadata keeps it
 * in step as members are verified, unverified and burnt); otherwise the members are counted through
 * DAS with the same membership check as the listing, and the count is cached.
 */
import { createHash } from "node:crypto";
import { isAddress } from "@solana/kit";
import type { Address, GetAccountInfoApi, Rpc } from "@solana/kit";
import { SolgateError } from "../errors.ts";
import { CURSOR_SCOPE_BYTES, keysetCursors } from "../page-cursor.ts";
import { nodeErrorOf } from "../upstream/node-errors.ts";
import type { DasClient } from "../upstream/upstream.ts";
import { descriptionOf, displayString, imageOf, jsonUriOf, toNftItem } from "./asset-mapping.ts";
import type { NftItem } from "./asset-mapping.ts";
import { createCollectionsDas } from "./das-client.ts";
import type { CollectionsDas, DasAsset } from "./das-client.ts";
import { createLruCache } from "./lru-cache.ts";
import type { SharedValues } from "../store/shared-values.ts";
import { noFloorPrices } from "./market/market-source.ts";
import type { FloorPrice, FloorPriceLookup } from "./market/market-source.ts";
import { scanMembers } from "./member-scan.ts";
import { createOffchainJson } from "./offchain-json.ts";
import type { OffchainJson } from "./offchain-json.ts";
import { TOKEN_METADATA_PROGRAM } from "../solana/program-ids.ts";
import { decodeCollectionMetadata, metadataAddress } from "./token-metadata.ts";
import type { CollectionMetadata } from "./token-metadata.ts";

export type { NftItem, NftStandard } from "./asset-mapping.ts";

/**
 * ListCollectionNfts cursors: scoped by a hash of the collection address, so a cursor of one collection
 * is refused for another, and keyed by the last id consumed: the DAS keyset position (`after`, sorted
 * by id), so page 10 costs what page 1 costs.
 */
export const collectionCursors = keysetCursors(
  (collection: string) =>
    createHash("sha256").update("solgate.collections.v1:").update(collection).digest().subarray(0, CURSOR_SCOPE_BYTES),
  "the cursor belongs to another collection; send the address of the first page",
);
export type { FloorPrice } from "./market/market-source.ts";

/** A collection as GetCollection shows it. */
export interface CollectionInfo {
  address: string;
  name: string;
  symbol: string;
  /** Empty when unavailable. */
  description: string;
  image: string;
  /** Verified members. */
  itemCount: bigint;
  /** Display-only; null when no marketplace data is available. */
  floorPrice: FloorPrice | null;
}

/** One page of members. */
export interface NftPage {
  address: string;
  /** Sorted by id. */
  items: NftItem[];
  /** Continues the listing; null at the end. */
  nextCursor: string | null;
}

/** A page request. */
export interface ListNftsRequest {
  address: string;
  /** 1-1000; 0 or undefined means 100. */
  limit?: number;
  /** `nextCursor` of the previous page; empty or undefined for the first. */
  cursor?: string;
}

export interface Collections {
  /**
   * A collection's details, verified size and floor price.
   * @throws SolgateError INVALID_ADDRESS, NOT_FOUND, and the upstream's UPSTREAM_UNAVAILABLE / RATE_LIMITED.
   */
  get(address: string, signal?: AbortSignal): Promise<CollectionInfo>;
  /**
   * One page of verified members, sorted by id.
   * @throws SolgateError INVALID_ADDRESS, INVALID_PARAMETER (`limit`, `cursor`), NOT_FOUND (first
   *   page of an address that is no collection), UPSTREAM_UNAVAILABLE / RATE_LIMITED.
   */
  list(request: ListNftsRequest, signal?: AbortSignal): Promise<NftPage>;
}

/** What the core needs of the upstream. */
export interface CollectionsUpstream {
  rpc: Rpc<GetAccountInfoApi>;
  das: DasClient;
}

/** Options of {@link createCollections}. */
export interface CollectionsOptions {
  /** DAS calls one page may make when filtering drops items (default 4). */
  maxCallsPerPage?: number;
  /** DAS pages (of 1,000) a count may read (default 100); beyond that the count is a lower bound. */
  maxCountPages?: number;
  /** How long a counted size is kept (default 10 min). */
  countTtlMs?: number;
  /** Longest wait for off-chain JSON in one response (default 1,500 ms). */
  offchainDeadlineMs?: number;
  /** Off-chain fetches one page may start (default 100); the rest of its items keep empty images. */
  maxOffchainPerPage?: number;
  /** Counts shared by a fleet (Redis): a collection counted by one replica is not counted again by the others. */
  sharedCounts?: SharedValues;
  /** Called when a count stops at `maxCountPages` (for logs). */
  onCountCapped?: (collection: string, counted: bigint) => void;
  /** Called when getAsset fails; the call goes on without the asset's presentation fields (for logs). */
  onAssetError?: (collection: string, error: unknown) => void;
}

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/**
 * Creates the core for one chain. `market` (floor prices) and `offchain` may be shared across chains.
 *
 * Just over ~150 lines: its reads share the DAS client, the floor prices, the off-chain JSON and the count cache
 * built at its top.
 */
export function createCollections(
  deps: { upstream: CollectionsUpstream; market?: FloorPriceLookup; offchain?: OffchainJson },
  options: CollectionsOptions = {},
): Collections {
  const das: CollectionsDas = createCollectionsDas(deps.upstream.das);
  const rpc = deps.upstream.rpc;
  const market = deps.market ?? noFloorPrices;
  const offchain = deps.offchain ?? createOffchainJson();
  const maxCallsPerPage = options.maxCallsPerPage ?? 4;
  const maxCountPages = options.maxCountPages ?? 100;
  const countTtlMs = options.countTtlMs ?? 10 * 60_000;
  const offchainDeadlineMs = options.offchainDeadlineMs ?? 1500;
  const maxOffchainPerPage = options.maxOffchainPerPage ?? 100;
  const counts = createLruCache<bigint>({ maxEntries: 10_000 });

  async function readMetadata(mint: Address, signal?: AbortSignal): Promise<CollectionMetadata | null> {
    const address = await metadataAddress(mint);
    let value;
    try {
      ({ value } = await rpc
        .getAccountInfo(address, { encoding: "base64", commitment: "confirmed" })
        .send({ abortSignal: signal }));
    } catch (error) {
      const info = nodeErrorOf(error);
      if (info === undefined) throw error;
      throw new SolgateError(
        "UPSTREAM_UNAVAILABLE",
        `the node refused getAccountInfo: ${info.message.slice(0, 200)}`,
        { method: "getAccountInfo", rpcCode: info.code },
        { cause: error, retryAfterMs: 1000 },
      );
    }
    if (value === null || value.owner !== TOKEN_METADATA_PROGRAM) return null;
    const metadata = decodeCollectionMetadata(Buffer.from(value.data[0], "base64"));
    return metadata !== null && metadata.mint === mint ? metadata : null;
  }

  /**
   * Verified members counted through DAS; cached, and shared by concurrent callers (so it runs to
   * completion whoever cancels: one caller's abort must not fail the others').
   */
  function countMembers(collection: string): Promise<bigint> {
    return counts.getOrLoad(collection, async () => {
      const shared = await options.sharedCounts?.get(collection);
      if (shared !== undefined && /^\d+$/.test(shared)) return { value: BigInt(shared), ttlMs: countTtlMs };
      const scan = await scanMembers(das, {
        collection,
        want: Infinity,
        maxCalls: maxCountPages,
        onMember: () => undefined,
      });
      const counted = BigInt(scan.found);
      if (!scan.ended) options.onCountCapped?.(collection, counted);
      await options.sharedCounts?.set(collection, counted.toString(), countTtlMs);
      return { value: counted, ttlMs: countTtlMs };
    });
  }

  /** Whether an address with no members listed is a collection at all; throws NOT_FOUND if not. */
  async function assertIsCollection(collection: Address, signal?: AbortSignal): Promise<void> {
    const metadata = await readMetadata(collection, signal);
    if (metadata?.collectionDetails) return;
    throw notFound(collection, metadata !== null || (await assetOrNull(collection, signal)) !== null);
  }

  /**
   * The collection's asset, or null. Only presentation (description, image, names of assets
   * without a Metadata account) comes from it, never the membership or the count: a failing
   * getAsset degrades the answer instead of failing it. A real outage still fails the call
   * through the reads that matter.
   */
  async function assetOrNull(address: string, signal?: AbortSignal): Promise<DasAsset | null> {
    try {
      return await das.getAsset(address, signal);
    } catch (error) {
      if (signal?.aborted) throw error;
      options.onAssetError?.(address, error);
      return null;
    }
  }

  async function offchainFields(uri: string, need: boolean): Promise<{ description: string; image: string } | null> {
    return need && uri !== "" ? offchain.get(uri, { deadlineMs: offchainDeadlineMs }) : null;
  }

  return {
    async get(rawAddress, signal) {
      const address = assertAddress(rawAddress);
      // Started first and awaited last: the marketplace never adds to the chain reads' latency.
      const floor = market.floorPrice(address);
      const [asset, metadata] = await Promise.all([assetOrNull(address, signal), readMetadata(address, signal)]);
      const details = metadata?.collectionDetails ?? null;
      let itemCount: bigint;
      if (details?.kind === "V1") {
        itemCount = details.size;
      } else {
        itemCount = await countMembers(address);
        if (itemCount === 0n && details === null) throw notFound(address, asset !== null || metadata !== null);
      }
      let description = asset === null ? "" : descriptionOf(asset);
      let image = asset === null ? "" : imageOf(asset);
      const uri = metadata?.uri || (asset === null ? "" : jsonUriOf(asset));
      const fetched = await offchainFields(uri, description === "" || image === "");
      if (fetched !== null) {
        description ||= fetched.description;
        image ||= fetched.image;
      }
      return {
        address,
        name: metadata?.name ?? (asset === null ? "" : displayString(asset.content?.metadata?.name)),
        symbol: metadata?.symbol ?? (asset === null ? "" : displayString(asset.content?.metadata?.symbol)),
        description,
        image,
        itemCount,
        floorPrice: await floor,
      };
    },

    async list(request, signal) {
      const address = assertAddress(request.address);
      const limit = request.limit === undefined || request.limit === 0 ? DEFAULT_LIMIT : request.limit;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
        throw new SolgateError(
          "INVALID_PARAMETER",
          `limit must be 1-${MAX_LIMIT} (0 means ${DEFAULT_LIMIT}), got ${limit}`,
          { field: "limit" },
        );
      }
      const after = request.cursor ? collectionCursors.decode(request.cursor, address) : undefined;
      const members: DasAsset[] = [];
      const scan = await scanMembers(das, {
        collection: address,
        after,
        want: limit,
        maxCalls: maxCallsPerPage,
        onMember: (a) => members.push(a),
        signal,
      });
      if (after === undefined && members.length === 0 && scan.ended) await assertIsCollection(address, signal);
      const items = members.map(toNftItem);
      await fillImages(items, members);
      const nextCursor = scan.ended || scan.last === undefined ? null : collectionCursors.encode(address, scan.last);
      return { address, items, nextCursor };
    },
  };

  /** Images the provider left empty, from the items' JSON, within one shared deadline. */
  async function fillImages(items: NftItem[], members: readonly DasAsset[]): Promise<void> {
    const missing = items
      .flatMap((item, i) => (item.image === "" && jsonUriOf(members[i]) !== "" ? [i] : []))
      .slice(0, maxOffchainPerPage);
    await Promise.all(
      missing.map(async (i) => {
        const fetched = await offchain.get(jsonUriOf(members[i]), { deadlineMs: offchainDeadlineMs });
        if (fetched !== null) items[i].image = fetched.image;
      }),
    );
  }
}

function assertAddress(value: string): Address {
  if (typeof value !== "string" || !isAddress(value)) {
    throw new SolgateError(
      "INVALID_ADDRESS",
      `address must be a base58 address of 32 bytes, got ${JSON.stringify(String(value).slice(0, 64))}`,
      {
        field: "address",
      },
    );
  }
  return value;
}

function notFound(address: string, exists: boolean): SolgateError {
  return exists
    ? new SolgateError(
        "NOT_FOUND",
        `${address} is not a collection: it has no collection details and no verified members`,
        { address },
      )
    : new SolgateError("NOT_FOUND", `no asset or collection exists at ${address}`, { address });
}
