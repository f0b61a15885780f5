/** Every RPC of the contract, read from the generated descriptors, so coverage follows proto/. */
import { CollectionService } from "../../../gen/solgate/v1/collection_service_pb.js";
import { FeeService } from "../../../gen/solgate/v1/fee_service_pb.js";
import { ProgramService } from "../../../gen/solgate/v1/program_service_pb.js";
import { TransactionService } from "../../../gen/solgate/v1/transaction_service_pb.js";
import { AccountService } from "../../../gen/solgate/v1/account_service_pb.js";
import { TokenService } from "../../../gen/solgate/v1/token_service_pb.js";
import { WalletService } from "../../../gen/solgate/v1/wallet_service_pb.js";
import { WebhookService } from "../../../gen/solgate/v1/webhook_service_pb.js";

export const SOLGATE_SERVICES = [
  ProgramService,
  FeeService,
  TransactionService,
  CollectionService,
  AccountService,
  WalletService,
  TokenService,
  WebhookService,
];

/** One RPC. */
export interface Rpc {
  /** `FeeService`. */
  service: string;
  /** `solgate.v1.FeeService`. */
  typeName: string;
  /** `GetFees`. */
  method: string;
  serverStreaming: boolean;
}

/** All RPCs of the services. */
export const ALL_RPCS: readonly Rpc[] = SOLGATE_SERVICES.flatMap((s) =>
  s.methods.map((m) => ({
    service: s.name,
    typeName: s.typeName,
    method: m.name,
    serverStreaming: m.methodKind === "server_streaming",
  })),
);

/** The RPCs no check name mentions. */
export function uncovered(checkNames: readonly string[]): string[] {
  return ALL_RPCS.filter((r) => !checkNames.some((n) => n.includes(r.method))).map((r) => `${r.service}.${r.method}`);
}
