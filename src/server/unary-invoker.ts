/**
 * In-process unary calls without a wire protocol: the method's implementation, behind the router's own
 * interceptors (observe, drain, errors, auth and rate limit, the gate — and whatever is added there),
 * called as connect's protocol handlers call it (the interceptors wrap the implementation, which gets a
 * handler context), but with no request to encode, no body to read back and no response to parse. The REST
 * transcoder calls RPCs this way (docs/adr/0002): the interceptors still see every call, with the
 * caller's headers, and what they throw is a ConnectError as on every protocol.
 *
 * Lighter per call than connect's `invokeUnaryImplementation` with `createHandlerContext`, which a cached
 * read paid for (docs/benchmarks.md, "The hot path"): the interceptor chain of each method is composed once,
 * not per call, and the handler context carries the caller's header object and signal as they are (no
 * copies, no linked abort controller, no deadline timer: in-process calls have no timeout), and makes its
 * response header and trailer objects only if the implementation touches them (REST does not send them).
 */
import { create, type DescMethod, type DescMethodUnary, type DescService, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, createMethodImplSpec } from "@connectrpc/connect";
import type {
  ConnectRouter,
  ContextValues,
  HandlerContext,
  Interceptor,
  MethodImplSpec,
  ServiceImpl,
  UnaryRequest,
  UnaryResponse,
} from "@connectrpc/connect";

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
  /**
   * Calls `method` with a context the caller made (a wire protocol's: its headers, deadline and signal),
   * whose response header and trailer the caller then writes. The lean unary path (unary-path.ts) calls so.
   */
  call(method: DescMethodUnary, input: Message, context: CallContext): Promise<Message>;
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

type UnaryCall = (req: UnaryRequest) => Promise<UnaryResponse>;

/** Builds the invoker over the recorded implementations and the router's interceptors. */
export function createUnaryInvoker(options: {
  impls: ReadonlyMap<DescMethod, MethodImplSpec>;
  interceptors: readonly Interceptor[];
}): UnaryInvoker {
  const calls = new Map<DescMethod, { call: UnaryCall; url: string }>();
  for (const [method, spec] of options.impls) {
    if (spec.kind !== "unary") continue;
    calls.set(method, { call: chainOf(spec, options.interceptors), url: urlOf(method) });
  }
  return {
    serves: (method) => calls.has(method),
    invoke: (method, input, header, signal, contextValues) => {
      const entry = calls.get(method);
      if (entry === undefined) return notServed(method);
      // The caller aborts `signal` if its client goes away (the shutdown deadline cuts connections, so that
      // covers draining too); a call that ends normally needs no abort (test/bench/abort-micro-bench.ts).
      const context = new CallContext(method, entry.url, signal, header, contextValues ?? createContextValues());
      return run(entry.call, method, input, context);
    },
    call: (method, input, context) => {
      const entry = calls.get(method);
      if (entry === undefined) return notServed(method);
      return run(entry.call, method, input, context);
    },
  };
}

function notServed(method: DescMethod): Promise<never> {
  return Promise.reject(new ConnectError(`${method.parent.typeName}/${method.name} is not served`, Code.Unimplemented));
}

/** The context travels with the request (interceptors that copy the request copy it too) to the implementation. */
const CONTEXT = Symbol("solgate.callContext");

async function run(call: UnaryCall, method: DescMethodUnary, input: Message, context: CallContext): Promise<Message> {
  const res = await call({
    stream: false,
    message: create(method.input, input as never),
    method,
    service: method.parent,
    requestMethod: context.requestMethod,
    url: context.url,
    signal: context.signal,
    header: context.requestHeader,
    contextValues: context.values,
    [CONTEXT]: context,
  } as UnaryRequest);
  // An interceptor that answered with metadata of its own: the caller reads the context's.
  if (!(res instanceof ContextResponse)) {
    res.header?.forEach((value, name) => context.responseHeader.append(name, value));
    res.trailer?.forEach((value, name) => context.responseTrailer.append(name, value));
  }
  return res.message as Message;
}

function urlOf(method: DescMethod): string {
  return `http://in-process/${method.parent.typeName}/${method.name}`;
}

/**
 * The method's implementation behind `interceptors`, outermost first, as connect applies them (it composes
 * them per call; they hold nothing per call outside the request, so once per method is the same chain).
 */
function chainOf(spec: MethodImplSpec & { kind: "unary" }, interceptors: readonly Interceptor[]): UnaryCall {
  const { method } = spec;
  const impl = async (req: UnaryRequest): Promise<UnaryResponse> => {
    // What connect's handlers give the implementation: the call's context (the interceptors see the same
    // header object and values), and the message as the interceptors left it.
    const context = (req as UnaryRequest & { [CONTEXT]: CallContext })[CONTEXT];
    const output = create(method.output, (await spec.impl(req.message as never, context)) as never);
    return new ContextResponse(output, context) as unknown as UnaryResponse;
  };
  let next = impl as UnaryCall;
  for (let i = interceptors.length - 1; i >= 0; i--) next = interceptors[i](next as never) as unknown as UnaryCall;
  return next;
}

const noTimeout = (): undefined => undefined;

/**
 * Whether `req` is a call of this invoker (REST, the lean unary path) whose context has no deadline: its
 * signal aborts only when the client goes away, never with DEADLINE_EXCEEDED (the deadline interceptor's case).
 */
export function withoutDeadline(req: UnaryRequest): boolean {
  return (req as UnaryRequest & { [CONTEXT]?: CallContext })[CONTEXT]?.timeoutMs === noTimeout;
}

/**
 * A unary call's handler context: the caller's header object and signal as they are (no copies, no linked
 * abort controller), a deadline only if the caller has one, and response header and trailer objects made
 * on first use (a cached read whose implementation sets none makes none).
 */
export class CallContext implements HandlerContext {
  readonly method: DescMethod;
  readonly service: DescService;
  readonly url: string;
  readonly signal: AbortSignal;
  readonly requestHeader: Headers;
  readonly values: ContextValues;
  readonly protocolName: string;
  readonly requestMethod: string;
  readonly timeoutMs: () => number | undefined;
  #responseHeader: Headers | undefined;
  #responseTrailer: Headers | undefined;

  /**
   * `deadline`: when the call times out, in `Date.now()` milliseconds; the caller aborts `signal` then.
   * `protocolName`: the wire protocol the call came by (`in-process` for REST).
   */
  constructor(
    method: DescMethod,
    url: string,
    signal: AbortSignal,
    requestHeader: Headers,
    values: ContextValues,
    protocolName = "in-process",
    requestMethod = "POST",
    deadline?: number,
  ) {
    this.method = method;
    this.service = method.parent;
    this.url = url;
    this.signal = signal;
    this.requestHeader = requestHeader;
    this.values = values;
    this.protocolName = protocolName;
    this.requestMethod = requestMethod;
    // Whole milliseconds, as connect's contexts count them (a gRPC timeout may be given in nanoseconds).
    const at = deadline === undefined ? undefined : Math.trunc(deadline);
    this.timeoutMs = at === undefined ? noTimeout : () => at - Date.now();
  }

  get responseHeader(): Headers {
    this.#responseHeader ??= new Headers();
    return this.#responseHeader;
  }

  get responseTrailer(): Headers {
    this.#responseTrailer ??= new Headers();
    return this.#responseTrailer;
  }

  /** The response header if anything touched it, without making one. */
  peekResponseHeader(): Headers | undefined {
    return this.#responseHeader;
  }

  /** The response trailer if anything touched it, without making one. */
  peekResponseTrailer(): Headers | undefined {
    return this.#responseTrailer;
  }
}

/** The implementation's answer, whose metadata is the context's (made only if an interceptor reads it). */
class ContextResponse {
  readonly stream = false;
  readonly method: DescMethod;
  readonly service: DescService;
  readonly message: Message;
  readonly context: CallContext;
  constructor(message: Message, context: CallContext) {
    this.message = message;
    this.context = context;
    this.method = context.method;
    this.service = context.service;
  }
  get header(): Headers {
    return this.context.responseHeader;
  }
  get trailer(): Headers {
    return this.context.responseTrailer;
  }
}
