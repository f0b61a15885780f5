/** agave's `RpcResponse` envelope: `{context: {slot, apiVersion}, value}`. */
import { jsonU64, type JsonU64 } from "./json.ts";

/** The API version agave reports in `context.apiVersion` when none is configured. */
export const DEFAULT_API_VERSION = "2.2.7";

export interface RpcResponseContext {
  readonly slot: JsonU64;
  readonly apiVersion?: string;
}

export interface RpcResponse<T> {
  readonly context: RpcResponseContext;
  readonly value: T;
}

/** Wraps a value with its context; `apiVersion` is omitted when given as an empty string. */
export function rpcResponse<T>(slot: bigint, apiVersion: string, value: T): RpcResponse<T> {
  const context: RpcResponseContext = apiVersion === "" ? { slot: jsonU64(slot) } : { slot: jsonU64(slot), apiVersion };
  return { context, value };
}
