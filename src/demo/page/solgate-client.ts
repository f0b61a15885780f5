/**
 * The browser side of the demo page: Solgate clients over gRPC-Web or Connect (connect-web, fetch),
 * with the API key sent as `Authorization: Bearer`, and a plain description of any error (code,
 * message, and the `google.rpc.ErrorInfo` reason the server attaches).
 */
import { createClient, ConnectError, Code } from "@connectrpc/connect";
import type { Client, Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { ErrorInfoSchema } from "../../../gen/google/rpc/error_details_pb.js";
import { CollectionService } from "../../../gen/solgate/v1/collection_service_pb.js";
import { FeeService } from "../../../gen/solgate/v1/fee_service_pb.js";
import { ProgramService } from "../../../gen/solgate/v1/program_service_pb.js";
import { TransactionService } from "../../../gen/solgate/v1/transaction_service_pb.js";
import { AccountService } from "../../../gen/solgate/v1/account_service_pb.js";
import { TokenService } from "../../../gen/solgate/v1/token_service_pb.js";

/** The wire protocols a browser can speak to Solgate. */
export type BrowserProtocol = "grpcweb" | "connect";

/** The services the page uses. */
export interface SolgateClients {
  fees: Client<typeof FeeService>;
  programs: Client<typeof ProgramService>;
  transactions: Client<typeof TransactionService>;
  accounts: Client<typeof AccountService>;
  tokens: Client<typeof TokenService>;
  collections: Client<typeof CollectionService>;
}

/** Options of `createSolgateClients`. */
export interface ClientOptions {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8080` (another origin works: CORS). */
  baseUrl: string;
  protocol: BrowserProtocol;
  /** The API key; empty sends no Authorization header. */
  apiKey: string;
}

/** Builds the clients over one transport. */
export function createSolgateClients(options: ClientOptions): SolgateClients {
  const auth: Interceptor = (next) => (req) => {
    if (options.apiKey !== "") req.header.set("Authorization", `Bearer ${options.apiKey}`);
    return next(req);
  };
  const transport: Transport =
    options.protocol === "grpcweb"
      ? createGrpcWebTransport({ baseUrl: options.baseUrl, interceptors: [auth] })
      : createConnectTransport({ baseUrl: options.baseUrl, interceptors: [auth] });
  return {
    fees: createClient(FeeService, transport),
    programs: createClient(ProgramService, transport),
    transactions: createClient(TransactionService, transport),
    accounts: createClient(AccountService, transport),
    tokens: createClient(TokenService, transport),
    collections: createClient(CollectionService, transport),
  };
}

/** An error as the page shows and reports it. */
export interface ErrorDescription {
  /** Connect's code name in lower snake case (`invalid_argument`, `unimplemented`, ...). */
  code: string;
  message: string;
  /** The ErrorInfo reason (`INVALID_ADDRESS`, ...), when the server sent one. */
  reason?: string;
  domain?: string;
  metadata?: Record<string, string>;
}

/** Describes anything a client call threw. */
export function describeError(error: unknown): ErrorDescription {
  const err = ConnectError.from(error);
  const info = err.findDetails(ErrorInfoSchema)[0];
  const code = (Code[err.code] ?? "unknown").replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
  return {
    code,
    message: err.rawMessage,
    ...(info === undefined ? {} : { reason: info.reason, domain: info.domain, metadata: { ...info.metadata } }),
  };
}
