/**
 * Request ids: a caller's `x-request-id` is echoed when it is sane, else one is generated. The id is
 * written back into the incoming headers so every later layer (Connect interceptors, REST) reads the same one.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";

/** The header carrying the request id, both ways. */
export const REQUEST_ID_HEADER = "x-request-id";

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Assigns the request's id (echoed or generated), sets it on the response, and returns it. */
export function assignRequestId(
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
): string {
  const given = req.headers[REQUEST_ID_HEADER];
  const id = typeof given === "string" && SANE_ID.test(given) ? given : randomUUID();
  req.headers[REQUEST_ID_HEADER] = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}
