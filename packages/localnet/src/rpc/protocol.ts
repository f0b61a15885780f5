/**
 * The JSON-RPC 2.0 vocabulary shared by every part of the localnet: the error type that method
 * handlers throw, the codes an agave node uses, and the shape of a method table.
 */

/** Error codes as an agave node sends them (JSON-RPC standard codes plus Solana's -320xx range). */
export const RpcErrorCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  BLOCK_CLEANED_UP: -32001,
  SEND_TRANSACTION_PREFLIGHT_FAILURE: -32002,
  TRANSACTION_SIGNATURE_VERIFICATION_FAILURE: -32003,
  BLOCK_NOT_AVAILABLE: -32004,
  NODE_UNHEALTHY: -32005,
  TRANSACTION_PRECOMPILE_VERIFICATION_FAILURE: -32006,
  SLOT_SKIPPED: -32007,
  NO_SNAPSHOT: -32008,
  LONG_TERM_STORAGE_SLOT_SKIPPED: -32009,
  KEY_EXCLUDED_FROM_SECONDARY_INDEX: -32010,
  TRANSACTION_HISTORY_NOT_AVAILABLE: -32011,
  SCAN_ERROR: -32012,
  TRANSACTION_SIGNATURE_LEN_MISMATCH: -32013,
  BLOCK_STATUS_NOT_AVAILABLE_YET: -32014,
  UNSUPPORTED_TRANSACTION_VERSION: -32015,
  MIN_CONTEXT_SLOT_NOT_REACHED: -32016,
  /** agave 4.4: getLeaderSchedule's identity filter matched no slot. */
  LEADER_SCHEDULE_IDENTITY_NOT_FOUND: -32022,
} as const;

/** Thrown by a method handler; the server turns it into a JSON-RPC error object. */
export class JsonRpcError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    // These are answers, not bugs: skipping the stack trace makes them ~10x cheaper to throw,
    // which matters when a client floods the node with malformed input.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = "JsonRpcError";
    this.code = code;
    this.data = data;
  }
}

/** `Invalid params: ...` as agave words it. */
export function invalidParams(message: string): JsonRpcError {
  return new JsonRpcError(RpcErrorCode.INVALID_PARAMS, message);
}

/** Commitment levels a request may name. */
export type Commitment = "processed" | "confirmed" | "finalized";

/** What a method handler may ask of the chain about time. */
export interface MethodContext {
  /** The slot a read at this commitment observes (honours minContextSlot checks done by the caller). */
  slotAt(commitment: Commitment): bigint;
}

/** A JSON-RPC method: positional params in (already JSON-parsed, untrusted), a JSON-serialisable result out. */
export type MethodHandler = (params: unknown[], ctx: MethodContext) => unknown | Promise<unknown>;

const NAMED_PARAMS = Symbol("acceptsNamedParams");

/**
 * Marks a handler that also takes JSON-RPC named params (an object), as DAS providers do; it then
 * receives the object as its only positional param. Solana's own methods take positional params only.
 */
export function withNamedParams(handler: MethodHandler): MethodHandler {
  return Object.assign((params: unknown[], ctx: MethodContext) => handler(params, ctx), { [NAMED_PARAMS]: true });
}

/** Whether `handler` takes named params (see {@link withNamedParams}). */
export function acceptsNamedParams(handler: MethodHandler): boolean {
  return (handler as { [NAMED_PARAMS]?: boolean })[NAMED_PARAMS] === true;
}

/** Method name to handler. */
export type MethodTable = Record<string, MethodHandler>;
