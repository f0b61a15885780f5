/**
 * A small marketplace for the world's collections, served on the localnet's own port: the part of Magic
 * Eden's API that Solgate reads, `GET /v2/collections/{symbol}/stats`, answering `{symbol, floorPrice,
 * listedCount, avgPrice24hr, volumeAll}` with prices in lamports, as Magic Eden does.
 *
 * Listings come and go as the chain moves, deterministic from the seed: at start a few verified members
 * are listed; then, each slot with the traffic's collection chance, a member is listed, a listing is
 * withdrawn, or the cheapest one sells (a buyer takes the floor). A listing whose item stops being a
 * verified member (burnt, unverified) is dropped, as a marketplace delists it. The floor is the lowest
 * listing. No trade happens on chain: the listings live here only.
 */
import { createRandom } from "../world/seeded-random.ts";
import type { Route } from "../rpc/server.ts";

/** One collection the marketplace lists: its Magic Eden symbol and its collection mint. */
export interface MarketCollection {
  symbol: string;
  mint: string;
}

export interface MarketplaceOptions {
  seed: string;
  collections: readonly MarketCollection[];
  /** The collection's verified, unburnt members, in a stable order (the DAS index's id order). */
  members(mint: string): readonly { id: string }[];
  /** Whether an item is still a verified, unburnt member. */
  isMember(mint: string, id: string): boolean;
  /** Chance per slot of one listing change. */
  changesPerSlot: number;
  /** Listings made at start. */
  initialListings?: number;
}

/** Magic Eden's collection stats, as `/v2/collections/{symbol}/stats` answers them. */
export interface CollectionStats {
  symbol: string;
  floorPrice?: number;
  listedCount: number;
  avgPrice24hr?: number;
  volumeAll: number;
}

export interface Marketplace {
  /** One slot's change (call once per produced block). */
  step(): void;
  stats(symbol: string): CollectionStats | undefined;
  /** The routes to serve beside JSON-RPC. */
  routes(): Record<string, Route>;
  /** Symbol -> collection mint, for a client's configuration. */
  readonly collections: readonly MarketCollection[];
}

/** Median listing price and the spread of the listings (log-normal sigma). */
const MEDIAN_PRICE_LAMPORTS = 2_500_000_000;
const PRICE_SPREAD = 0.35;
const DAY_SECONDS = 86_400;

export function createMarketplace(options: MarketplaceOptions): Marketplace {
  const random = createRandom(`${options.seed}/marketplace`);
  const books = new Map<
    string,
    {
      collection: MarketCollection;
      listings: Map<string, number>;
      sales: { at: number; price: number }[];
      volume: number;
    }
  >();
  for (const collection of options.collections)
    books.set(collection.symbol, { collection, listings: new Map(), sales: [], volume: 0 });
  let started = false;

  // Rounded to 0.001 SOL, as people price.
  const price = () => Math.round((MEDIAN_PRICE_LAMPORTS * Math.exp(PRICE_SPREAD * random.normal())) / 1e6) * 1e6;

  function list(book: NonNullable<ReturnType<typeof books.get>>): void {
    const members = options.members(book.collection.mint);
    if (members.length === 0) return;
    const id = members[random.int(members.length)]!.id;
    if (!book.listings.has(id)) book.listings.set(id, price());
  }

  /** The first listings, once the world is written (the first step comes after it). */
  function start(): void {
    started = true;
    for (const book of books.values()) for (let i = 0; i < (options.initialListings ?? 12); i++) list(book);
  }

  return {
    collections: options.collections,
    step() {
      if (!started) start();
      for (const book of books.values()) {
        for (const id of [...book.listings.keys()])
          if (!options.isMember(book.collection.mint, id)) book.listings.delete(id);
        if (random.next() >= options.changesPerSlot) continue;
        const roll = random.next();
        if (roll < 0.45 || book.listings.size < 3) list(book);
        else if (roll < 0.75) {
          const ids = [...book.listings.keys()];
          book.listings.delete(ids[random.int(ids.length)]!);
        } else {
          let floor: [string, number] | undefined;
          for (const entry of book.listings) if (floor === undefined || entry[1] < floor[1]) floor = entry;
          if (floor === undefined) continue;
          book.listings.delete(floor[0]);
          book.sales.push({ at: Date.now() / 1000, price: floor[1] });
          book.volume += floor[1];
        }
      }
    },
    stats(symbol) {
      const book = books.get(symbol);
      if (book === undefined) return undefined;
      const now = Date.now() / 1000;
      book.sales = book.sales.filter((s) => now - s.at < DAY_SECONDS);
      let floor: number | undefined;
      for (const p of book.listings.values()) if (floor === undefined || p < floor) floor = p;
      const day = book.sales.map((s) => s.price);
      return {
        symbol,
        ...(floor === undefined ? {} : { floorPrice: floor }),
        listedCount: book.listings.size,
        ...(day.length === 0 ? {} : { avgPrice24hr: Math.round(day.reduce((a, b) => a + b, 0) / day.length) }),
        volumeAll: book.volume,
      };
    },
    routes() {
      const routes: Record<string, Route> = {};
      for (const { symbol } of options.collections)
        routes[`/v2/collections/${symbol}/stats`] = { get: () => this.stats(symbol) };
      return routes;
    },
  };
}
