/**
 * What the Node and browser entry points share: one typed client per service over any transport, the
 * API-key interceptor, and an error's reason code.
 */
import { ConnectError, createClient } from "@connectrpc/connect";
import type { Client, Interceptor, Transport } from "@connectrpc/connect";
import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { AccountService } from "./gen/solgate/v1/account_service_pb.js";
import { CollectionService } from "./gen/solgate/v1/collection_service_pb.js";
import { FeeService } from "./gen/solgate/v1/fee_service_pb.js";
import { ProgramService } from "./gen/solgate/v1/program_service_pb.js";
import { TokenService } from "./gen/solgate/v1/token_service_pb.js";
import { TransactionService } from "./gen/solgate/v1/transaction_service_pb.js";
import { WalletService } from "./gen/solgate/v1/wallet_service_pb.js";
import { WebhookService } from "./gen/solgate/v1/webhook_service_pb.js";

/** One client per service of solgate.v1. */
export interface SolgateClient {
  collection: Client<typeof CollectionService>;
  fee: Client<typeof FeeService>;
  transaction: Client<typeof TransactionService>;
  program: Client<typeof ProgramService>;
  account: Client<typeof AccountService>;
  wallet: Client<typeof WalletService>;
  token: Client<typeof TokenService>;
  webhook: Client<typeof WebhookService>;
}

/** Options both entry points take. */
export interface SolgateClientOptionsBase {
  /** The gateway's URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` with every call (health and reflection need none). */
  apiKey?: string;
  /** Run before the API-key interceptor (logging, retries, tracing). */
  interceptors?: Interceptor[];
}

/** Clients for every service over `transport`. */
export function createServiceClients(transport: Transport): SolgateClient {
  return {
    collection: createClient(CollectionService, transport),
    fee: createClient(FeeService, transport),
    transaction: createClient(TransactionService, transport),
    program: createClient(ProgramService, transport),
    account: createClient(AccountService, transport),
    wallet: createClient(WalletService, transport),
    token: createClient(TokenService, transport),
    webhook: createClient(WebhookService, transport),
  };
}

/** The interceptors a transport gets: the caller's, then the API key's (when there is a key). */
export function interceptorsFor(options: SolgateClientOptionsBase): Interceptor[] {
  const { apiKey } = options;
  const bearer: Interceptor = (next) => (request) => {
    request.header.set("Authorization", `Bearer ${apiKey}`);
    return next(request);
  };
  return [...(options.interceptors ?? []), ...(apiKey === undefined ? [] : [bearer])];
}

/**
 * The reason code of a failed call (the gateway's error catalogue: `INVALID_ADDRESS`,
 * `BLOCKHASH_EXPIRED`, ...), read from its `google.rpc.ErrorInfo` detail; undefined when it has none.
 */
export function errorReason(error: unknown): string | undefined {
  return ConnectError.from(error).findDetails(ErrorInfoSchema)[0]?.reason;
}
