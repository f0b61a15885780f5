/**
 * Errors on the REST surface, in the seed's form: `{"code": "invalid_address", "message": "...",
 * "details": {...}}` with the catalogue's HTTP status. Everything goes through `toConnectError`
 * first (the only mapping), so a REST error and the same error over gRPC carry the same reason,
 * message and facts; here they are only re-dressed.
 */
import { ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema, RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { httpStatusOf, toConnectError } from "../errors.ts";
import type { UnexpectedErrorSink } from "../errors.ts";
import { codeName } from "../server/interceptors.ts";

/** A REST error ready to send. */
export interface RestError {
  readonly status: number;
  readonly body: { code: string; message: string; details: Record<string, unknown> };
  /** Extra response headers (`Retry-After`, `Allow`). */
  readonly headers: Record<string, string>;
}

/** Maps anything thrown (SolgateError, ConnectError, a bug) to its REST form. */
export function restErrorOf(error: unknown, onUnexpected?: UnexpectedErrorSink): RestError {
  const err = error instanceof ConnectError ? error : toConnectError(error, onUnexpected);
  const info = err.findDetails(ErrorInfoSchema)[0];
  const headers: Record<string, string> = {};
  const details: Record<string, unknown> = {};
  if (info !== undefined) {
    for (const [key, value] of Object.entries(info.metadata)) details[key] = metadataValue(value);
  }
  const retry = err.findDetails(RetryInfoSchema)[0]?.retryDelay;
  if (retry !== undefined) {
    const ms = Number(retry.seconds) * 1000 + Math.round(retry.nanos / 1e6);
    details.retryAfterMs ??= ms;
    headers["retry-after"] = String(Math.ceil(ms / 1000));
  }
  if (info?.reason === "METHOD_NOT_ALLOWED" && Array.isArray(details.allowed))
    headers.allow = details.allowed.join(", ");
  return {
    status: httpStatusOf(err),
    // A Solgate reason is the seed's code, lower-cased; Connect's own errors (no reason) use their code's name.
    body: { code: info?.reason.toLowerCase() ?? codeName(err.code), message: err.rawMessage, details },
    headers,
  };
}

/**
 * ErrorInfo metadata is string to string: `toConnectError` keeps strings and JSON-encodes the rest.
 * Arrays, objects, numbers and booleans come back as JSON (so `details.logs` is an array again); a
 * string that is not such JSON stays a string.
 */
function metadataValue(value: string): unknown {
  const first = value.charCodeAt(0);
  // Only `[`, `{`, `"`, a digit, `-`, `t`, `f` or `n` can start encoded JSON: skip the parse for the rest.
  if (
    !(
      first === 0x5b ||
      first === 0x7b ||
      first === 0x22 ||
      first === 0x2d ||
      (first >= 0x30 && first <= 0x39) ||
      value === "true" ||
      value === "false" ||
      value === "null"
    )
  ) {
    return value;
  }
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}
