/**
 * The request path's validation step: every unary and server-streaming call, on every protocol the
 * router serves (gRPC, gRPC-Web, Connect, and REST, which calls the router in process), has its request
 * checked against the contract's `buf.validate` annotations before a handler sees it. The lean gRPC
 * stream path (grpc-stream-path.ts) calls `assertValidRequest` itself.
 */
import type { DescMessage, Message } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { assertValidRequest } from "../request-validation.ts";

/** Refuses requests that break the annotations, with Solgate's reasons (see src/request-validation.ts). */
export function createValidationInterceptor(): Interceptor {
  return (next) => (req) => {
    const input = req.method.input as DescMessage;
    if (!req.stream) {
      try {
        check(input, req.message);
      } catch (e) {
        return Promise.reject(e);
      }
      return next(req);
    }
    if (req.method.methodKind !== "server_streaming") return next(req);
    return next({ ...req, message: checked(input, req.message) });
  };
}

/** Throws the SolgateError of the first violation; the error interceptor (outside this one) maps it. */
function check(input: DescMessage, message: Message): void {
  assertValidRequest(input, message);
}

/** The stream's one request message, checked as the handler reads it. */
async function* checked<T extends Message>(input: DescMessage, messages: AsyncIterable<T>): AsyncIterable<T> {
  for await (const message of messages) {
    check(input, message);
    yield message;
  }
}
