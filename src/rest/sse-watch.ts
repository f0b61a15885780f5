/**
 * The server streams as Server-Sent Events, for clients without gRPC or Connect streaming (a browser's
 * EventSource, curl): `GET /v1/{chain}/transactions/{signature}/events` (TransactionService.WatchStatus,
 * each record an `event: status`) and `GET /v1/{chain}/network/fees/stream` (FeeService.WatchFees, each
 * estimate an `event: fees`) and `GET /v1/{chain}/bundles/{bundle_id}/events` (TransactionService.WatchBundle,
 * each record an `event: bundle`) and `GET /v1/{chain}/collections/{address}/events` (CollectionService.WatchCollection,
 * each event's `id` its cursor, so a browser's EventSource resumes by itself). SSE is not a `google.api.http` concept, so these routes are explicit; each
 * calls the same handler as gRPC through the in-process transport, with the message's REST JSON as
 * `data`; heartbeats are SSE comments; the response ends when the stream does; a client that goes away
 * aborts the call, which ends the watch in the core.
 */
import type { ServerResponse } from "node:http";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import type { Transport } from "@connectrpc/connect";
import type { DescMessage, DescMethodServerStreaming, MessageInitShape } from "@bufbuild/protobuf";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import type { WatchBundleResponse, WatchStatusResponse } from "../../gen/solgate/v1/transaction_service_pb.js";
import { BundleStatusRecordSchema, TransactionStatusRecordSchema } from "../../gen/solgate/v1/transaction_pb.js";
import { FeeService } from "../../gen/solgate/v1/fee_service_pb.js";
import type { WatchFeesResponse } from "../../gen/solgate/v1/fee_service_pb.js";
import { FeeEstimateSchema } from "../../gen/solgate/v1/fee_pb.js";
import { CollectionService } from "../../gen/solgate/v1/collection_service_pb.js";
import type { WatchCollectionResponse } from "../../gen/solgate/v1/collection_service_pb.js";
import { CollectionEventKind, CollectionEventSchema } from "../../gen/solgate/v1/collection_event_pb.js";
import type { PathTemplate } from "./path-template.ts";
import type { NodeRequest, NodeResponse } from "../server/http-handler.ts";
import { compilePathTemplate } from "./path-template.ts";
import { restErrorOf } from "./rest-errors.ts";
import type { RestError } from "./rest-errors.ts";
import { renderMessage } from "./rest-json.ts";

/** One server stream served as Server-Sent Events. */
export interface SseWatch {
  /** The GET path. */
  readonly template: PathTemplate;
  /** The stream it serves. */
  readonly method: DescMethodServerStreaming;
  /** The request, from the path variables (and, for a watch that resumes, the request's query and headers). */
  readonly input: (variables: Readonly<Record<string, string>>, req: NodeRequest) => MessageInitShape<DescMessage>;
  /** One stream message as SSE text (an event, or a comment). */
  readonly eventText: (message: never) => string;
  /** The description in the OpenAPI document, its summary, operation id, and the event's data type and text. */
  readonly doc: { summary: string; operationId: string; description: string; dataSchema: string; data: string };
}

const WATCH_STATUS: SseWatch = {
  template: compilePathTemplate("/v1/{chain}/transactions/{signature}/events"),
  method: TransactionService.method.watchStatus as DescMethodServerStreaming,
  input: (variables) => ({ chain: variables.chain, signature: variables.signature }),
  eventText: statusEventText,
  doc: {
    summary: "WatchStatus (Server-Sent Events)",
    operationId: "TransactionService_WatchStatusEvents",
    description:
      "TransactionService.WatchStatus as Server-Sent Events, for clients without gRPC: the transaction's record at once " +
      "(`event: status`, `data`: the record in REST form), then one event per change, until it is final (finalized, failed " +
      "or expired); then the response ends. While nothing changes, heartbeat comments (`: heartbeat slot=N`) keep proxies " +
      "from closing it. An error before the first event is a plain JSON error; one after it is an `event: error`.",
    dataSchema: "solgate.v1.TransactionStatusRecord",
    data: "`event: status` with a TransactionStatusRecord as `data`, for the current record and every change; heartbeats as comments.",
  },
};

const WATCH_FEES: SseWatch = {
  template: compilePathTemplate("/v1/{chain}/network/fees/stream"),
  method: FeeService.method.watchFees as DescMethodServerStreaming,
  input: (variables) => ({ chain: variables.chain }),
  eventText: feesEventText,
  doc: {
    summary: "WatchFees (Server-Sent Events)",
    operationId: "FeeService_WatchFeesEvents",
    description:
      "FeeService.WatchFees as Server-Sent Events, for clients without gRPC: the global fee estimate at once " +
      "(`event: fees`, `data`: the estimate in REST form, as GET /v1/{chain}/network/fees answers it), then one event " +
      "whenever the levels, their odds or their source change, at most one per slot. While nothing changes, heartbeat " +
      "comments (`: heartbeat slot=N`) keep proxies from closing it. The stream does not end by itself.",
    dataSchema: "solgate.v1.FeeEstimate",
    data: "`event: fees` with a FeeEstimate as `data`, at once and after every change; heartbeats as comments.",
  },
};

const WATCH_BUNDLE: SseWatch = {
  template: compilePathTemplate("/v1/{chain}/bundles/{bundle_id}/events"),
  method: TransactionService.method.watchBundle as DescMethodServerStreaming,
  input: (variables) => ({ chain: variables.chain, bundleId: variables.bundle_id }),
  eventText: bundleEventText,
  doc: {
    summary: "WatchBundle (Server-Sent Events)",
    operationId: "TransactionService_WatchBundleEvents",
    description:
      "TransactionService.WatchBundle as Server-Sent Events, for clients without gRPC: the bundle's record at once " +
      "(`event: bundle`, `data`: the record in REST form, as GET /v1/{chain}/bundles/{bundle_id} answers it), then one " +
      "event per change, until it is final (finalized, failed, invalid or expired); then the response ends. While " +
      "nothing changes, heartbeat comments (`: heartbeat slot=N`) keep proxies from closing it. An error before the " +
      "first event is a plain JSON error; one after it is an `event: error`.",
    dataSchema: "solgate.v1.BundleStatusRecord",
    data: "`event: bundle` with a BundleStatusRecord as `data`, for the current record and every change; heartbeats as comments.",
  },
};

const WATCH_COLLECTION: SseWatch = {
  template: compilePathTemplate("/v1/{chain}/collections/{address}/events"),
  method: CollectionService.method.watchCollection as DescMethodServerStreaming,
  input: (variables, req) => {
    // `?cursor=` first; else the `Last-Event-ID` an EventSource sends when it reconnects by itself.
    const query = new URLSearchParams((req.url ?? "").split("?")[1] ?? "");
    const lastEventId = req.headers["last-event-id"];
    const cursor = query.get("cursor") ?? (typeof lastEventId === "string" ? lastEventId : "");
    return { chain: variables.chain, address: variables.address, cursor };
  },
  eventText: collectionEventText,
  doc: {
    summary: "WatchCollection (Server-Sent Events)",
    operationId: "CollectionService_WatchCollectionEvents",
    description:
      "CollectionService.WatchCollection as Server-Sent Events: one event per change of the collection, in order " +
      "(`event`: the kind, `MEMBER_ADDED`, `MEMBER_REMOVED`, `MEMBER_TRANSFERRED` or `FLOOR_CHANGED`; `id`: the " +
      "event's cursor; `data`: the CollectionEvent in REST form, with `kind`, `sequence` and `cursor`). `?cursor=` " +
      "or the `Last-Event-ID` header resumes after that event; without either, from now on. A cursor older than the " +
      "log is refused (`COLLECTION_CURSOR_EXPIRED`, 409), a malformed one too (`COLLECTION_CURSOR_INVALID`, 400). " +
      "While nothing changes, heartbeat comments (`: heartbeat slot=N`) keep proxies from closing it.",
    dataSchema: "solgate.v1.CollectionEvent",
    data: "`event: <kind>` with `id: <cursor>` and a CollectionEvent as `data`, per change; heartbeats as comments.",
  },
};

/** The SSE routes, all GET and all of one segment count. */
export const SSE_WATCHES: readonly SseWatch[] = [WATCH_STATUS, WATCH_FEES, WATCH_BUNDLE, WATCH_COLLECTION];

/** Options of `serveWatchEvents`. */
export interface WatchEventsCall {
  watch: SseWatch;
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
  const { watch } = call;
  let started = false;
  try {
    const response = await call.transport.stream(
      watch.method,
      abort.signal,
      undefined,
      call.headers,
      createAsyncIterable([watch.input(call.variables, call.req)]),
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
      res.write(watch.eventText(event as never));
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

function statusEventText(event: WatchStatusResponse): string {
  switch (event.event.case) {
    case "record":
      return `event: status\ndata: ${JSON.stringify(renderMessage(TransactionStatusRecordSchema, event.event.value))}\n\n`;
    case "heartbeat":
      return `: heartbeat slot=${event.event.value.slot}\n\n`;
    default:
      return ": keep-alive\n\n";
  }
}

function bundleEventText(event: WatchBundleResponse): string {
  switch (event.event.case) {
    case "bundle":
      return `event: bundle\ndata: ${JSON.stringify(renderMessage(BundleStatusRecordSchema, event.event.value))}\n\n`;
    case "heartbeat":
      return `: heartbeat slot=${event.event.value.slot}\n\n`;
    default:
      return ": keep-alive\n\n";
  }
}

function feesEventText(event: WatchFeesResponse): string {
  switch (event.event.case) {
    case "estimate":
      return `event: fees\ndata: ${JSON.stringify(renderMessage(FeeEstimateSchema, event.event.value))}\n\n`;
    case "heartbeat":
      return `: heartbeat slot=${event.event.value.slot}\n\n`;
    default:
      return ": keep-alive\n\n";
  }
}

function collectionEventText(event: WatchCollectionResponse): string {
  switch (event.message.case) {
    case "event": {
      const value = event.message.value;
      const kind = CollectionEventKind[value.kind] ?? "UNSPECIFIED";
      return `event: ${kind}\nid: ${value.cursor}\ndata: ${JSON.stringify(renderMessage(CollectionEventSchema, value))}\n\n`;
    }
    case "heartbeat":
      return `: heartbeat slot=${event.message.value.slot}\n\n`;
    default:
      return ": keep-alive\n\n";
  }
}
