/** AccountService: GetAccount, request to core call to response. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { AccountService } from "../../gen/solgate/v1/account_service_pb.js";
import type { ChainRegistry } from "../chains.ts";
import { toDataMessage } from "./program-service.ts";

/** The Connect implementation of AccountService. */
export function createAccountServiceImpl(deps: { chains: ChainRegistry }): ServiceImpl<typeof AccountService> {
  return {
    async getAccount(req) {
      const account = await deps.chains.resolve(req.chain).accounts.get(req.address);
      return { account: { ...account, data: toDataMessage(account.data) } };
    },
  };
}
