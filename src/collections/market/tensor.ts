/**
 * Tensor's collection data. Tensor's API reference is behind its developer portal, so this adapter
 * follows the shape of its published "find collection" endpoint and reads it tolerantly:
 *
 *   GET {base}/api/v1/collections/find?query={slug}      header `x-tensor-api-key: <key>`
 *   -> an array of collections (or `{collections: [...]}`, or one collection object), each with
 *      `slug` (or `slugDisplay`), and prices in lamports as strings or numbers: `buyNowPrice`
 *      (the lowest listing, which is what a floor is) or `floorPrice`, at the top level or under `stats`.
 *
 * The entry whose slug equals the configured one is used (a lone entry otherwise); no entry or no
 * price is "no floor". If Tensor's live shape differs, only this file changes.
 */
import { httpGet } from "../http-get.ts";
import { getMarketJson, lamportsFrom } from "./market-source.ts";
import type { MarketGet, MarketSource } from "./market-source.ts";

/** The public API's base URL. */
export const TENSOR_DEFAULT_URL = "https://api.mainnet.tensordev.io";

/** Options of {@link createTensorSource}. */
export interface TensorOptions {
  url?: string;
  apiKey?: string;
  maxBytes?: number;
  allowPrivateNetworks?: boolean;
  get?: MarketGet;
}

type Entry = Record<string, unknown>;

export function createTensorSource(options: TensorOptions = {}): MarketSource {
  const base = (options.url ?? TENSOR_DEFAULT_URL).replace(/\/+$/u, "");
  const get = options.get ?? httpGet;
  const headers: Record<string, string> = options.apiKey ? { "x-tensor-api-key": options.apiKey } : {};
  return {
    name: "tensor",
    async fetchFloor(slug, signal) {
      const answer = await getMarketJson(get, `${base}/api/v1/collections/find?query=${encodeURIComponent(slug)}`, {
        timeoutMs: 30_000,
        maxBytes: options.maxBytes ?? 256 * 1024,
        headers,
        signal,
        allowPrivateNetworks: options.allowPrivateNetworks ?? true,
      });
      // An unknown slug (404) is an answer: no price.
      const entry = answer === undefined ? undefined : pick(answer, slug);
      if (entry === undefined) return null;
      const stats = typeof entry.stats === "object" && entry.stats !== null ? (entry.stats as Entry) : {};
      for (const raw of [entry.buyNowPrice, entry.floorPrice, stats.buyNowPrice, stats.floorPrice]) {
        if (raw === undefined || raw === null) continue;
        const floor = lamportsFrom(raw);
        if (floor === null) throw new Error("tensor: the floor is not a lamports amount");
        return floor;
      }
      return null;
    },
  };
}

function pick(body: unknown, slug: string): Entry | undefined {
  const list: unknown[] = Array.isArray(body)
    ? body
    : typeof body === "object" && body !== null && Array.isArray((body as Entry).collections)
      ? ((body as Entry).collections as unknown[])
      : typeof body === "object" && body !== null
        ? [body]
        : [];
  const entries = list.filter((e): e is Entry => typeof e === "object" && e !== null && !Array.isArray(e));
  const wanted = slug.toLowerCase();
  const match = entries.find((e) =>
    [e.slug, e.slugDisplay].some((s) => typeof s === "string" && s.toLowerCase() === wanted),
  );
  if (match) return match;
  // A lone answer without a slug field is the collection asked for; a lone one with another slug is not.
  return entries.length === 1 && entries[0].slug === undefined && entries[0].slugDisplay === undefined
    ? entries[0]
    : undefined;
}
