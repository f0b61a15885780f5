/**
 * The error catalogue: every failure Solgate reports has a stable reason (UPPER_SNAKE, never renamed
 * or reused), one canonical gRPC code, one HTTP status for the REST surface, and a one-line meaning.
 * Core code throws `SolgateError`; `toConnectError` is the only place that turns anything thrown into
 * what goes on the wire. docs/errors.md carries the same table; test/errors.test.ts keeps the two in step.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import type { DescMessage, MessageInitShape } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { ErrorInfoSchema, RetryInfoSchema } from "../gen/google/rpc/error_details_pb.js";

/** The `ErrorInfo.domain` of every error Solgate raises. */
export const ERROR_DOMAIN = "solgate";

/** One catalogue entry. */
export interface ErrorReasonSpec {
  /** The canonical gRPC/Connect code. */
  readonly code: Code;
  /** The HTTP status the REST surface answers with. */
  readonly httpStatus: number;
  /** What the reason means, in one line (also the "meaning" column of docs/errors.md). */
  readonly description: string;
  /** Whether the client may retry later (adds a `google.rpc.RetryInfo`). */
  readonly retryable?: boolean;
}

/** The catalogue. Append only: a reason, once published, keeps its meaning. */
export const ERROR_REASONS = {
  INVALID_ADDRESS: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description: "An address is not valid base58 of 32 bytes.",
  },
  INVALID_PARAMETER: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description: "A request field is missing, malformed or out of range; `field` names it.",
  },
  INVALID_TRANSACTION: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description: "The transaction bytes do not decode, or are not signed as required.",
  },
  NOT_FOUND: {
    code: Code.NotFound,
    httpStatus: 404,
    description: "The account, collection or transaction asked for does not exist.",
  },
  UNKNOWN_CHAIN: {
    code: Code.NotFound,
    httpStatus: 404,
    description: "The chain named in the request is not served here; `served` lists those that are.",
  },
  BLOCKHASH_EXPIRED: {
    code: Code.FailedPrecondition,
    httpStatus: 409,
    description: "The transaction's blockhash is no longer valid; fetch a new one, sign again and resend.",
  },
  SIMULATION_FAILED: {
    code: Code.FailedPrecondition,
    httpStatus: 422,
    description: "The transaction failed in simulation; `logs` and `error` say why.",
  },
  TIP_OVER_CEILING: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description:
      "A tip in lamports is over the server's ceiling (SOLGATE_TIP_MAX_LAMPORTS); `maxLamports` says it. A tip level is clamped instead.",
  },
  TIPS_UNAVAILABLE: {
    code: Code.FailedPrecondition,
    httpStatus: 422,
    description: "A tip was asked for, but the chain has no block engine configured (SOLGATE_JITO_URL) to take it.",
  },
  TIP_LEVELS_UNKNOWN: {
    code: Code.Unavailable,
    httpStatus: 503,
    description:
      "A tip level was asked for, but no landed tips are known yet; give lamports, or retry after the delay given.",
    retryable: true,
  },
  BUNDLE_TOO_LARGE: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description: "A bundle holds no transaction or more than 5; `count` says how many.",
  },
  BUNDLE_DUPLICATE_TRANSACTION: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description: "A bundle holds the same transaction twice; `index` names the second.",
  },
  BUNDLE_NO_TIP: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description:
      "No transaction of the bundle transfers at least 1,000 lamports to a Jito tip account (getTipAccounts).",
  },
  BUNDLE_TIP_IN_LOOKUP_TABLE: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description: "A bundle reaches a Jito tip account through an address lookup table; name it in the message itself.",
  },
  BUNDLES_UNAVAILABLE: {
    code: Code.FailedPrecondition,
    httpStatus: 422,
    description: "The chain has no block engine configured (SOLGATE_JITO_URL), so bundles cannot be sent.",
  },
  BUNDLE_REFUSED: {
    code: Code.FailedPrecondition,
    httpStatus: 422,
    description:
      "The block engine refused a bundle that passed Solgate's checks; `engineMessage` carries its word. Nothing of it was sent.",
  },
  BLOCK_ENGINE_UNAVAILABLE: {
    code: Code.Unavailable,
    httpStatus: 503,
    description:
      "The chain's block engine did not answer, or answered in an unexpected shape; retry after the delay given.",
    retryable: true,
  },
  QUERY_TOO_BROAD: {
    code: Code.FailedPrecondition,
    httpStatus: 422,
    description: "The query would scan too many accounts; narrow it with filters.",
  },
  UNAUTHENTICATED: {
    code: Code.Unauthenticated,
    httpStatus: 401,
    description: "The `Authorization: Bearer <key>` header is missing or the key is not valid.",
  },
  RATE_LIMITED: {
    code: Code.ResourceExhausted,
    httpStatus: 429,
    description: "Too many requests; retry after the delay given.",
    retryable: true,
  },
  UPSTREAM_UNAVAILABLE: {
    code: Code.Unavailable,
    httpStatus: 503,
    description: "The Solana node behind this chain did not answer or failed; retry after the delay given.",
    retryable: true,
  },
  UPSTREAM_INVALID_RESPONSE: {
    code: Code.Unavailable,
    httpStatus: 503,
    description:
      "The Solana node behind this chain answered with something that cannot be trusted (a wrong shape, a number out of range, an answer past the size limit); retry after the delay given.",
    retryable: true,
  },
  STORE_UNAVAILABLE: {
    code: Code.Unavailable,
    httpStatus: 503,
    description:
      "The fleet's shared store (Redis) is unavailable: a send could not be recorded and was not taken, or a status, watch or bundle lookup could not tell whether Solgate took the transaction (the chain does not know it yet), so it is not called not found; retry after the delay given.",
    retryable: true,
  },
  REQUEST_TOO_LARGE: {
    code: Code.ResourceExhausted,
    httpStatus: 413,
    description: "The request body is larger than the limit; `limit` gives it in bytes.",
  },
  METHOD_NOT_ALLOWED: {
    code: Code.Unimplemented,
    httpStatus: 405,
    description:
      "The path (REST, or an RPC's) exists but not with this HTTP method; `allowed` lists the methods it takes.",
  },
  UNSUPPORTED_MEDIA_TYPE: {
    code: Code.Unimplemented,
    httpStatus: 415,
    description:
      "The RPC does not take the request's content type (Connect: `application/json` or `application/proto`); `contentType` gives it.",
  },
  INTERNAL: {
    code: Code.Internal,
    httpStatus: 500,
    description: "An unexpected error inside Solgate; it is logged with the request id.",
  },
  COLLECTION_CURSOR_INVALID: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description:
      "A collection feed cursor is not one this server gave out for this collection (malformed, another collection's, or ahead of the log).",
  },
  COLLECTION_CURSOR_EXPIRED: {
    code: Code.FailedPrecondition,
    httpStatus: 409,
    description:
      "A collection feed cursor points before the oldest event the log still holds (or into a log that is gone); `oldestCursor` is where the log now begins. Re-read the collection, then watch from there.",
  },
  WEBHOOK_URL_REFUSED: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description:
      "A webhook URL is not delivered to: not https, credentials in it, or a host that is not a public address (the off-chain metadata guard).",
  },
  WEBHOOK_NOT_FOUND: {
    code: Code.NotFound,
    httpStatus: 404,
    description: "No webhook with this id belongs to the calling API key (another key's webhook is not visible).",
  },
  COLLECTION_FEED_FULL: {
    code: Code.ResourceExhausted,
    httpStatus: 429,
    description:
      "The server follows as many collections as it may (SOLGATE_FEED_MAX_COLLECTIONS); a collection it already follows can still be watched.",
  },
  NONCE_ACCOUNT_NOT_FOUND: {
    code: Code.FailedPrecondition,
    httpStatus: 409,
    description: "The durable nonce account named for a ladder does not exist; create and initialize it first.",
  },
  NONCE_ACCOUNT_INVALID: {
    code: Code.FailedPrecondition,
    httpStatus: 409,
    description:
      "The account named as a ladder's nonce is not an initialized nonce account owned by the System program.",
  },
  NONCE_AUTHORITY_NOT_SIGNER: {
    code: Code.FailedPrecondition,
    httpStatus: 409,
    description:
      "The nonce account's authority is not a signer of the draft, so the rungs could not advance the nonce.",
  },
  LADDER_FEE_UNAFFORDABLE: {
    code: Code.FailedPrecondition,
    httpStatus: 409,
    description:
      "The fee payer cannot pay the ladder's top rung and stay rent-exempt; `required` and `balance` give the lamports.",
  },
  LADDER_MESSAGE_MISMATCH: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description:
      "The rungs of a ladder differ in more than their compute-unit price; `rung` names the first that does.",
  },
  LADDER_NOT_NONCE: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description:
      "A rung does not advance a durable nonce first (AdvanceNonceAccount as instruction 0), or the rungs advance different nonce accounts.",
  },
  LADDER_NONCE_STALE: {
    code: Code.FailedPrecondition,
    httpStatus: 409,
    description:
      "The rungs' blockhash is not the nonce account's current value: the nonce moved since they were prepared; prepare and sign again.",
  },
  LADDER_PRICES_NOT_RISING: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description:
      "Two rungs of a ladder carry the same compute-unit price; every rung must pay strictly more than the one below it.",
  },
  LADDER_SIGNATURE_INVALID: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    description: "A rung's signature is missing or does not verify; `rung` names it. No rung was submitted.",
  },
} as const satisfies Record<string, ErrorReasonSpec>;

/** A stable error reason. */
export type ErrorReason = keyof typeof ERROR_REASONS;

/** The retry delay suggested when a retryable error does not give its own. */
export const DEFAULT_RETRY_DELAY_MS = 1000;

/** Options of a `SolgateError` beyond its reason, message and details. */
export interface SolgateErrorOptions {
  /** The error that caused this one (kept for logs, never sent). */
  cause?: unknown;
  /** For retryable reasons: how long the client should wait before retrying. */
  retryAfterMs?: number;
}

/**
 * The one error type of the transport-free code. `message` is short, English and actionable;
 * `details` are machine-readable facts (they become `ErrorInfo.metadata`).
 */
export class SolgateError extends Error {
  readonly reason: ErrorReason;
  readonly details: Readonly<Record<string, unknown>>;
  readonly retryAfterMs: number | undefined;

  constructor(
    reason: ErrorReason,
    message: string,
    details: Record<string, unknown> = {},
    options: SolgateErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SolgateError";
    this.reason = reason;
    this.details = details;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Whether `value` is a `SolgateError`, also across module copies. */
export function isSolgateError(value: unknown): value is SolgateError {
  return (
    value instanceof SolgateError ||
    (value instanceof Error &&
      value.name === "SolgateError" &&
      typeof (value as SolgateError).reason === "string" &&
      Object.hasOwn(ERROR_REASONS, (value as SolgateError).reason))
  );
}

/** Called with errors that are not SolgateError nor ConnectError (bugs), before they become INTERNAL. */
export type UnexpectedErrorSink = (error: unknown) => void;

/**
 * Maps anything thrown to the ConnectError sent on the wire, the only such mapping in Solgate.
 * - SolgateError: its message and the reason's code, with a `google.rpc.ErrorInfo` (reason, domain
 *   "solgate", details as string metadata) and, for retryable reasons, a `google.rpc.RetryInfo`.
 * - ConnectError: unchanged (Connect's own errors, and errors already mapped).
 * - anything else: INTERNAL with a generic message; the original goes to `onUnexpected` (logged with its stack).
 */
export function toConnectError(error: unknown, onUnexpected?: UnexpectedErrorSink): ConnectError {
  if (isSolgateError(error)) {
    const spec: ErrorReasonSpec = ERROR_REASONS[error.reason];
    const details: { desc: DescMessage; value: MessageInitShape<DescMessage> }[] = [
      {
        desc: ErrorInfoSchema,
        value: create(ErrorInfoSchema, {
          reason: error.reason,
          domain: ERROR_DOMAIN,
          metadata: flattenDetails(error.details),
        }),
      },
    ];
    if (spec.retryable) {
      const ms = Math.max(0, Math.round(error.retryAfterMs ?? DEFAULT_RETRY_DELAY_MS));
      details.push({
        desc: RetryInfoSchema,
        value: create(RetryInfoSchema, {
          retryDelay: create(DurationSchema, {
            seconds: BigInt(Math.floor(ms / 1000)),
            nanos: (ms % 1000) * 1_000_000,
          }),
        }),
      });
    }
    return new ConnectError(error.message, spec.code, undefined, details, error);
  }
  if (error instanceof ConnectError) return error;
  onUnexpected?.(error);
  return toConnectError(new SolgateError("INTERNAL", "internal error"));
}

/** The `ErrorInfo.reason` carried by a ConnectError, if any. */
export function reasonOf(error: ConnectError): string | undefined {
  return error.findDetails(ErrorInfoSchema)[0]?.reason;
}

/** HTTP status for the REST surface: the catalogue's for a Solgate reason, else from the code. */
export function httpStatusOf(error: ConnectError): number {
  const reason = reasonOf(error);
  if (reason !== undefined && Object.hasOwn(ERROR_REASONS, reason)) {
    return ERROR_REASONS[reason as ErrorReason].httpStatus;
  }
  return HTTP_STATUS_BY_CODE[error.code] ?? 500;
}

const HTTP_STATUS_BY_CODE: Partial<Record<Code, number>> = {
  [Code.Canceled]: 499,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Unavailable]: 503,
  [Code.Unauthenticated]: 401,
};

/**
 * ErrorInfo metadata is string to string: strings pass as they are, everything else is JSON (bigints as
 * numbers, or as strings past 2^53). A string that would itself read as JSON (`"123"`, `"true"`) is JSON-encoded too, so that a
 * reader that parses what parses (the REST layer) gets back exactly the string that was put in.
 */
function flattenDetails(details: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(details)) {
    if (value === undefined) continue;
    out[key] =
      typeof value === "string" && !readsAsJson(value)
        ? value
        : JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? bigintToJson(v) : v));
  }
  return out;
}

// JSON numbers lose precision past 2^53: such values travel as decimal strings.
function bigintToJson(v: bigint): number | string {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}

function readsAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
