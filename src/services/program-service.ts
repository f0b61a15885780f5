/** ProgramService: ListProgramAccounts, request to core call to response. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ProgramService } from "../../gen/solgate/v1/program_service_pb.js";
import { DataFormat } from "../../gen/solgate/v1/program_pb.js";
import type { AccountDataSchema, ProgramAccountSchema } from "../../gen/solgate/v1/program_pb.js";
import type { ChainRegistry } from "../chains.ts";
import type { AccountData, ProgramAccountItem } from "../programs/program-accounts.ts";

/** The Connect implementation of ProgramService. */
export function createProgramServiceImpl(deps: { chains: ChainRegistry }): ServiceImpl<typeof ProgramService> {
  return {
    async listProgramAccounts(req) {
      const page = await deps.chains.resolve(req.chain).programs.list({
        programId: req.programId,
        size: req.size,
        match: req.match,
        limit: req.limit,
        cursor: req.cursor,
      });
      return {
        programId: page.programId,
        items: page.items.map(toMessage),
        nextCursor: page.nextCursor ?? undefined,
      };
    },
  };
}

function toMessage(item: ProgramAccountItem): MessageInitShape<typeof ProgramAccountSchema> {
  return {
    address: item.address,
    lamports: item.lamports,
    sol: item.sol,
    space: item.space,
    data: toDataMessage(item.data),
  };
}

/** An account's data as the contract carries it (shared with AccountService). */
export function toDataMessage(data: AccountData): MessageInitShape<typeof AccountDataSchema> {
  return data.format === "parsed"
    ? { format: DataFormat.PARSED, program: data.program, parsed: data.parsed }
    : { format: DataFormat.BASE64, base64: data.base64 };
}
