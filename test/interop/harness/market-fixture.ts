/**
 * A marketplace for the localnet's seeded collection, so its change feed moves: the part of Magic Eden's API
 * Solgate reads (`GET /v2/collections/{symbol}/stats`, `floorPrice` in lamports), on a free loopback port, with a
 * floor that is different at every read. The embedded localnet runs no Token Metadata or Bubblegum program and
 * serves no marketplace yet (issue #41 item 4), so FLOOR_CHANGED is the only event its collections can produce
 * today; this is what the clients' feed checks, the examples and the demo page watch.
 *
 * `marketEnv` is the gateway configuration that points at it: the seeded collection's floor from this
 * marketplace, read every 300 ms past an empty cache, and heartbeats every second on an idle watch.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import bs58 from "bs58";
import { deriveKey } from "../../../packages/localnet/src/world/seeded-random.ts";

/** A running marketplace. */
export interface MarketFixture {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** Stats answered so far. */
  reads(): number;
  close(): Promise<void>;
}

/** The symbol the seeded collection is listed under. */
export const MARKET_SYMBOL = "solgate_world";

/** Starts the marketplace: the floor is 1 SOL plus 0.01 SOL per read, back to 1 SOL after 50 reads. */
export async function startMarketFixture(): Promise<MarketFixture> {
  let reads = 0;
  const server = createServer((req, res) => {
    const match = /^\/v2\/collections\/([^/?]+)\/stats$/u.exec(req.url ?? "");
    if (req.method !== "GET" || match === null || match[1] !== MARKET_SYMBOL) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"msg":"not found"}');
      return;
    }
    const floorPrice = 1_000_000_000 + (reads++ % 50) * 10_000_000;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ symbol: MARKET_SYMBOL, floorPrice, listedCount: 12, avgPrice24hr: floorPrice }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    reads: () => reads,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The seeded collection's mint, derived as the localnet's world derives it (from LOCALNET_WORLD_SEED, default
 * `solgate`): the gateway's configuration names it before the localnet has started and written its manifest.
 */
export function seededCollectionMint(env: NodeJS.ProcessEnv = process.env): string {
  return bs58.encode(deriveKey(env.LOCALNET_WORLD_SEED || "solgate", "collection/mint"));
}

/** The gateway settings that make the seeded collection's feed move with `market`'s floor. */
export function marketEnv(market: MarketFixture): Record<string, string> {
  return {
    SOLGATE_MAGICEDEN_URL: market.url,
    SOLGATE_FLOOR_SOURCES: `${seededCollectionMint()}=magiceden:${MARKET_SYMBOL}`,
    SOLGATE_FLOOR_TTL_MS: "0",
    SOLGATE_FEED_FLOOR_POLL_MS: "300",
    SOLGATE_FEED_HEARTBEAT_MS: "1000",
  };
}
