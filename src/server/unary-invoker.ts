/**
 * In-process unary calls without a wire protocol: the method's implementation, behind the router's own
 * interceptors (observe, drain, errors, auth and rate limit, the gate — and whatever is added there),
 * called the way connect's protocol handlers call it (`invokeUnaryImplementation` with a handler
 * context), but with no request to encode, no body to read back and no response to parse. The REST
 * transcoder calls RPCs this way (docs/adr/0002): the interceptors still see every call, with the
 * caller's headers, and what they throw is a ConnectError as on every protocol.
 */
import { create, type DescMethod, type DescMethodUnary, type DescService, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  createMethodImplSpec,
} from "@connectrpc/connect";
import type { ConnectRouter, ContextValues, Interceptor, MethodImplSpec, ServiceImpl } from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";

/** Calls unary RPCs in process. */
export interface UnaryInvoker {
  /** Whether `method`'s implementation was recorded (else call its universal handler). */
  serves(method: DescMethod): boolean;
  /** Calls `method`; rejects with the ConnectError the interceptors or the implementation threw. */
  invoke(
    method: DescMethodUnary,
    input: Message,
    header: Headers,
    signal: AbortSignal,
    contextValues?: ContextValues,
  ): Promise<Message>;
}

/**
 * Wraps `router` so that the unary implementations registered through it are recorded by method.
 * A service registered with options of its own (other interceptors) is left to its universal handler.
 */
export function recordingRouter(router: ConnectRouter): {
  router: ConnectRouter;
  impls: Map<DescMethod, MethodImplSpec>;
} {
  const impls = new Map<DescMethod, MethodImplSpec>();
  const wrapped: ConnectRouter = {
    get handlers() {
      return router.handlers;
    },
    service(service, implementation, options) {
      if (options?.interceptors === undefined)
        recordService(impls, service, implementation as Partial<ServiceImpl<DescService>>);
      router.service(service, implementation, options);
      return wrapped;
    },
    rpc(method, impl, options) {
      if (options?.interceptors === undefined && method.methodKind === "unary")
        impls.set(method, createMethodImplSpec(method, impl));
      router.rpc(method, impl, options);
      return wrapped;
    },
  } as ConnectRouter;
  return { router: wrapped, impls };
}

function recordService(
  impls: Map<DescMethod, MethodImplSpec>,
  service: DescService,
  implementation: Partial<ServiceImpl<DescService>>,
): void {
  for (const method of service.methods) {
    if (method.methodKind !== "unary") continue;
    const impl = (implementation as Record<string, unknown>)[method.localName];
    // An omitted method is the router's UNIMPLEMENTED answer: leave it to the universal handler.
    if (typeof impl === "function") impls.set(method, createMethodImplSpec(method, impl.bind(implementation) as never));
  }
}

/** Builds the invoker over the recorded implementations and the router's interceptors. */
export function createUnaryInvoker(options: {
  impls: ReadonlyMap<DescMethod, MethodImplSpec>;
  interceptors: readonly Interceptor[];
}): UnaryInvoker {
  const interceptors = [...options.interceptors];
  return {
    serves: (method) => options.impls.has(method),
    invoke: async (method, input, header, signal, contextValues) => {
      const spec = options.impls.get(method);
      if (spec === undefined)
        throw new ConnectError(`${method.parent.typeName}/${method.name} is not served`, Code.Unimplemented);
      // Linked to the caller's signal alone, which the caller aborts if its client goes away (the shutdown
      // deadline cuts connections, so that covers draining too). So nothing long-lived holds a listener and
      // the context needs no abort when the call ends, as connect's handlers do: an abort costs an event
      // dispatch, and without a reason a DOMException (test/bench/abort-micro-bench.ts).
      const context = createHandlerContext({
        service: method.parent,
        method,
        protocolName: "in-process",
        requestMethod: "POST",
        url: `http://in-process/${method.parent.typeName}/${method.name}`,
        requestHeader: header,
        requestSignal: signal,
        contextValues: contextValues ?? createContextValues(),
      });
      const unary = spec as MethodImplSpec & { kind: "unary" };
      return (await invokeUnaryImplementation(
        unary,
        context,
        create(method.input, input as never),
        interceptors,
      )) as Message;
    },
  };
}
