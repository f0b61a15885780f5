/**
 * getProgramAccounts for keys only, read as a stream. A scan of 100,000 accounts is some 23 MB of
 * JSON; kit's bigint-preserving parser needs seconds and a gigabyte for it (measured: 7.6 s, 1.2 GB
 * RSS), when all the caller wants is the `pubkey` strings. This transport pulls them out of the body
 * as it arrives, holds nothing else, and stops reading once it has more than the caller will accept.
 */
import type { RpcTransport } from "@solana/kit";
import { postJson, readCapped, ResponseTooLargeError } from "./capped-http.ts";
import type { ByteBudget } from "./capped-http.ts";

/** A body this small may be a JSON-RPC error (or an empty result): it is parsed whole. */
const SMALL_BODY_CHARS = 64 * 1024;
/** Longer than any `"pubkey": "<44 chars>"` match, so a key split across chunks is found whole. */
const CARRY_CHARS = 80;
const PUBKEY = /"pubkey"\s*:\s*"([1-9A-HJ-NP-Za-km-z]{32,44})"/g;

/** The payload field through which the caller caps the keys read (removed before sending). */
export const KEY_SCAN_LIMIT = "__solgateKeyLimit";

/**
 * A transport for one URL that answers a getProgramAccounts payload with `{result: string[]}` (the keys,
 * in the node's order) or the node's `{error}`. When more than the payload's limit are found it stops
 * reading and returns limit + 1 keys, enough for the caller to see the query is too broad.
 */
export function createKeyScanTransport(url: string, maxResponseBytes: number): RpcTransport {
  return async function keyScan<T>({ payload, signal }: { payload: unknown; signal?: AbortSignal }): Promise<T> {
    const { [KEY_SCAN_LIMIT]: limitField, ...rest } = payload as Record<string, unknown>;
    const limit = typeof limitField === "number" ? limitField : Number.POSITIVE_INFINITY;
    const response = await postJson(url, JSON.stringify(rest), signal);
    if (response.body === null) throw new SyntaxError("empty response body");
    const keys: string[] = [];
    let head = "";
    let carry = "";
    let total = 0;
    let bytes = 0;
    let truncated = false;
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        bytes += value?.byteLength ?? 0;
        // Past the cap the stream is cut at once (keys found so far are dropped with it).
        if (bytes > maxResponseBytes) {
          await reader.cancel().catch(() => {});
          throw new ResponseTooLargeError(maxResponseBytes);
        }
        const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
        total += text.length;
        if (head.length < SMALL_BODY_CHARS) head += text.slice(0, SMALL_BODY_CHARS - head.length);
        const window = carry + text;
        PUBKEY.lastIndex = 0;
        let lastEnd = 0;
        for (let m = PUBKEY.exec(window); m !== null; m = PUBKEY.exec(window)) {
          keys.push(m[1]);
          lastEnd = PUBKEY.lastIndex;
        }
        carry = window.slice(Math.max(lastEnd, window.length - CARRY_CHARS));
        if (keys.length > limit) {
          keys.length = limit + 1;
          truncated = true;
          await reader.cancel();
          break;
        }
        if (done) break;
      }
    } finally {
      reader.releaseLock();
    }
    if (!truncated && total <= SMALL_BODY_CHARS) {
      const whole = JSON.parse(head) as { error?: unknown; result?: unknown };
      if (whole.error !== undefined) return whole as T;
      if (whole.result === undefined) throw new SyntaxError("neither result nor error in the response");
      // Anything but a list of accounts (plain, or with its context) goes on whole, for the schema check to refuse.
      const list = Array.isArray(whole.result) ? whole.result : (whole.result as { value?: unknown } | null)?.value;
      if (!Array.isArray(list)) return whole as T;
    } else if (!/^\s*\{[\s\S]*?"result"\s*:\s*[[{]/.test(head)) {
      // A long body that is not a list of accounts (an HTML page, a wrong type) holds no keys to trust.
      throw new SyntaxError("the response is not a list of accounts");
    }
    return { jsonrpc: "2.0", id: (payload as { id?: unknown }).id ?? null, result: keys } as T;
  } as RpcTransport;
}

/**
 * A transport for one URL that parses the answer with plain JSON.parse: for getProgramAccounts with a
 * small data slice, where kit's bigint-preserving parser costs seconds per 100,000 accounts and the
 * caller reads only `pubkey` and the sliced `data` (no integer beyond 2^53 is read).
 */
export function createPlainJsonTransport(url: string, maxResponseBytes: number, budget?: ByteBudget): RpcTransport {
  return async function plainJson<T>({ payload, signal }: { payload: unknown; signal?: AbortSignal }): Promise<T> {
    const response = await postJson(url, JSON.stringify(payload), signal);
    return JSON.parse(await readCapped(response, maxResponseBytes, budget)) as T;
  } as RpcTransport;
}
