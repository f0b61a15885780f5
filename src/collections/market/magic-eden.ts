/**
 * Magic Eden's collection stats: `GET {base}/v2/collections/{symbol}/stats` answers
 * `{symbol, floorPrice, listedCount, avgPrice24hr, volumeAll}` with `floorPrice` in lamports
 * (absent when nothing is listed). An API key, when configured, goes as `Authorization: Bearer`.
 */
import { httpGet } from "../http-get.ts";
import { getMarketJson, lamportsFrom } from "./market-source.ts";
import type { MarketGet, MarketSource } from "./market-source.ts";

/** The public API's base URL. */
export const MAGIC_EDEN_DEFAULT_URL = "https://api-mainnet.magiceden.dev";

/** Options of {@link createMagicEdenSource}. */
export interface MagicEdenOptions {
  /** Base URL (default {@link MAGIC_EDEN_DEFAULT_URL}). */
  url?: string;
  apiKey?: string;
  /** Cap on each answer (default 64 KiB: stats are a few hundred bytes). */
  maxBytes?: number;
  /** Permit a loopback or private base URL (configured by the operator, so allowed by default). */
  allowPrivateNetworks?: boolean;
  get?: MarketGet;
}

export function createMagicEdenSource(options: MagicEdenOptions = {}): MarketSource {
  const base = (options.url ?? MAGIC_EDEN_DEFAULT_URL).replace(/\/+$/u, "");
  const get = options.get ?? httpGet;
  const headers: Record<string, string> = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
  return {
    name: "magiceden",
    async fetchFloor(symbol, signal) {
      const stats = (await getMarketJson(get, `${base}/v2/collections/${encodeURIComponent(symbol)}/stats`, {
        // The caller's signal carries the deadline; this one only backs it up.
        timeoutMs: 30_000,
        maxBytes: options.maxBytes ?? 64 * 1024,
        headers,
        signal,
        allowPrivateNetworks: options.allowPrivateNetworks ?? true,
      })) as { floorPrice?: unknown } | null | undefined;
      // An unknown symbol (404) is an answer: no price.
      if (stats === undefined) return null;
      if (typeof stats !== "object" || stats === null) throw new Error("magiceden: stats are not an object");
      if (stats.floorPrice === undefined || stats.floorPrice === null) return null;
      const floor = lamportsFrom(stats.floorPrice);
      if (floor === null) throw new Error("magiceden: floorPrice is not a lamports amount");
      return floor;
    },
  };
}
