/**
 * What runs before Connect parses a request body. Connect decodes the request before any
 * interceptor runs, and answers a body that is not valid protobuf with INTERNAL ("parse binary:
 * ..."). The gate wraps each of the router's handlers so that:
 * - a call to a non-public service without a valid key never has its body read: the body is
 *   replaced with an empty message, which the auth interceptor then refuses (UNAUTHENTICATED, in the
 *   protocol's own error shape, written by Connect);
 * - an authenticated request's body is read once here (bounded by the read limit): its envelopes
 *   checked, compressed messages decompressed with the router's own compressions, binary messages
 *   decoded (request-body.ts); if it is not a valid request of the method's input type, the body is
 *   again replaced with an empty message and the interceptor below throws INVALID_ARGUMENT with a
 *   clean message instead.
 * Unary Connect JSON and gRPC-Web text bodies, and client or bidi streams, are left to Connect (its
 * JSON errors are INVALID_ARGUMENT).
 * A deadline longer than Node's timers can hold (2^31-1 ms, about 24.8 days; `grpc-timeout: 99999999S` is
 * valid gRPC) is dropped here: Connect would arm a timer that Node fires at once, failing the call with
 * DEADLINE_EXCEEDED. Such a call runs as one without a deadline.
 */
import { fromBinary } from "@bufbuild/protobuf";
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { createContextKey, createContextValues } from "@connectrpc/connect";
import type { Interceptor } from "@connectrpc/connect";
import type { Compression, UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import { parseTimeout as parseConnectTimeout } from "@connectrpc/connect/protocol-connect";
import { parseTimeout as parseGrpcTimeout } from "@connectrpc/connect/protocol-grpc";
import { SolgateError, toConnectError } from "../errors.ts";
import { CHECKED_KEY, PUBLIC_SERVICES } from "./auth.ts";
import { bodyFraming, bodyProblem, plainReason } from "./request-body.ts";
import type { ApiKeyChecker } from "./auth.ts";

/** Set by the gate on a request whose body was not a valid message; thrown by {@link createGateInterceptor}. */
const BAD_BODY = createContextKey<SolgateError | undefined>(undefined, {
  description: "solgate: undecodable request body",
});

const EMPTY_ENVELOPE = Uint8Array.of(0, 0, 0, 0, 0);

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

/**
 * Wraps a router handler with the gate. `readMaxBytes` bounds what it buffers and decompresses to decode;
 * `compressions` are the router's own.
 */
export function gateHandler(
  handler: UniversalHandler,
  auth: ApiKeyChecker,
  readMaxBytes: number,
  compressions: readonly Compression[],
): UniversalHandler {
  const isPublic = PUBLIC_SERVICES.has(handler.service.typeName);
  const input = handler.method.input as DescMessage;
  const singleRequest = handler.method.methodKind === "unary" || handler.method.methodKind === "server_streaming";
  const gated = async (original: UniversalServerRequest) => {
    let request = withoutEndlessDeadline(original);
    const keyName = isPublic ? undefined : auth.nameOf(request.header.get("authorization"));
    if (!isPublic && keyName === undefined) {
      // Unread: the auth interceptor refuses the call before anything looks at the message.
      if (request.method === "GET") {
        // Connect parses the URL whole: it stays absolute (a bare path failed its parse, and the call hung).
        const url = new URL(request.url, "http://gate");
        url.search = "?connect=v1&encoding=json&message=%7B%7D";
        return handler({ ...request, url: url.href });
      }
      return handler(withBody(request, emptyBody(request)));
    }
    if (keyName !== undefined)
      request = {
        ...request,
        contextValues: (request.contextValues ?? createContextValues()).set(CHECKED_KEY, keyName),
      };
    // Client and bidi streams (reflection) send as they go: their bodies cannot be read ahead.
    const framing = singleRequest ? bodyFraming(request) : undefined;
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
    const problem = await bodyProblem(input, bytes, framing, compressions, readMaxBytes);
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

/** Throws the gate's INVALID_ARGUMENT for a request whose body did not decode. Runs after auth. */
export function createGateInterceptor(): Interceptor {
  return (next) => (req) => {
    const bad = req.contextValues.get(BAD_BODY);
    if (bad !== undefined) return Promise.reject(toConnectError(bad));
    return next(req);
  };
}
