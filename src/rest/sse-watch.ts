/**
 * `GET /v1/{chain}/transactions/{signature}/events`: TransactionService.WatchStatus as Server-Sent
 * Events, for clients without gRPC or Connect streaming (a browser's EventSource, curl). SSE is not
 * a `google.api.http` concept, so this one route is explicit; it calls the same WatchStatus handler
 * through the in-process transport. Each record is `event: status` with the record's REST JSON as
 * `data`; heartbeats are SSE comments; the response ends when the stream does; a client that goes
 * away aborts the call, which ends the watch in the core.
 */
import type { ServerResponse } from "node:http";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import type { Transport } from "@connectrpc/connect";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import type { WatchStatusResponse } from "../../gen/solgate/v1/transaction_service_pb.js";
import { TransactionStatusRecordSchema } from "../../gen/solgate/v1/transaction_pb.js";
import type { NodeRequest, NodeResponse } from "../server/http-handler.ts";
import { compilePathTemplate } from "./path-template.ts";
import { restErrorOf } from "./rest-errors.ts";
import type { RestError } from "./rest-errors.ts";
import { renderMessage } from "./rest-json.ts";

/** The path of the SSE watch. */
export const WATCH_EVENTS_TEMPLATE = compilePathTemplate("/v1/{chain}/transactions/{signature}/events");

/** The SSE watch's description in the OpenAPI document. */
export const WATCH_EVENTS_DOC =
  "TransactionService.WatchStatus as Server-Sent Events, for clients without gRPC: the transaction's record at once " +
  "(`event: status`, `data`: the record in REST form), then one event per change, until it is final (finalized, failed " +
  "or expired); then the response ends. While nothing changes, heartbeat comments (`: heartbeat slot=N`) keep proxies " +
  "from closing it. An error before the first event is a plain JSON error; one after it is an `event: error`.";

/** Options of `serveWatchEvents`. */
export interface WatchEventsCall {
  transport: Transport;
  req: NodeRequest;
  res: NodeResponse;
  /** The bound path variables (`chain`, `signature`). */
  variables: Readonly<Record<string, string>>;
  /** Headers for the RPC (authorization, request id). */
  headers: Headers;
  /** Writes a REST error as a JSON response (before the stream has started). */
  sendError(error: RestError): void;
  onUnexpected(error: unknown): void;
}

/** Serves one SSE watch until the stream ends or the client leaves. */
export async function serveWatchEvents(call: WatchEventsCall): Promise<void> {
  // Both Node response types take the same calls at run time.
  const res = call.res as ServerResponse;
  const abort = new AbortController();
  res.once("close", () => abort.abort());
  const input = { chain: call.variables.chain, signature: call.variables.signature };
  let started = false;
  try {
    const response = await call.transport.stream(
      TransactionService.method.watchStatus,
      abort.signal,
      undefined,
      call.headers,
      createAsyncIterable([input]),
    );
    // The first event (or the error that replaces it) decides the status: a bad signature, an
    // unknown transaction or a missing key is a plain JSON error, not a stream.
    for await (const event of response.message) {
      if (!started) {
        started = true;
        res.writeHead(200, {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache, no-transform",
          // Proxies such as nginx buffer responses unless told not to.
          "x-accel-buffering": "no",
        });
      }
      res.write(eventText(event));
    }
    if (!started) {
      // A watch that ends without a single event: an empty stream, not an error.
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
    }
    res.end();
  } catch (e) {
    if (abort.signal.aborted) return; // the client left; nobody to tell
    const error = restErrorOf(e, call.onUnexpected);
    if (!started) {
      call.sendError(error);
      return;
    }
    res.end(`event: error\ndata: ${JSON.stringify(error.body)}\n\n`);
  }
}

function eventText(event: WatchStatusResponse): string {
  switch (event.event.case) {
    case "record":
      return `event: status\ndata: ${JSON.stringify(renderMessage(TransactionStatusRecordSchema, event.event.value))}\n\n`;
    case "heartbeat":
      return `: heartbeat slot=${event.event.value.slot}\n\n`;
    default:
      return ": keep-alive\n\n";
  }
}
