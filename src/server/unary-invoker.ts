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
    invoke: async (method, input, header, signal, contextValues) => {
      const entry = calls.get(method);
      if (entry === undefined)
        throw new ConnectError(`${method.parent.typeName}/${method.name} is not served`, Code.Unimplemented);
      // The caller aborts `signal` if its client goes away (the shutdown deadline cuts connections, so that
      // covers draining too); a call that ends normally needs no abort (test/bench/abort-micro-bench.ts).
      const res = await entry.call({
        stream: false,
        message: create(method.input, input as never),
        method,
        service: method.parent,
        requestMethod: "POST",
        url: entry.url,
        signal,
        header,
        contextValues: contextValues ?? createContextValues(),
      } as UnaryRequest);
      return res.message as Message;
    },
  };
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
  const url = urlOf(method);
  const impl = async (req: UnaryRequest): Promise<UnaryResponse> => {
    // What connect's handlers give the implementation: the context, with the request as the interceptors left it.
    const context = new InProcessContext(
      method,
      req.service,
      url,
      req.requestMethod,
      req.signal,
      req.header,
      req.contextValues,
    );
    const output = create(method.output, (await spec.impl(req.message as never, context)) as never);
    return {
      stream: false,
      message: output,
      method: method as never,
      service: method.parent,
      header: context.responseHeader,
      trailer: context.responseTrailer,
    } as UnaryResponse;
  };
  let next = impl as UnaryCall;
  for (let i = interceptors.length - 1; i >= 0; i--) next = interceptors[i](next as never) as unknown as UnaryCall;
  return next;
}

const noTimeout = (): undefined => undefined;

/** A handler context for an in-process call: no timeout, response metadata made on first use. */
class InProcessContext implements HandlerContext {
  readonly protocolName = "in-process";
  readonly timeoutMs = noTimeout;
  #responseHeader: Headers | undefined;
  #responseTrailer: Headers | undefined;

  readonly method: DescMethod;
  readonly service: DescService;
  readonly url: string;
  readonly requestMethod: string;
  readonly signal: AbortSignal;
  readonly requestHeader: Headers;
  readonly values: ContextValues;

  constructor(
    method: DescMethod,
    service: DescService,
    url: string,
    requestMethod: string,
    signal: AbortSignal,
    requestHeader: Headers,
    values: ContextValues,
  ) {
    this.method = method;
    this.service = service;
    this.url = url;
    this.requestMethod = requestMethod;
    this.signal = signal;
    this.requestHeader = requestHeader;
    this.values = values;
  }

  get responseHeader(): Headers {
    this.#responseHeader ??= new Headers();
    return this.#responseHeader;
  }

  get responseTrailer(): Headers {
    this.#responseTrailer ??= new Headers();
    return this.#responseTrailer;
  }
}
