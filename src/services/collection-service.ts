/** CollectionService: GetCollection, ListCollectionNfts and WatchCollection, request to core call to response. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { CollectionService, WatchCollectionRequest } from "../../gen/solgate/v1/collection_service_pb.js";
import { WatchCollectionResponseSchema } from "../../gen/solgate/v1/collection_service_pb.js";
import type { WatchCollectionResponse } from "../../gen/solgate/v1/collection_service_pb.js";
import { create } from "@bufbuild/protobuf";
import { shareResponse } from "./shared-response.ts";
import { CollectionEventKind, EventCommitment } from "../../gen/solgate/v1/collection_event_pb.js";
import type { CollectionEventSchema } from "../../gen/solgate/v1/collection_event_pb.js";
import type { FeedEvent } from "../collections/feed/event-log.ts";
import type { FeedEventKind, WatchMessage } from "../collections/feed/collection-feed.ts";
import { SolgateError } from "../errors.ts";
import { TokenStandard } from "../../gen/solgate/v1/collection_pb.js";
import type { FloorPriceSchema, NftSchema } from "../../gen/solgate/v1/collection_pb.js";
import type { ChainRegistry } from "../chains.ts";
import type { FloorPrice, NftItem, NftStandard } from "../collections/collections.ts";

const STANDARDS: Record<NftStandard, TokenStandard> = {
  UNSPECIFIED: TokenStandard.UNSPECIFIED,
  NON_FUNGIBLE: TokenStandard.NON_FUNGIBLE,
  PROGRAMMABLE_NON_FUNGIBLE: TokenStandard.PROGRAMMABLE_NON_FUNGIBLE,
  EDITION: TokenStandard.EDITION,
  FUNGIBLE_ASSET: TokenStandard.FUNGIBLE_ASSET,
  FUNGIBLE: TokenStandard.FUNGIBLE,
  CORE: TokenStandard.CORE,
};

/** The feed's kinds as the contract's enum (shared with WebhookService). */
export const KINDS: Record<FeedEventKind, CollectionEventKind> = {
  MEMBER_ADDED: CollectionEventKind.MEMBER_ADDED,
  MEMBER_REMOVED: CollectionEventKind.MEMBER_REMOVED,
  MEMBER_TRANSFERRED: CollectionEventKind.MEMBER_TRANSFERRED,
  FLOOR_CHANGED: CollectionEventKind.FLOOR_CHANGED,
};
/** The contract's enum as the feed's kinds. */
export const FEED_KINDS = new Map(Object.entries(KINDS).map(([name, kind]) => [kind, name as FeedEventKind]));

/** WatchCollection's messages, for the router and the SSE route alike. */
export async function* watchCollectionEvents(
  chains: ChainRegistry,
  req: WatchCollectionRequest,
  signal: AbortSignal,
): AsyncGenerator<MessageInitShape<typeof WatchCollectionResponseSchema>> {
  const feed = chains.resolve(req.chain).collectionFeed;
  if (feed === undefined) throw new SolgateError("NOT_FOUND", "this chain has no collection feed");
  const kinds = req.kinds.map((k) => FEED_KINDS.get(k)).filter((k) => k !== undefined);
  for await (const message of await feed.watch(req.address, req.cursor, kinds, signal)) yield toWatchMessage(message);
}

// An event is one object handed to every watch of its collection: convert it once into one shared message, which
// the lean gRPC path and the SSE route encode once for all their streams (10,000 watchers, one encoding).
const convertedEvents = new WeakMap<FeedEvent, WatchCollectionResponse>();

function toWatchMessage(message: WatchMessage): MessageInitShape<typeof WatchCollectionResponseSchema> {
  if ("heartbeat" in message) return { message: { case: "heartbeat", value: message.heartbeat } };
  let response = convertedEvents.get(message.event);
  if (response === undefined) {
    response = shareResponse(
      create(WatchCollectionResponseSchema, { message: { case: "event", value: toCollectionEvent(message.event) } }),
    );
    convertedEvents.set(message.event, response);
  }
  return response;
}

/** A feed event as the contract's CollectionEvent (shared with WebhookService's deliveries). */
export function toCollectionEvent(e: FeedEvent): MessageInitShape<typeof CollectionEventSchema> {
  return {
    collection: e.collection,
    kind: KINDS[e.kind],
    sequence: e.sequence,
    cursor: e.cursor,
    slot: e.slot,
    signature: e.signature,
    instructionIndex: e.instructionIndex,
    ...(e.innerIndex === undefined ? {} : { innerInstructionIndex: e.innerIndex }),
    commitment: EventCommitment.CONFIRMED,
    verifiedSize: e.verifiedSize,
    assetId: e.asset,
    compressed: e.compressed,
    owner: e.owner,
    previousOwner: e.previousOwner,
    ...(e.time === undefined ? {} : { time: timestampFromMs(e.time) }),
    instruction: e.instruction,
    ...(e.floor === undefined ? {} : { floorPrice: toFloorMessage(e.floor) }),
    ...(e.previousFloor === undefined ? {} : { previousFloorPrice: toFloorMessage(e.previousFloor) }),
  };
}

/** The Connect implementation of CollectionService. */
export function createCollectionServiceImpl(deps: { chains: ChainRegistry }): ServiceImpl<typeof CollectionService> {
  return {
    async getCollection(req, ctx) {
      const collection = await deps.chains.resolve(req.chain).collections.get(req.address, ctx.signal);
      return {
        collection: {
          address: collection.address,
          name: collection.name,
          symbol: collection.symbol,
          description: collection.description,
          image: collection.image,
          itemCount: collection.itemCount,
          floorPrice: collection.floorPrice === null ? undefined : toFloorMessage(collection.floorPrice),
        },
      };
    },

    async listCollectionNfts(req, ctx) {
      const page = await deps.chains
        .resolve(req.chain)
        .collections.list({ address: req.address, limit: req.limit, cursor: req.cursor }, ctx.signal);
      return {
        address: page.address,
        items: page.items.map(toNftMessage),
        nextCursor: page.nextCursor ?? undefined,
      };
    },

    watchCollection(req, ctx) {
      return watchCollectionEvents(deps.chains, req, ctx.signal);
    },
  };
}

function toFloorMessage(floor: FloorPrice): MessageInitShape<typeof FloorPriceSchema> {
  return {
    lamports: floor.lamports,
    sol: floor.sol,
    updatedAt: timestampFromDate(floor.updatedAt),
    source: floor.source,
  };
}

function toNftMessage(item: NftItem): MessageInitShape<typeof NftSchema> {
  return {
    id: item.id,
    name: item.name,
    image: item.image,
    standard: STANDARDS[item.standard],
    compressed: item.compressed,
    owner: item.owner,
  };
}
