/**
 * Inspecting JSON-RPC errors that a node returned. They stay kit `SolanaError`s (the cores match on
 * kit's codes and contexts); these helpers give the raw `{code, message, data}` the node sent, which
 * kit partly reshapes (it turns a preflight failure's `err` into a `cause`, for example).
 */
import { getSolanaErrorFromJsonRpcError, isSolanaError } from "@solana/kit";

/**
 * The context key under which the transport keeps the node's raw error object. It must be an
 * enumerable string key: kit builds `SolanaError.context` with `{err, ...rest}` and `Object.entries`,
 * which drop symbols and non-enumerable properties. The `__` prefix follows kit's own `__code`.
 */
export const RAW_RPC_ERROR = "__rpcError";

/** A JSON-RPC error exactly as the node sent it. */
export interface RpcErrorInfo {
  /** The JSON-RPC code, e.g. -32002 for a failed preflight simulation. */
  code: number;
  /** The node's message. */
  message: string;
  /** The node's `data` (`undefined` when it sent none); integers in it are bigints, as everywhere in kit. */
  data?: unknown;
}

/**
 * Records the raw error on the response so that {@link rpcErrorOf} can find it after kit has turned it
 * into a `SolanaError`. Called by the transport for every JSON-RPC error body.
 */
export function tagRawRpcError(error: { code: unknown; message: unknown; data?: unknown }): void {
  const data = error.data;
  const isRecord = typeof data === "object" && data !== null && !Array.isArray(data);
  // A shallow copy: tagging `data` itself would make the raw error contain itself, and kit walks the
  // response recursively.
  const raw: RpcErrorInfo = {
    code: Number(error.code),
    message: String(error.message),
    data: isRecord ? { ...data } : data,
  };
  if (isRecord) {
    (data as Record<string, unknown>)[RAW_RPC_ERROR] = raw;
  } else {
    // Kit only copies object-shaped data into the context, so give it one that carries the original.
    error.data = { [RAW_RPC_ERROR]: raw };
  }
}

/**
 * A JSON-RPC error whose code kit does not know (DAS's -32000 "Asset Not Found", a provider's own
 * codes). Kit's own conversion throws a TypeError on those outside production builds.
 */
export class UnknownRpcError extends Error {
  readonly rpcError: RpcErrorInfo;

  constructor(rpcError: RpcErrorInfo) {
    super(`JSON-RPC error ${rpcError.code}: ${rpcError.message}`);
    this.name = "UnknownRpcError";
    this.rpcError = rpcError;
  }
}

/** Turns a JSON-RPC error body into the error to throw: kit's `SolanaError`, or {@link UnknownRpcError}. */
export function errorFromJsonRpcError(error: unknown): Error {
  try {
    return getSolanaErrorFromJsonRpcError(error as Parameters<typeof getSolanaErrorFromJsonRpcError>[0]);
  } catch {
    const { code, message, data } = (error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
    return new UnknownRpcError({ code: Number(code), message: String(message), data });
  }
}

/**
 * The node's JSON-RPC error behind `e`, or `undefined` when `e` is not one (a transport failure,
 * a SolgateError, a bug).
 */
export function rpcErrorOf(e: unknown): RpcErrorInfo | undefined {
  if (e instanceof UnknownRpcError) return e.rpcError;
  if (!isSolanaError(e)) return undefined;
  const context = e.context as Record<string, unknown>;
  const raw = context[RAW_RPC_ERROR] as RpcErrorInfo | undefined;
  // Kit's response transformers walk the whole response, our tag included, and turn integers into bigints.
  if (raw) return { code: Number(raw.code), message: raw.message, data: raw.data };
  const code = Number(context.__code);
  // Kit's own error codes are positive; JSON-RPC error codes are negative.
  if (!Number.isFinite(code) || code >= 0) return undefined;
  const { __code: _code, __serverMessage, ...rest } = context;
  return {
    code,
    message: typeof __serverMessage === "string" ? __serverMessage : e.message,
    data: Object.keys(rest).length > 0 ? rest : undefined,
  };
}

/** Whether `e` is a JSON-RPC error with this code from the node. */
export function isRpcErrorCode(e: unknown, code: number): boolean {
  return rpcErrorOf(e)?.code === code;
}
