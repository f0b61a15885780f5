/**
 * What runs before Connect parses a request body. Connect decodes the request before any
 * interceptor runs, and answers a body that is not valid protobuf with INTERNAL ("parse binary:
 * ..."). The gate wraps each of the router's handlers so that:
 * - a call to a non-public service without a valid key never has its body read: the body is
 *   replaced with an empty message, which the auth interceptor then refuses (UNAUTHENTICATED, in the
 *   protocol's own error shape, written by Connect);
 * - an authenticated binary request is decoded once here (bounded by the read limit); if it is not
 *   a valid message of the method's input type, the body is again replaced with an empty message and
 *   the interceptor below throws INVALID_ARGUMENT with a clean message instead.
 * Compressed, gRPC-Web text and JSON bodies, and client or bidi streams, are left to Connect (its
 * JSON errors are INVALID_ARGUMENT).
 * A deadline longer than Node's timers can hold (2^31-1 ms, about 24.8 days; `grpc-timeout: 99999999S` is
 * valid gRPC) is dropped here: Connect would arm a timer that Node fires at once, failing the call with
 * DEADLINE_EXCEEDED. Such a call runs as one without a deadline.
 */
import { fromBinary } from "@bufbuild/protobuf";
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { createContextKey, createContextValues } from "@connectrpc/connect";
import type { Interceptor } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import { parseTimeout as parseConnectTimeout } from "@connectrpc/connect/protocol-connect";
import { parseTimeout as parseGrpcTimeout } from "@connectrpc/connect/protocol-grpc";
import { SolgateError, toConnectError } from "../errors.ts";
import { PUBLIC_SERVICES } from "./auth.ts";
import type { ApiKeyChecker } from "./auth.ts";

/** Set by the gate on a request whose body was not a valid message; thrown by {@link createGateInterceptor}. */
const BAD_BODY = createContextKey<SolgateError | undefined>(undefined, {
  description: "solgate: undecodable request body",
});

const EMPTY_ENVELOPE = Uint8Array.of(0, 0, 0, 0, 0);

type Framing = "enveloped" | "raw";

/** How the body of a binary request is framed; undefined for anything the gate leaves to Connect. */
function binaryFraming(request: UniversalServerRequest): Framing | undefined {
  if (request.method !== "POST") return undefined;
  const type = (request.header.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type === "application/proto") return request.header.get("content-encoding") === null ? "raw" : undefined;
  const enveloped = [
    "application/grpc",
    "application/grpc+proto",
    "application/grpc-web",
    "application/grpc-web+proto",
    "application/connect+proto",
  ];
  if (!enveloped.includes(type)) return undefined;
  const encoding = request.header.get("grpc-encoding") ?? request.header.get("connect-content-encoding");
  return encoding === null || encoding === "identity" ? "enveloped" : undefined;
}

/** An empty message in the framing and encoding of `request` (JSON `{}` or zero protobuf bytes). */
function emptyBody(request: UniversalServerRequest): Uint8Array {
  const type = (request.header.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const json = type.endsWith("json");
  const payload = json ? new TextEncoder().encode("{}") : new Uint8Array(0);
  if (type === "application/json" || type === "application/proto") return payload;
  if (type === "application/grpc-web-text" || type === "application/grpc-web-text+proto")
    return new TextEncoder().encode(Buffer.from(EMPTY_ENVELOPE).toString("base64"));
  const out = new Uint8Array(5 + payload.length);
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, 5);
  return json || payload.length > 0 ? out : EMPTY_ENVELOPE;
}

/** The longest delay Node's setTimeout keeps; beyond it the timer fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `request` without a timeout header whose deadline lies beyond {@link MAX_TIMER_MS}. */
function withoutEndlessDeadline(request: UniversalServerRequest): UniversalServerRequest {
  const grpc = request.header.get("grpc-timeout");
  const connect = request.header.get("connect-timeout-ms");
  const endless = (value: string | null, parse: typeof parseGrpcTimeout) =>
    value !== null && (parse(value, Number.MAX_SAFE_INTEGER).timeoutMs ?? 0) > MAX_TIMER_MS;
  if (!endless(grpc, parseGrpcTimeout) && !endless(connect, parseConnectTimeout)) return request;
  const header = new Headers(request.header);
  header.delete("grpc-timeout");
  header.delete("connect-timeout-ms");
  return { ...request, header };
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

/**
 * `request` with its body replaced by `bytes` (uncompressed): the headers that described the old body,
 * its length and its whole-body encoding, go with it, or Connect would hold the new body to them.
 */
function withBody(request: UniversalServerRequest, bytes: Uint8Array): UniversalServerRequest {
  const header = new Headers(request.header);
  header.delete("content-length");
  header.delete("content-encoding");
  return { ...request, header, body: once(bytes) };
}

/** Wraps a router handler with the gate. `readMaxBytes` bounds what it buffers to decode. */
export function gateHandler(handler: UniversalHandler, auth: ApiKeyChecker, readMaxBytes: number): UniversalHandler {
  const isPublic = PUBLIC_SERVICES.has(handler.service.typeName);
  const input = handler.method.input as DescMessage;
  const singleRequest = handler.method.methodKind === "unary" || handler.method.methodKind === "server_streaming";
  const gated = async (original: UniversalServerRequest) => {
    const request = withoutEndlessDeadline(original);
    if (!isPublic && !auth.isAuthorized(request.header.get("authorization"))) {
      // Unread: the auth interceptor refuses the call before anything looks at the message.
      if (request.method === "GET") {
        const url = new URL(request.url, "http://gate");
        return handler({ ...request, url: `${url.pathname}?connect=v1&encoding=json&message=%7B%7D` });
      }
      return handler(withBody(request, emptyBody(request)));
    }
    // Client and bidi streams (reflection) send as they go: their bodies cannot be read ahead.
    const framing = singleRequest ? binaryFraming(request) : undefined;
    const body = request.body;
    if (framing === undefined || body === null || typeof body !== "object" || !(Symbol.asyncIterator in body))
      return handler(request);
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      // Over the limit: Connect refuses it (RESOURCE_EXHAUSTED) as it would have.
      if (size > readMaxBytes + 5) return handler({ ...request, body: once(Buffer.concat([...chunks, chunk])) });
      chunks.push(chunk);
    }
    const bytes = Buffer.concat(chunks);
    const problem = decodeProblem(input, bytes, framing);
    if (problem === undefined) return handler({ ...request, body: once(bytes) });
    const error = invalidBody(input, problem);
    return handler({
      ...withBody(request, emptyBody(request)),
      contextValues: (request.contextValues ?? createContextValues()).set(BAD_BODY, error),
    });
  };
  return Object.assign(gated, {
    service: handler.service,
    method: handler.method,
    requestPath: handler.requestPath,
    protocolNames: handler.protocolNames,
    allowedMethods: handler.allowedMethods,
    supportedContentType: handler.supportedContentType,
  }) as UniversalHandler;
}

/**
 * Why `bytes` do not decode as `input` messages; undefined if they do. Enveloped bodies are read here in
 * full: Connect answers a broken envelope, or one flagged compressed in a request that names no
 * compression, with INTERNAL, so those are the gate's to refuse too.
 */
function decodeProblem(input: DescMessage, bytes: Buffer, framing: Framing): string | undefined {
  const messages: Uint8Array[] = [];
  if (framing === "raw") messages.push(bytes);
  else {
    for (let at = 0; at < bytes.length; ) {
      if (at + 5 > bytes.length) return `an envelope ends inside its 5-byte prefix (${bytes.length - at} bytes)`;
      const flags = bytes[at];
      const length = bytes.readUInt32BE(at + 1);
      if (at + 5 + length > bytes.length)
        return `an envelope's length prefix promises ${length} bytes but ${bytes.length - at - 5} follow`;
      if (flags !== 0)
        return `an envelope has flags 0x${flags.toString(16).padStart(2, "0")} where an uncompressed message has 0x00 (no grpc-encoding was named)`;
      messages.push(bytes.subarray(at + 5, at + 5 + length));
      at += 5 + length;
    }
  }
  for (const message of messages) {
    try {
      fromBinary(input, message);
    } catch (e) {
      return plainReason(e);
    }
  }
  return undefined;
}

/** Decodes one request message; throws INVALID_PARAMETER with a clean message if `bytes` are not one. */
export function decodeRequest<I extends DescMessage>(input: I, bytes: Uint8Array): MessageShape<I> {
  try {
    return fromBinary(input, bytes);
  } catch (e) {
    throw invalidBody(input, plainReason(e));
  }
}

function invalidBody(input: DescMessage, problem: string): SolgateError {
  return new SolgateError("INVALID_PARAMETER", `the request is not a valid ${input.typeName} message (${problem})`, {
    field: "body",
  });
}

/** protobuf-es's reason in a few plain words, without its internals. */
function plainReason(error: unknown): string {
  const text = error instanceof Error ? error.message : "";
  if (/utf-?8/i.test(text)) return "a string field is not valid UTF-8";
  if (/premature EOF|out of range|truncated/i.test(text)) return "it ends inside a field";
  if (/wire type|cant skip|cannot skip/i.test(text)) return "a field has an invalid wire type";
  if (/varint/i.test(text)) return "a varint is malformed";
  return "malformed protobuf";
}

/** Throws the gate's INVALID_ARGUMENT for a request whose body did not decode. Runs after auth. */
export function createGateInterceptor(): Interceptor {
  return (next) => async (req) => {
    const bad = req.contextValues.get(BAD_BODY);
    if (bad !== undefined) throw toConnectError(bad);
    return next(req);
  };
}
