/**
 * JSON-RPC over HTTP with a cap on the answer's size, enforced while the body streams in: past the cap
 * the connection is dropped at once and the attempt fails with `ResponseTooLargeError`. Kit's own HTTP
 * transport reads the whole body with `response.text()` first, so a provider streaming 2 GB without a
 * Content-Length would be held in memory before anything could look at it; this one never holds more
 * than the cap. The cap counts decoded bytes (after gzip/br), so a compression bomb stops at it too.
 */
import { SolanaError, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR } from "@solana/kit";
import type { RpcTransport } from "@solana/kit";
import { parseJsonWithBigInts, stringifyJsonWithBigInts } from "@solana/rpc-spec-types";

/** The answer grew past the cap (or past what all answers being read may hold); the connection was dropped. */
export class ResponseTooLargeError extends Error {
  readonly limit: number;
  constructor(limit: number, shared = false) {
    super(
      shared
        ? `the upstream's answers being read at once hold more than ${limit} bytes`
        : `the upstream's answer is larger than ${limit} bytes`,
    );
    this.name = "ResponseTooLargeError";
    this.limit = limit;
  }
}

/**
 * Bytes that the answers being read at once may hold between them, across every call of a chain: without
 * it, 32 calls in flight could each hold an answer just under the cap. A read that would go past it fails
 * at once, like one past its own cap.
 */
export interface ByteBudget {
  readonly limit: number;
  /** Takes `bytes` if they fit; false (taking nothing) if not. */
  take(bytes: number): boolean;
  give(bytes: number): void;
}

/** Creates a budget of `limit` bytes. */
export function createByteBudget(limit: number): ByteBudget {
  let held = 0;
  return {
    limit,
    take(bytes) {
      if (held + bytes > limit) return false;
      held += bytes;
      return true;
    },
    give(bytes) {
      held -= bytes;
    },
  };
}

/** Request headers every Solgate transport sends (compressed answers welcome). */
export const JSON_RPC_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  accept: "application/json",
  "accept-encoding": "br,gzip,deflate",
} as const;

/**
 * POSTs `body` to `url` and returns the response, failing as kit's HTTP transport does on a non-2xx
 * status (so the resilient transport classifies every transport alike). The caller reads the body.
 */
export async function postJson(url: string, body: string, signal: AbortSignal | undefined): Promise<Response> {
  const response = await fetch(url, { method: "POST", headers: JSON_RPC_HEADERS, body, signal });
  if (!response.ok) {
    // Nothing of a failed answer is read: let the connection go.
    void response.body?.cancel().catch(() => {});
    throw new SolanaError(SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, {
      headers: response.headers,
      message: response.statusText,
      statusCode: response.status,
    });
  }
  return response;
}

/**
 * Reads a response body as UTF-8, at most `maxBytes` of it: one byte more cancels the stream (undici then
 * destroys the socket: a half-read answer cannot be reused) and throws `ResponseTooLargeError`. With a
 * `budget`, each chunk is taken from it as it comes, and all of it given back at the end; a chunk that does
 * not fit fails the read the same way.
 */
export async function readCapped(response: Response, maxBytes: number, budget?: ByteBudget): Promise<string> {
  if (response.body === null) return "";
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes && response.headers.get("content-encoding") === null) {
    await response.body.cancel().catch(() => {});
    throw new ResponseTooLargeError(maxBytes);
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let taken = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        throw new ResponseTooLargeError(maxBytes);
      }
      if (budget !== undefined) {
        if (!budget.take(value.byteLength)) {
          await reader.cancel().catch(() => {});
          throw new ResponseTooLargeError(budget.limit, true);
        }
        taken += value.byteLength;
      }
      chunks.push(value);
    }
    return Buffer.concat(chunks, total).toString("utf8");
  } finally {
    reader.releaseLock();
    // What was taken goes back: from here on the bytes are garbage, or the string the caller parses.
    if (taken > 0) budget?.give(taken);
  }
}

/** Options of {@link createCappedJsonRpcTransport}. */
export interface CappedTransportOptions {
  url: string;
  /** The largest answer read, in bytes. */
  maxResponseBytes: number;
  /** Shared by every transport of the chain: what the answers being read may hold between them. */
  budget?: ByteBudget;
  /** Read integers as bigint (kit's RPC expects it: u64s stay exact); plain JSON.parse otherwise (DAS). */
  bigints: boolean;
}

/**
 * A kit `RpcTransport` for one URL: the payload sent as JSON (bigints as integers), the answer read
 * under the cap and parsed. Identical concurrent calls share one request (as kit's default transport
 * does): a burst of the same read costs the node one call.
 */
export function createCappedJsonRpcTransport(options: CappedTransportOptions): RpcTransport {
  const { url, maxResponseBytes, bigints, budget } = options;
  const parse = bigints ? parseJsonWithBigInts : JSON.parse;
  const stringify = bigints ? stringifyJsonWithBigInts : JSON.stringify;
  const once = async (payload: unknown, signal: AbortSignal | undefined): Promise<unknown> => {
    const response = await postJson(url, stringify(payload), signal);
    return parse(await readCapped(response, maxResponseBytes, budget));
  };
  return coalesced(once) as RpcTransport;
}

/** A request in flight that identical calls share, with how many callers still wait for it. */
interface Shared {
  readonly promise: Promise<unknown>;
  readonly abort: AbortController;
  waiting: number;
}

/**
 * Shares one request among identical calls (same method and params) made while it is in flight. Each
 * caller's own abort ends its wait; the request itself is aborted only when every caller has left.
 */
function coalesced(send: (payload: unknown, signal: AbortSignal) => Promise<unknown>) {
  const inFlight = new Map<string, Shared>();
  return function coalescedTransport<T>({ payload, signal }: { payload: unknown; signal?: AbortSignal }): Promise<T> {
    const key = keyOf(payload);
    if (key === undefined) return send(payload, signal ?? new AbortController().signal) as Promise<T>;
    let shared = inFlight.get(key);
    if (shared === undefined) {
      const abort = new AbortController();
      const promise = send(payload, abort.signal).finally(() => {
        if (inFlight.get(key) === entry) inFlight.delete(key);
      });
      const entry: Shared = { promise, abort, waiting: 0 };
      inFlight.set(key, entry);
      shared = entry;
    }
    const entry = shared;
    entry.waiting++;
    if (signal === undefined) return entry.promise.finally(() => entry.waiting--) as Promise<T>;
    if (signal.aborted) {
      leave(entry, key, signal.reason);
      return Promise.reject(signal.reason);
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        leave(entry, key, signal.reason);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      entry.promise.then(
        (value) => {
          signal.removeEventListener("abort", onAbort);
          entry.waiting--;
          resolve(value as T);
        },
        (error: unknown) => {
          signal.removeEventListener("abort", onAbort);
          entry.waiting--;
          reject(error);
        },
      );
    });
  };

  function leave(entry: Shared, key: string, reason: unknown): void {
    entry.waiting--;
    if (entry.waiting > 0) return;
    if (inFlight.get(key) === entry) inFlight.delete(key);
    entry.abort.abort(reason);
    entry.promise.catch(() => {});
  }
}

/** The key identical calls share: method and params (the id differs per call). */
function keyOf(payload: unknown): string | undefined {
  const p = payload as { method?: unknown; params?: unknown } | null;
  if (p === null || typeof p !== "object" || typeof p.method !== "string") return undefined;
  // sendTransaction and simulateTransaction are never shared: each send is the caller's own.
  if (p.method === "sendTransaction") return undefined;
  try {
    return `${p.method}\u0000${stringifyJsonWithBigInts(p.params ?? null)}`;
  } catch {
    return undefined;
  }
}
