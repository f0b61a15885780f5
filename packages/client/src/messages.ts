/**
 * The contract's generated code (protoc-gen-es, src/gen): every message, enum and service descriptor of
 * package solgate.v1, and google.rpc.ErrorInfo, the detail that carries an error's reason.
 */
export * from "./gen/solgate/v1/account_service_pb.js";
export * from "./gen/solgate/v1/collection_event_pb.js";
export * from "./gen/solgate/v1/collection_pb.js";
export * from "./gen/solgate/v1/collection_service_pb.js";
export * from "./gen/solgate/v1/fee_pb.js";
export * from "./gen/solgate/v1/fee_service_pb.js";
export * from "./gen/solgate/v1/ladder_pb.js";
export * from "./gen/solgate/v1/program_pb.js";
export * from "./gen/solgate/v1/program_service_pb.js";
export * from "./gen/solgate/v1/token_service_pb.js";
export * from "./gen/solgate/v1/transaction_pb.js";
export * from "./gen/solgate/v1/transaction_service_pb.js";
export * from "./gen/solgate/v1/wallet_service_pb.js";
export * from "./gen/solgate/v1/webhook_pb.js";
export * from "./gen/solgate/v1/webhook_service_pb.js";
export { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
export type { ErrorInfo } from "./gen/google/rpc/error_details_pb.js";
