/** WalletService: ListWalletTokens and ListWalletNfts, request to core call to response. */
import type { ServiceImpl } from "@connectrpc/connect";
import { TokenStandard } from "../../gen/solgate/v1/collection_pb.js";
import type { WalletService } from "../../gen/solgate/v1/wallet_service_pb.js";
import type { ChainRegistry } from "../chains.ts";

/** The Connect implementation of WalletService. */
export function createWalletServiceImpl(deps: { chains: ChainRegistry }): ServiceImpl<typeof WalletService> {
  return {
    async listWalletTokens(req) {
      const page = await deps.chains
        .resolve(req.chain)
        .wallets.listTokens({ owner: req.owner, limit: req.limit, cursor: req.cursor, includeZero: req.includeZero });
      return { owner: page.owner, items: page.items, nextCursor: page.nextCursor ?? undefined };
    },
    async listWalletNfts(req, context) {
      const page = await deps.chains
        .resolve(req.chain)
        .wallets.listNfts({ owner: req.owner, limit: req.limit, cursor: req.cursor, signal: context.signal });
      return {
        owner: page.owner,
        items: page.items.map((item) => ({ ...item, standard: TokenStandard[item.standard] })),
        nextCursor: page.nextCursor ?? undefined,
      };
    },
  };
}
