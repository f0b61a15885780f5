/**
 * The Connect conformance suite's test service (connectrpc.conformance.v1.ConformanceService), as the suite's
 * docs/testing_servers.md describes it: each call answers as its request's response definition says (headers,
 * trailers, data or error, delay) and echoes what the server saw (request headers, timeout, the requests, a
 * GET's query). Registered on Solgate's own server stack by server.ts, so the suite tests Solgate's paths.
 */
import { create } from "@bufbuild/protobuf";
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import type { Any } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { Header } from "./gen/connectrpc/conformance/v1/service_pb.js";
import {
  BidiStreamRequestSchema,
  ClientStreamRequestSchema,
  ConformancePayload_RequestInfoSchema,
  type ConformancePayload_RequestInfo,
  type ConformanceService,
  HeaderSchema,
  IdempotentUnaryRequestSchema,
  ServerStreamRequestSchema,
  UnaryRequestSchema,
} from "./gen/connectrpc/conformance/v1/service_pb.js";
import type { Error as ConformanceError, UnaryResponseDefinition } from "./gen/connectrpc/conformance/v1/service_pb.js";

type Impl = ServiceImpl<typeof ConformanceService>;

/** The service's implementation. */
export function createConformanceService(): Partial<Impl> {
  return {
    async unary(request, context) {
      return { payload: await answerUnary(request.responseDefinition, context, [pack(UnaryRequestSchema, request)]) };
    },
    async idempotentUnary(request, context) {
      return {
        payload: await answerUnary(request.responseDefinition, context, [pack(IdempotentUnaryRequestSchema, request)]),
      };
    },
    unimplemented() {
      throw new ConnectError(
        "connectrpc.conformance.v1.ConformanceService.Unimplemented is not implemented",
        Code.Unimplemented,
      );
    },
    async *serverStream(request, context) {
      const definition = request.responseDefinition;
      const info = requestInfo(context, [pack(ServerStreamRequestSchema, request)]);
      setMetadata(context, definition?.responseHeaders, definition?.responseTrailers);
      let sent = 0;
      for (const data of definition?.responseData ?? []) {
        await delay(definition?.responseDelayMs ?? 0, context.signal);
        // The request is echoed in the first response only.
        yield { payload: { data, requestInfo: sent === 0 ? info : undefined } };
        sent++;
      }
      if (definition?.error !== undefined) throw errorOf(definition.error, sent === 0 ? info : undefined);
    },
    async clientStream(requests, context) {
      const received: Any[] = [];
      let definition: UnaryResponseDefinition | undefined;
      for await (const request of requests) {
        if (received.length === 0) definition = request.responseDefinition;
        received.push(pack(ClientStreamRequestSchema, request));
      }
      return { payload: await answerUnary(definition, context, received) };
    },
    async *bidiStream(requests, context) {
      let definition: MessageShape<typeof BidiStreamRequestSchema>["responseDefinition"];
      let fullDuplex = false;
      let sent = 0;
      let pending: Any[] = [];
      let first = true;
      for await (const request of requests) {
        if (first) {
          first = false;
          definition = request.responseDefinition;
          fullDuplex = request.fullDuplex;
          setMetadata(context, definition?.responseHeaders, definition?.responseTrailers);
        }
        pending.push(pack(BidiStreamRequestSchema, request));
        if (!fullDuplex) continue;
        // Full duplex: one response per request, and once they are all sent, the end (or the error) at once.
        const data = definition?.responseData[sent];
        if (data === undefined) break;
        await delay(definition?.responseDelayMs ?? 0, context.signal);
        yield { payload: { data, requestInfo: requestInfo(context, pending) } };
        pending = [];
        sent++;
      }
      const responses = definition?.responseData ?? [];
      for (; sent < responses.length; sent++) {
        await delay(definition?.responseDelayMs ?? 0, context.signal);
        yield { payload: { data: responses[sent], requestInfo: requestInfo(context, pending) } };
        pending = [];
      }
      if (definition?.error !== undefined)
        throw errorOf(definition.error, sent === 0 ? requestInfo(context, pending) : undefined);
    },
  };
}

/** A unary answer: metadata set, the delay waited, then the error thrown or the payload returned. */
async function answerUnary(definition: UnaryResponseDefinition | undefined, context: HandlerContext, requests: Any[]) {
  const info = requestInfo(context, requests);
  setMetadata(context, definition?.responseHeaders, definition?.responseTrailers);
  await delay(definition?.responseDelayMs ?? 0, context.signal);
  if (definition?.response.case === "error") throw errorOf(definition.response.value, info);
  return {
    data: definition?.response.case === "responseData" ? definition.response.value : undefined,
    requestInfo: info,
  };
}

function requestInfo(context: HandlerContext, requests: Any[]): ConformancePayload_RequestInfo {
  const timeout = context.timeoutMs();
  const info = create(ConformancePayload_RequestInfoSchema, {
    requestHeaders: headersOf(context.requestHeader),
    requests,
    ...(timeout === undefined ? {} : { timeoutMs: BigInt(timeout) }),
  });
  if (context.requestMethod === "GET") {
    const queryParams: Header[] = [];
    new URL(context.url).searchParams.forEach((value, name) => {
      const header = queryParams.find((h) => h.name === name);
      if (header === undefined) queryParams.push(create(HeaderSchema, { name, value: [value] }));
      else header.value.push(value);
    });
    info.connectGetInfo = { $typeName: "connectrpc.conformance.v1.ConformancePayload.ConnectGetInfo", queryParams };
  }
  return info;
}

function headersOf(headers: Headers): Header[] {
  const out: Header[] = [];
  headers.forEach((value, name) => {
    out.push(create(HeaderSchema, { name, value: [value] }));
  });
  return out;
}

function setMetadata(context: HandlerContext, headers: Header[] | undefined, trailers: Header[] | undefined): void {
  for (const h of headers ?? []) for (const v of h.value) context.responseHeader.append(h.name, v);
  for (const h of trailers ?? []) for (const v of h.value) context.responseTrailer.append(h.name, v);
}

/** The definition's error, with the request info as its last detail. */
function errorOf(error: ConformanceError, info: ConformancePayload_RequestInfo | undefined): ConnectError {
  const details = error.details.map((any) => ({
    type: any.typeUrl.substring(any.typeUrl.lastIndexOf("/") + 1),
    value: any.value,
  }));
  const all = info === undefined ? details : [...details, { desc: ConformancePayload_RequestInfoSchema, value: info }];
  return new ConnectError(error.message ?? "", error.code as number as Code, undefined, all as never);
}

function pack<D extends DescMessage>(schema: D, message: MessageShape<D>): Any {
  return anyPack(schema, message);
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(ConnectError.from(signal.reason));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
