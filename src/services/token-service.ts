/** TokenService: ListTokenHolders, request to core call to response. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { TokenService } from "../../gen/solgate/v1/token_service_pb.js";
import type { ChainRegistry } from "../chains.ts";

/** The Connect implementation of TokenService. */
export function createTokenServiceImpl(deps: { chains: ChainRegistry }): ServiceImpl<typeof TokenService> {
  return {
    async listTokenHolders(req) {
      const page = await deps.chains
        .resolve(req.chain)
        .tokens.list({ mint: req.mint, limit: req.limit, cursor: req.cursor, includeZero: req.includeZero });
      return { mint: page.mint, program: page.program, items: page.items, nextCursor: page.nextCursor ?? undefined };
    },
  };
}
