/**
 * The application's Connect routes: each Solgate service with its handler implementation over the
 * chain registry. A service whose core is not built yet is registered empty, so reflection lists it
 * and its methods answer UNIMPLEMENTED.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { ChainRegistry } from "../chains.ts";
import { createProgramServiceImpl } from "../services/program-service.ts";
import { createTransactionServiceImpl, watchBundleEvents, watchStatusEvents } from "../services/transaction-service.ts";
import { streamRoute, type StreamRoute } from "./grpc-stream-path.ts";
import { createFeeServiceImpl, watchFeesEvents } from "../services/fee-service.ts";
import { createCollectionServiceImpl, watchCollectionEvents } from "../services/collection-service.ts";
import { createAccountServiceImpl } from "../services/account-service.ts";
import { createWalletServiceImpl } from "../services/wallet-service.ts";
import { createTokenServiceImpl } from "../services/token-service.ts";
import { createWebhookServiceImpl } from "../services/webhook-service.ts";
import { WebhookService } from "../../gen/solgate/v1/webhook_service_pb.js";
import { AccountService } from "../../gen/solgate/v1/account_service_pb.js";
import { WalletService } from "../../gen/solgate/v1/wallet_service_pb.js";
import { TokenService } from "../../gen/solgate/v1/token_service_pb.js";
import { CollectionService } from "../../gen/solgate/v1/collection_service_pb.js";
import { FeeService } from "../../gen/solgate/v1/fee_service_pb.js";
import { ProgramService } from "../../gen/solgate/v1/program_service_pb.js";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";

/** The contract's services, in the order reflection and the OpenAPI document list them. */
export const SOLGATE_SERVICES = [
  CollectionService,
  FeeService,
  ProgramService,
  TransactionService,
  AccountService,
  WalletService,
  TokenService,
  WebhookService,
] as const;

/** Dependencies of the routes. */
export interface RoutesDeps {
  chains: ChainRegistry;
}

/** Returns the `routes` callback for `createServer`. */
export function createRoutes(deps: RoutesDeps): (router: ConnectRouter) => void {
  return (router) => {
    router.service(ProgramService, createProgramServiceImpl({ chains: deps.chains }));
    router.service(FeeService, createFeeServiceImpl({ chains: deps.chains }));
    router.service(TransactionService, createTransactionServiceImpl({ chains: deps.chains }));
    router.service(CollectionService, createCollectionServiceImpl({ chains: deps.chains }));
    router.service(AccountService, createAccountServiceImpl({ chains: deps.chains }));
    router.service(WalletService, createWalletServiceImpl({ chains: deps.chains }));
    router.service(TokenService, createTokenServiceImpl({ chains: deps.chains }));
    router.service(WebhookService, createWebhookServiceImpl({ chains: deps.chains }));
  };
}

/**
 * The streams that stay open by the thousand (WatchStatus, WatchFees), for the server's lean gRPC path;
 * served by the same functions as the router's handlers.
 */
export function createStreamRoutes(deps: RoutesDeps): StreamRoute[] {
  return [
    streamRoute({
      method: TransactionService.method.watchStatus,
      handle: (request, signal) => watchStatusEvents(deps.chains, request, signal),
    }),
    streamRoute({
      method: TransactionService.method.watchBundle,
      handle: (request, signal) => watchBundleEvents(deps.chains, request, signal),
    }),
    streamRoute({
      method: FeeService.method.watchFees,
      handle: (request, signal) => watchFeesEvents(deps.chains, request, signal),
    }),
    streamRoute({
      method: CollectionService.method.watchCollection,
      handle: (request, signal) => watchCollectionEvents(deps.chains, request, signal),
    }),
  ];
}
