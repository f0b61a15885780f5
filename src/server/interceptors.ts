/**
 * Cross-cutting work on every RPC, for every protocol: mapping thrown errors to the wire, logging
 * and metrics, and ending long streams when the server drains. Streaming responses are wrapped so
 * that what happens while the stream runs (errors, its end) is seen too, not only its start.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { Interceptor, StreamRequest, StreamResponse, UnaryRequest, UnaryResponse } from "@connectrpc/connect";
import { SolgateError, toConnectError } from "../errors.ts";
import { KEY_NAME } from "./auth.ts";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";
import { REQUEST_ID_HEADER } from "./request-id.ts";
import { withoutDeadline } from "./unary-invoker.ts";

/**
 * Maps anything a handler throws, at once or mid-stream, through `toConnectError` (the only mapping).
 *
 * The interceptors here answer a unary call without an async function of their own (a promise and
 * microtasks per layer and per call, on a path that serves cached reads: docs/benchmarks.md, "The hot
 * path"); what they do is the same, a synchronous throw of the layer beneath included.
 */
export function createErrorInterceptor(logger: Logger): Interceptor {
  const unexpected =
    (req: { header: Headers; service: { typeName: string }; method: { name: string } }) => (err: unknown) =>
      logger.error(
        { err, requestId: req.header.get(REQUEST_ID_HEADER) ?? undefined, procedure: procedureOf(req) },
        "unexpected error; answered INTERNAL",
      );
  return (next) => (req) => {
    // The logging closure is made only for an error or a stream, not for every call.
    if (req.stream)
      return (async () => {
        try {
          const res = await next(req);
          if (!res.stream) return res;
          return withMessages(res, mapStreamErrors(res.message, unexpected(req)));
        } catch (e) {
          throw toConnectError(e, unexpected(req));
        }
      })();
    let res: Promise<UnaryResponse | StreamResponse>;
    try {
      res = next(req);
    } catch (e) {
      return Promise.reject(toConnectError(e, unexpected(req)));
    }
    return res.then(undefined, (e: unknown) => {
      throw toConnectError(e, unexpected(req));
    }) as never;
  };
}

/**
 * Logs one line per RPC (request id, procedure, code, duration; never headers) and records it in
 * the metrics. A stream is recorded when it ends, with the code it ended with.
 */
export function createObserveInterceptor(options: { logger: Logger; metrics?: Metrics }): Interceptor {
  const { logger, metrics } = options;
  // One function for every call (its state passed in), not a closure made per call.
  const recordCall = (req: UnaryRequest | StreamRequest, started: number, error: unknown) => {
    const code = error === undefined ? "ok" : codeName(ConnectError.from(error).code);
    const seconds = (performance.now() - started) / 1000;
    metrics?.observeRpc(req.service.typeName, req.method.name, code, seconds, req.contextValues.get(KEY_NAME));
    // The line's fields are built only when it is written: with info off, a cached read costs no log object.
    if (!logger.isLevelEnabled("info")) return;
    const fields = {
      requestId: req.header.get(REQUEST_ID_HEADER) ?? undefined,
      procedure: procedureOf(req),
      protocol: req.header.get(VIA_HEADER) === "rest" ? "rest" : protocolOf(req.header.get("content-type")),
      key: req.contextValues.get(KEY_NAME),
      code,
      durationMs: Math.round(seconds * 10_000) / 10,
      ...(error === undefined ? {} : { error: ConnectError.from(error).rawMessage }),
    };
    logger.info(fields, "rpc");
  };
  const observed = (req: UnaryRequest | StreamRequest, started: number, res: UnaryResponse | StreamResponse) => {
    if (!res.stream) {
      recordCall(req, started, undefined);
      return res;
    }
    return observedStream(req, started, res);
  };
  return (next) => (req) => {
    const started = performance.now();
    let res: Promise<UnaryResponse | StreamResponse>;
    try {
      res = next(req);
    } catch (e) {
      recordCall(req, started, e);
      return Promise.reject(e);
    }
    return res.then(
      (r) => observed(req, started, r),
      (e: unknown) => {
        recordCall(req, started, e);
        throw e;
      },
    ) as never;
  };

  function observedStream(req: UnaryRequest | StreamRequest, started: number, res: StreamResponse): StreamResponse {
    const source = res.message;
    return withMessages(
      res,
      (async function* () {
        // Counted from the first pull: a generator closed before it starts never runs its finally.
        const closeStream = metrics?.streamOpened(
          req.service.typeName,
          req.method.name,
          req.header.get(VIA_HEADER) === "rest" ? "rest-sse" : protocolOf(req.header.get("content-type")),
        );
        // Created only when needed: an error (and its stack) per open stream adds up over thousands of watches.
        let outcome: unknown = ABANDONED;
        try {
          yield* source;
          outcome = undefined;
        } catch (e) {
          outcome = e;
          throw e;
        } finally {
          closeStream?.();
          recordCall(
            req,
            started,
            outcome === ABANDONED ? new ConnectError("stream abandoned by the client", Code.Canceled) : outcome,
          );
        }
      })(),
    );
  }
}

/**
 * Ends server streams when `drain` aborts, with UNAVAILABLE and a retry hint, so clients reconnect
 * to another replica. Unary calls are left to finish on their own.
 */
export function createDrainInterceptor(drain: AbortSignal): Interceptor {
  return (next) => (req) => {
    // A unary call gets a unary answer: nothing to end.
    if (!req.stream) return next(req);
    return next(req).then((res) => (res.stream ? withMessages(res, endOnAbort(res.message, drain)) : res));
  };
}

/**
 * Answers a unary call DEADLINE_EXCEEDED when its deadline passes (its signal aborts with that code), whether
 * or not the work beneath has heard: the cores and the upstream do not all take the call's signal, and without
 * this the answer waited for them (until the upstream budget, answered UNAVAILABLE) while only a client with a
 * timer of its own saw the deadline kept.
 */
export function createDeadlineInterceptor(): Interceptor {
  return (next) => (req) => {
    // An in-process or lean-path call made without a deadline has a signal that never says DEADLINE_EXCEEDED.
    if (req.stream || withoutDeadline(req)) return next(req);
    const { signal } = req;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (signal.reason instanceof ConnectError && signal.reason.code === Code.DeadlineExceeded)
          reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      next(req)
        .then(resolve, reject)
        .finally(() => signal.removeEventListener("abort", onAbort));
    });
  };
}

/** The error a drained stream ends with. */
export function shuttingDownError(): ConnectError {
  return toConnectError(
    new SolgateError("UPSTREAM_UNAVAILABLE", "server is shutting down; reconnect and retry", {}, { retryAfterMs: 0 }),
  );
}

const ABANDONED = Symbol("abandoned");

async function* mapStreamErrors<T>(source: AsyncIterable<T>, onUnexpected: (e: unknown) => void): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (e) {
    throw toConnectError(e, onUnexpected);
  }
}

async function* endOnAbort<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  // Each wait gets its own promise, woken by the abort: racing every message against one long-lived
  // promise would pile a reaction onto it per message for the life of the stream.
  let wake: ((error: unknown) => void) | undefined;
  const onAbort = () => wake?.(shuttingDownError());
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      if (signal.aborted) throw shuttingDownError();
      const step = await new Promise<IteratorResult<T>>((resolve, reject) => {
        wake = reject;
        it.next().then(resolve, reject);
      });
      wake = undefined;
      if (step.done) return;
      yield step.value;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    // The source may be parked on an await; its own context signal ends it when the response closes.
    void Promise.resolve(it.return?.()).catch(() => {});
  }
}

function withMessages<T extends StreamResponse>(res: T, message: AsyncIterable<unknown>): T {
  return { ...res, message } as T;
}

function procedureOf(req: { service: { typeName: string }; method: { name: string } }): string {
  return `${req.service.typeName}/${req.method.name}`;
}

/** `InvalidArgument` -> `invalid_argument`, as gRPC and Connect spell codes on the wire. */
export function codeName(code: Code): string {
  return (Code[code] ?? "unknown").replace(/[A-Z]/g, (c, i: number) => (i === 0 ? "" : "_") + c.toLowerCase());
}

/**
 * Set by the REST layer on the calls it makes in process, so that their log lines say `rest` rather
 * than the binary Connect they travel as. Only a log label: a client that sends it mislabels its own line.
 */
export const VIA_HEADER = "x-solgate-via";

function protocolOf(contentType: string | null): string {
  if (contentType === null) return "connect-get";
  if (contentType.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType.startsWith("application/grpc")) return "grpc";
  return "connect";
}
