/**
 * Bodies for the answers Connect's router gives at the HTTP level. For a request it cannot hand to a
 * protocol, the router answers with a bare status: 405 for an HTTP method the procedure does not take
 * (PUT, or a GET to a method that is not side-effect free) and 415 for a content type none of its
 * protocols takes. A Connect client then has only the status to go on, and a Connect JSON error without
 * a `code` reads as UNKNOWN. Here those answers get the error body every other Connect error has: a
 * `code`, a message, and an `ErrorInfo` with its reason. Only Connect requests get one (a Connect content
 * type, or none); gRPC, gRPC-Web and other content types keep the bare status, which is what their clients
 * read. The Connect conformance suite expects a bare 405 too (read as UNKNOWN from the status): a known
 * deviation (test/conformance/known-deviations.txt).
 */
import type { JsonWriteOptions } from "@bufbuild/protobuf";
import type { UniversalHandler, UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { SolgateError, toConnectError } from "../errors.ts";

/** `response` with a Connect JSON error body if it is one of the router's bodiless 405 or 415 answers to a Connect request. */
export function withRouterErrorBody(
  response: UniversalServerResponse,
  request: UniversalServerRequest,
  handler: UniversalHandler,
  jsonOptions: Partial<JsonWriteOptions> | undefined,
): UniversalServerResponse {
  if (response.body !== undefined || (response.status !== 405 && response.status !== 415)) return response;
  const type = request.header.get("content-type") ?? "";
  if (type !== "" && !CONNECT_TYPE.test(type)) return response;
  const procedure = `${handler.service.typeName}/${handler.method.name}`;
  const header = new Headers(response.header);
  let error: SolgateError;
  if (response.status === 405) {
    const allowed = handler.allowedMethods;
    header.set("allow", allowed.join(", "));
    error = new SolgateError(
      "METHOD_NOT_ALLOWED",
      `${procedure} does not take HTTP ${request.method.slice(0, 16)}; it takes ${allowed.join(" or ")}`,
      { allowed: allowed.join(", ") },
    );
  } else {
    error = new SolgateError(
      "UNSUPPORTED_MEDIA_TYPE",
      type === ""
        ? `a ${request.method.slice(0, 16)} to ${procedure} needs a content type (Connect: application/json or application/proto)`
        : `${procedure} does not take content type ${JSON.stringify(type.slice(0, 100))}`,
      { contentType: type.slice(0, 100) },
    );
  }
  const body = errorToJsonBytes(toConnectError(error), jsonOptions ?? {});
  header.set("content-type", "application/json");
  header.set("content-length", String(body.byteLength));
  return { status: response.status, header, body: once(body) };
}

/** Connect's content types (unary and streaming, JSON and binary), whatever their parameters. */
const CONNECT_TYPE = /^application\/(?:json|proto|connect\+(?:json|proto))\s*(?:;.*)?$/i;

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}
