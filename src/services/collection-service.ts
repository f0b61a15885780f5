/** CollectionService: GetCollection and ListCollectionNfts, request to core call to response. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { CollectionService } from "../../gen/solgate/v1/collection_service_pb.js";
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

/** The Connect implementation of CollectionService. */
export function createCollectionServiceImpl(deps: {
  chains: ChainRegistry;
}): Partial<ServiceImpl<typeof CollectionService>> {
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
