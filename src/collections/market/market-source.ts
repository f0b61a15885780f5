/**
 * Market data: where floor prices come from. A source answers for one marketplace; which
 * collection maps to which marketplace listing (a Magic Eden symbol, a Tensor slug) is
 * configuration. Floor prices are display-only: nothing in Solgate computes with them.
 */
import { HttpGetError } from "../http-get.ts";
import type { HttpGetOptions, HttpGetResult } from "../http-get.ts";

/** A floor price as shown. */
export interface FloorPrice {
  /** Lowest listed price, lamports. */
  lamports: bigint;
  /** The same in SOL (lamports / 1e9), for display. */
  sol: number;
  /** When the marketplace answered. */
  updatedAt: Date;
  /** Which marketplace (`magiceden`, `tensor`). */
  source: string;
}

/** One marketplace's stats API. */
export interface MarketSource {
  /** Stable name (`magiceden`, `tensor`): the `source` of its prices and the key in the mapping. */
  readonly name: string;
  /**
   * The floor of the listing `id` (a symbol or slug), in lamports; null when the marketplace knows
   * no such listing or it has no floor. Throws on failure (HTTP error, timeout, unreadable answer).
   */
  fetchFloor(id: string, signal: AbortSignal): Promise<bigint | null>;
}

/** Which marketplace listing a collection maps to. */
export interface FloorSourceRef {
  source: string;
  id: string;
}

/** What the collections core asks of market data. */
export interface FloorPriceLookup {
  /** The floor of `collection`, or null when unconfigured, unknown, failing or too slow. Never rejects. */
  floorPrice(collection: string): Promise<FloorPrice | null>;
}

/** A lookup that never has a price (no marketplace configured). */
export const noFloorPrices: FloorPriceLookup = { floorPrice: async () => null };

/** Parses a lamports amount a marketplace sent (integer number or decimal string); null when it is not one. */
export function lamportsFrom(value: unknown): bigint | null {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  // Some answers carry fractional lamports from averaging; a floor is a listing price, so round down.
  if (typeof value === "number" && Number.isFinite(value) && value >= 0 && value < 2 ** 63)
    return BigInt(Math.floor(value));
  if (typeof value === "string" && /^\d{1,20}$/u.test(value)) {
    const n = BigInt(value);
    return n <= 0xffff_ffff_ffff_ffffn ? n : null;
  }
  return null;
}

/** How a marketplace adapter fetches (`httpGet`, or a stand-in in tests). */
export type MarketGet = (url: string, options: HttpGetOptions) => Promise<HttpGetResult>;

/**
 * GETs a marketplace's JSON answer; undefined when the marketplace says 404 (an unknown listing is
 * an answer, no price, not a failure). Throws on anything else that goes wrong.
 */
export async function getMarketJson(get: MarketGet, url: string, options: HttpGetOptions): Promise<unknown> {
  let response: HttpGetResult;
  try {
    response = await get(url, options);
  } catch (error) {
    if (error instanceof HttpGetError && error.status === 404) return undefined;
    throw error;
  }
  return JSON.parse(response.body.toString("utf8"));
}
