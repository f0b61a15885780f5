/**
 * A Node request as connect's universal request: what connect-node's `universalRequestFromNodeRequest`
 * makes, less its most expensive habit. connect-node aborts every request's signal when the response
 * closes, finished or not, and an abort without a reason builds a DOMException (with its stack) each
 * time: 14% of a bare adapter's profile (docs/benchmarks.md). Here the signal is aborted only when the
 * client goes away before the answer is written, with a ConnectError CANCELED as the reason. A call that
 * ended normally needs no abort: connect's handler ends its own context when the call ends.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { UniversalServerRequest } from "@connectrpc/connect/protocol";
import type { NodeRequest, NodeResponse } from "./http-handler.ts";
import { copyRequestHeaders } from "./lazy-headers.ts";

/** The universal request for `req`, whose signal aborts if `res` closes before it was ended. */
export function universalRequestOf(req: NodeRequest, res: NodeResponse): UniversalServerRequest {
  const authority = "authority" in req ? req.authority : req.headers.host;
  if (authority === undefined)
    throw new ConnectError("unable to determine request authority from Node.js server request", Code.Internal);
  const abort = new AbortController();
  const onClose = () => {
    req.off("error", onError);
    if (!res.writableEnded) abort.abort(new ConnectError("the client closed the request", Code.Canceled));
  };
  const onError = (error: Error) => {
    res.off("close", onClose);
    abort.abort(new ConnectError(`the request failed: ${error.message}`, Code.Aborted, undefined, undefined, error));
  };
  res.once("close", onClose);
  req.once("error", onError);
  const encrypted = "encrypted" in req.socket && req.socket.encrypted === true;
  return {
    httpVersion: req.httpVersion,
    method: req.method ?? "",
    url: new URL(req.url ?? "", `${encrypted ? "https" : "http"}://${authority}`).toString(),
    header: copyRequestHeaders(req.headers, new Headers()),
    body: bodyOf(req),
    signal: abort.signal,
  };
}

async function* bodyOf(req: NodeRequest): AsyncIterable<Uint8Array> {
  for await (const chunk of req) yield chunk as Uint8Array;
}
