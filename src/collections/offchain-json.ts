/**
 * The off-chain metadata JSON an NFT's `uri` points to, for the fields a DAS provider left empty
 * (description, image). Best effort by design: a short timeout, a size cap, http(s) only, public
 * hosts only (unless allowed), a concurrency cap, and an LRU cache that keeps answers for minutes
 * and failures for a short while. A caller never waits past its deadline: a fetch still running
 * then goes on in the background and fills the cache for the next request.
 */
import pLimit from "p-limit";
import { httpGet } from "./http-get.ts";
import type { HttpGetOptions, HttpGetResult } from "./http-get.ts";
import { createLruCache } from "./lru-cache.ts";

/** The fields Solgate shows from the JSON; empty strings when absent or unusable. */
export interface OffchainFields {
  description: string;
  image: string;
}

/** Looks up off-chain metadata. Never rejects. */
export interface OffchainJson {
  /** The JSON's fields, or null when the uri is unusable, the fetch failed, or `deadlineMs` passed first. */
  get(uri: string, options?: { deadlineMs?: number }): Promise<OffchainFields | null>;
}

/** Options of {@link createOffchainJson}. */
export interface OffchainJsonOptions {
  /** Per fetch, redirects included (default 1,500 ms). */
  timeoutMs?: number;
  /** Largest JSON accepted (default 256 KiB). */
  maxBytes?: number;
  /** How long an answer is kept (default 10 min). */
  ttlMs?: number;
  /** How long a failure is kept, so a dead host is not asked on every request (default 60 s). */
  failureTtlMs?: number;
  /** Cached URIs (default 10,000). */
  maxEntries?: number;
  /** Fetches in flight at once (default 16); more wait their turn. */
  maxConcurrent?: number;
  /** Fetches waiting for a slot beyond which new ones are skipped, not queued (default 256). */
  maxQueued?: number;
  /** Permit loopback and private hosts (default false: a mint's uri must not reach the internal network). */
  allowPrivateNetworks?: boolean;
  /** The HTTP GET used (tests). */
  get?: (url: string, options: HttpGetOptions) => Promise<HttpGetResult>;
  now?: () => number;
}

/** Longest description kept, in characters. */
const MAX_DESCRIPTION = 4096;
/** Longest image URL kept: a huge inline image would bloat every page it appears on. */
const MAX_IMAGE_URL = 2048;

/**
 * An image URL safe to hand to a client that will render it: http(s), ipfs, ar, or an inline
 * `data:image/...`, no longer than {@link MAX_IMAGE_URL}; anything else becomes "".
 * (A `javascript:` image in someone's metadata must not reach a careless web page.)
 */
export function safeImageUrl(value: unknown): string {
  if (typeof value !== "string") return "";
  const url = value.trim();
  if (url.length === 0 || url.length > MAX_IMAGE_URL) return "";
  return /^(https?:\/\/|ipfs:\/\/|ar:\/\/|data:image\/)/iu.test(url) ? url : "";
}

/** A description as shown: a string, trimmed and bounded. */
export function safeDescription(value: unknown): string {
  return typeof value === "string" ? value.trim().slice(0, MAX_DESCRIPTION) : "";
}

/** Whether Solgate will try to fetch `uri` at all. */
export function isFetchableUri(uri: string): boolean {
  return /^https?:\/\/[^\s]+$/iu.test(uri) && uri.length <= 2048;
}

export function createOffchainJson(options: OffchainJsonOptions = {}): OffchainJson {
  const timeoutMs = options.timeoutMs ?? 1500;
  const maxBytes = options.maxBytes ?? 256 * 1024;
  const ttlMs = options.ttlMs ?? 10 * 60_000;
  const failureTtlMs = options.failureTtlMs ?? 60_000;
  const maxQueued = options.maxQueued ?? 256;
  const get = options.get ?? httpGet;
  const slots = pLimit(options.maxConcurrent ?? 16);
  const cache = createLruCache<OffchainFields | null>({ maxEntries: options.maxEntries ?? 10_000, now: options.now });

  async function fetchFields(uri: string): Promise<{ value: OffchainFields | null; ttlMs: number }> {
    if (slots.pendingCount >= maxQueued) return { value: null, ttlMs: 0 };
    return slots(async () => {
      try {
        const response = await get(uri, {
          timeoutMs,
          maxBytes,
          allowPrivateNetworks: options.allowPrivateNetworks ?? false,
        });
        const json: unknown = JSON.parse(response.body.toString("utf8"));
        if (typeof json !== "object" || json === null || Array.isArray(json))
          return { value: null, ttlMs: failureTtlMs };
        const doc = json as Record<string, unknown>;
        return { value: { description: safeDescription(doc.description), image: safeImageUrl(doc.image) }, ttlMs };
      } catch {
        return { value: null, ttlMs: failureTtlMs };
      }
    });
  }

  return {
    async get(uri, call = {}) {
      const trimmed = uri.trim();
      if (!isFetchableUri(trimmed)) return null;
      const loading = cache.getOrLoad(trimmed, () => fetchFields(trimmed));
      const deadlineMs = call.deadlineMs ?? timeoutMs;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<null>((resolve) => {
        timer = setTimeout(resolve, Math.max(0, deadlineMs), null);
      });
      try {
        return await Promise.race([loading, deadline]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
