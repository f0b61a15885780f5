/**
 * The node's JSON-RPC errors, named once. Cores ask `nodeErrorOf(e)?.kind` and never compare a numeric
 * JSON-RPC code: the codes (agave's, which kit names `SOLANA_ERROR__JSON_RPC__*`) are read here only.
 */
import {
  SOLANA_ERROR__JSON_RPC__INVALID_PARAMS,
  SOLANA_ERROR__JSON_RPC__METHOD_NOT_FOUND,
  SOLANA_ERROR__JSON_RPC__SCAN_ERROR,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_CLEANED_UP,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_NOT_AVAILABLE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_KEY_EXCLUDED_FROM_SECONDARY_INDEX,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_LONG_TERM_STORAGE_SLOT_SKIPPED,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_NODE_UNHEALTHY,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SLOT_SKIPPED,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_PRECOMPILE_VERIFICATION_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_LEN_MISMATCH,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION,
} from "@solana/kit";
import { rpcErrorOf } from "./rpc-errors.ts";

/** Code a few providers use for "too many requests" inside a JSON-RPC body (kit has no name for it). */
const PROVIDER_RATE_LIMITED = -32429;

/** What every node error carries: the node's code (for error details and logs) and its message. */
interface NodeErrorOf<Kind extends string> {
  readonly kind: Kind;
  readonly code: number;
  readonly message: string;
}

/**
 * A JSON-RPC error from the node, by what it means:
 * - `already-processed`: the node has the transaction already (a success for a resend);
 * - `blockhash-not-found`: the transaction's blockhash is unknown to the node (lapsed, or too new);
 * - `preflight-failed`: the node simulated the transaction and it failed, with the simulation's logs;
 * - `transaction-rejected`: the node refuses the transaction itself (signatures, precompiles, version);
 * - `slot-skipped`: no block will ever exist for the slot (skipped, or cleaned up);
 * - `block-not-available`: the slot's block is not available yet;
 * - `scan-refused`: the node will not run this account scan (key excluded from an index, scan error);
 * - `rate-limited`: the provider says too many requests, inside a JSON-RPC body;
 * - `node-unhealthy`: the node says it is behind or unwell;
 * - `invalid-params`, `method-not-found`: the JSON-RPC request itself was refused;
 * - `other`: any other code, with the node's `data`.
 */
export type NodeError =
  | NodeErrorOf<"already-processed">
  | NodeErrorOf<"blockhash-not-found">
  | (NodeErrorOf<"preflight-failed"> & {
      /** The simulation's `TransactionError`. */
      readonly err: unknown;
      readonly logs: readonly string[];
      readonly unitsConsumed: bigint | undefined;
    })
  | NodeErrorOf<"transaction-rejected">
  | NodeErrorOf<"slot-skipped">
  | NodeErrorOf<"block-not-available">
  | NodeErrorOf<"scan-refused">
  | NodeErrorOf<"rate-limited">
  | NodeErrorOf<"node-unhealthy">
  | NodeErrorOf<"invalid-params">
  | NodeErrorOf<"method-not-found">
  | (NodeErrorOf<"other"> & { readonly data: unknown });

/** The kinds of {@link NodeError}. */
export type NodeErrorKind = NodeError["kind"];

const KIND_BY_CODE: ReadonlyMap<number, Exclude<NodeErrorKind, "preflight-failed" | "other">> = new Map([
  [SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, "transaction-rejected"],
  [SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_PRECOMPILE_VERIFICATION_FAILURE, "transaction-rejected"],
  [SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_LEN_MISMATCH, "transaction-rejected"],
  [SOLANA_ERROR__JSON_RPC__SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION, "transaction-rejected"],
  [SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SLOT_SKIPPED, "slot-skipped"],
  [SOLANA_ERROR__JSON_RPC__SERVER_ERROR_LONG_TERM_STORAGE_SLOT_SKIPPED, "slot-skipped"],
  [SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_CLEANED_UP, "slot-skipped"],
  [SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_NOT_AVAILABLE, "block-not-available"],
  [SOLANA_ERROR__JSON_RPC__SERVER_ERROR_KEY_EXCLUDED_FROM_SECONDARY_INDEX, "scan-refused"],
  [SOLANA_ERROR__JSON_RPC__SCAN_ERROR, "scan-refused"],
  [PROVIDER_RATE_LIMITED, "rate-limited"],
  [SOLANA_ERROR__JSON_RPC__SERVER_ERROR_NODE_UNHEALTHY, "node-unhealthy"],
  [SOLANA_ERROR__JSON_RPC__INVALID_PARAMS, "invalid-params"],
  [SOLANA_ERROR__JSON_RPC__METHOD_NOT_FOUND, "method-not-found"],
]);

/** Whether a `TransactionError` is the named one (`"AlreadyProcessed"` or `{ InstructionError: ... }`). */
function isErrNamed(err: unknown, name: string): boolean {
  return err === name || (err !== null && typeof err === "object" && Object.hasOwn(err, name));
}

/**
 * What the node's JSON-RPC error behind `e` means, or `undefined` when `e` is not one (a transport
 * failure, a SolgateError, a bug). A transaction the node has already processed, or whose blockhash it
 * does not know, is named so whatever code carried it (nodes report both inside a failed preflight, and
 * providers word them in the message).
 */
export function nodeErrorOf(e: unknown): NodeError | undefined {
  const info = rpcErrorOf(e);
  if (info === undefined) return undefined;
  const { code, message } = info;
  const data =
    info.data !== null && typeof info.data === "object"
      ? (info.data as { err?: unknown; logs?: unknown; unitsConsumed?: unknown })
      : {};
  if (isErrNamed(data.err, "AlreadyProcessed") || /already (been )?processed/i.test(message))
    return { kind: "already-processed", code, message };
  if (isErrNamed(data.err, "BlockhashNotFound") || /blockhash not found/i.test(message))
    return { kind: "blockhash-not-found", code, message };
  if (code === SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE) {
    return {
      kind: "preflight-failed",
      code,
      message,
      err: data.err ?? null,
      logs: Array.isArray(data.logs) ? (data.logs as string[]) : [],
      unitsConsumed:
        data.unitsConsumed === undefined || data.unitsConsumed === null
          ? undefined
          : BigInt(data.unitsConsumed as number | bigint),
    };
  }
  const kind = KIND_BY_CODE.get(code);
  return kind === undefined ? { kind: "other", code, message, data: info.data } : { kind, code, message };
}
