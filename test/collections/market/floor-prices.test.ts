/**
 * Floor prices from local HTTP servers that answer like Magic Eden and Tensor: the price, its
 * cache, the token bucket toward the marketplace, and null (on time) when a marketplace fails,
 * stalls or does not know the collection.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFloorPrices } from "../../../src/collections/market/floor-prices.ts";
import { createMagicEdenSource } from "../../../src/collections/market/magic-eden.ts";
import { createTensorSource } from "../../../src/collections/market/tensor.ts";
import { parseMarketConfig, withLocalMarketplace } from "../../../src/collections/market/market-config.ts";
import { createTokenBucket } from "../../../src/collections/market/token-bucket.ts";
import { lamportsFrom } from "../../../src/collections/market/market-source.ts";
import { HttpGetError } from "../../../src/collections/http-get.ts";
import { json, stall, startHttpFixture } from "../http-fixture.ts";
import type { HttpFixture } from "../http-fixture.ts";

const MAD_LADS = "J1S9H3QjnRtBbbuD4HjPV6RpRhwuk4zKbxsnCHuTgh9w";
const SMB = "8Rt3Ayqth4DAiPnW9MDFi63TiQJHmohfTWLMQFHi4KZH";
const FOXES = "BUjZjAS2vbbb65g7Z1Ca9ZRVYoJscURG5L3AkVvHP9ac";
const OKAY = "3saAedkM9o5g1u5DCqsuMZuC4GRqPB4TuMkvSsSVvGQ3";

let me: HttpFixture;
let tensor: HttpFixture;

beforeAll(async () => {
  me = await startHttpFixture();
  tensor = await startHttpFixture();
  me.routes.set(
    "/v2/collections/mad_lads/stats",
    json({
      symbol: "mad_lads",
      floorPrice: 78_500_000_000,
      listedCount: 412,
      avgPrice24hr: 80_000_000_000.5,
      volumeAll: 1e18,
    }),
  );
  me.routes.set("/v2/collections/broken/stats", json({ error: "boom" }, 500));
  me.routes.set("/v2/collections/slow/stats", stall);
  me.routes.set("/v2/collections/unlisted/stats", json({ symbol: "unlisted", listedCount: 0 }));
  tensor.routes.set(
    "/api/v1/collections/find?query=smb_gen3",
    json([
      { slug: "smb_gen3_lookalike", name: "SMB Gen3 copy", buyNowPrice: "1" },
      { slug: "smb_gen3", name: "SMB Gen3", buyNowPrice: "12345000000", sellNowPrice: "12000000000" },
    ]),
  );
  tensor.routes.set(
    "/api/v1/collections/find?query=stats_only",
    json({ collections: [{ slugDisplay: "STATS_ONLY", stats: { buyNowPrice: 42 } }] }),
  );
});
afterAll(async () => {
  await me.close();
  await tensor.close();
});

function prices(
  collections: Record<string, { source: string; id: string }>,
  options: Partial<Parameters<typeof createFloorPrices>[0]> = {},
) {
  return createFloorPrices({
    sources: [
      createMagicEdenSource({ url: me.url, apiKey: "me-key" }),
      createTensorSource({ url: `${tensor.url}/`, apiKey: "t-key" }),
    ],
    collections,
    timeoutMs: 200,
    ...options,
  });
}

describe("createFloorPrices", () => {
  it("reads Magic Eden's floor in lamports, with SOL, time and source, and caches it", async () => {
    const floor = prices({ [MAD_LADS]: { source: "magiceden", id: "mad_lads" } });
    const before = Date.now();
    const price = await floor.floorPrice(MAD_LADS);
    expect(price).toMatchObject({ lamports: 78_500_000_000n, sol: 78.5, source: "magiceden" });
    expect(price!.updatedAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(await floor.floorPrice(MAD_LADS)).toBe(price);
    expect(me.hitsOf("/v2/collections/mad_lads/stats")).toBe(1);
    expect(me.headers.get("/v2/collections/mad_lads/stats")?.authorization).toBe("Bearer me-key");
  });

  it("reads Tensor's buy-now price for the configured slug, wherever it sits", async () => {
    const floor = prices({
      [SMB]: { source: "tensor", id: "smb_gen3" },
      [FOXES]: { source: "tensor", id: "stats_only" },
    });
    expect(await floor.floorPrice(SMB)).toMatchObject({ lamports: 12_345_000_000n, sol: 12.345, source: "tensor" });
    expect(tensor.headers.get("/api/v1/collections/find?query=smb_gen3")?.["x-tensor-api-key"]).toBe("t-key");
    expect(await floor.floorPrice(FOXES)).toMatchObject({ lamports: 42n });
  });

  it("is null without a call for collections not configured, and null for unknown or unlisted ones", async () => {
    const floor = prices({
      [MAD_LADS]: { source: "magiceden", id: "nope" },
      [SMB]: { source: "magiceden", id: "unlisted" },
      [FOXES]: { source: "opensea", id: "x" },
    });
    expect(await floor.floorPrice(OKAY)).toBeNull();
    expect(await floor.floorPrice(FOXES)).toBeNull();
    expect(await floor.floorPrice(MAD_LADS)).toBeNull();
    expect(await floor.floorPrice(SMB)).toBeNull();
    expect(floor.stats).toMatchObject({ calls: 2, failures: 0 });
  });

  it("is null when the marketplace fails, and does not ask again until the failure expires", async () => {
    let t = 1_000_000;
    const errors: unknown[] = [];
    const floor = prices(
      { [MAD_LADS]: { source: "magiceden", id: "broken" } },
      { now: () => t, failureTtlMs: 15_000, onError: (e) => errors.push(e) },
    );
    expect(await floor.floorPrice(MAD_LADS)).toBeNull();
    expect(await floor.floorPrice(MAD_LADS)).toBeNull();
    expect(me.hitsOf("/v2/collections/broken/stats")).toBe(1);
    t += 16_000;
    expect(await floor.floorPrice(MAD_LADS)).toBeNull();
    expect(me.hitsOf("/v2/collections/broken/stats")).toBe(2);
    expect(errors).toHaveLength(2);
  });

  it("gives up on a stalled marketplace at its timeout", async () => {
    const errors: unknown[] = [];
    const floor = prices({ [MAD_LADS]: { source: "magiceden", id: "slow" } }, { onError: (e) => errors.push(e) });
    expect(await floor.floorPrice(MAD_LADS)).toBeNull();
    // The timeout is what ended the call (the marketplace never answers), once, and the failure is kept.
    expect(me.hitsOf("/v2/collections/slow/stats")).toBe(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(HttpGetError);
    expect(errors[0]).toMatchObject({ kind: "timeout" });
    expect(await floor.floorPrice(MAD_LADS)).toBeNull();
    expect(me.hitsOf("/v2/collections/slow/stats")).toBe(1);
  });

  it("spends a token per call: when the bucket is empty it serves the last price or null, without a call", async () => {
    let t = 5_000_000;
    const floor = prices(
      {
        [MAD_LADS]: { source: "magiceden", id: "mad_lads" },
        [SMB]: { source: "tensor", id: "smb_gen3" },
        [OKAY]: { source: "magiceden", id: "unlisted" },
      },
      { now: () => t, ttlMs: 1_000, ratePerSecond: 1, burst: 1 },
    );
    const first = await floor.floorPrice(MAD_LADS);
    expect(first?.lamports).toBe(78_500_000_000n);
    t += 1_500; // the price expired, but the bucket has refilled only 1.5 tokens... spend one on another listing
    expect(await floor.floorPrice(OKAY)).toBeNull();
    expect(await floor.floorPrice(MAD_LADS)).toBe(first); // no token left: the recent price, not a call
    expect(floor.stats.rateLimited).toBe(1);
    expect(await floor.floorPrice(SMB)).not.toBeNull(); // Tensor has its own bucket
    t += 10 * 60_000; // the bucket refills; the old price is now too stale to serve when limited
    expect((await floor.floorPrice(MAD_LADS))?.updatedAt.getTime()).toBe(t);
  });
});

describe("market pieces", () => {
  it("token bucket: burst, then the refill rate", () => {
    let t = 0;
    const bucket = createTokenBucket({ perSecond: 2, burst: 3, now: () => t });
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, true, false]);
    t += 500;
    expect([bucket.tryTake(), bucket.tryTake()]).toEqual([true, false]);
    t += 60_000;
    expect(bucket.available).toBe(3);
  });

  it("lamports from numbers and strings, nothing else", () => {
    expect(lamportsFrom(5)).toBe(5n);
    expect(lamportsFrom("18446744073709551615")).toBe(18446744073709551615n);
    expect(lamportsFrom(1.9)).toBe(1n);
    for (const bad of [-1, "-1", "1e9", "18446744073709551616", Number.NaN, null, {}, "0x10"])
      expect(lamportsFrom(bad)).toBeNull();
  });

  it("configuration: defaults, the collection mapping, and every problem at once", () => {
    const env = (vars: Record<string, string>) => (name: string) => vars[name];
    const problems: string[] = [];
    const ok = parseMarketConfig(
      env({
        SOLGATE_FLOOR_SOURCES: ` ${MAD_LADS}=magiceden:mad_lads , ${SMB}=tensor:smb_gen3`,
        SOLGATE_TENSOR_API_KEY: "k",
      }),
      problems,
    );
    expect(problems).toEqual([]);
    expect(ok).toMatchObject({
      magicEden: { url: "https://api-mainnet.magiceden.dev" },
      tensor: { url: "https://api.mainnet.tensordev.io", apiKey: "k" },
      floorSources: {
        [MAD_LADS]: { source: "magiceden", id: "mad_lads" },
        [SMB]: { source: "tensor", id: "smb_gen3" },
      },
      timeoutMs: 1000,
    });
    parseMarketConfig(
      env({
        SOLGATE_FLOOR_SOURCES: `nope=magiceden:x,${MAD_LADS}=opensea:x,${SMB}=tensor:a b,${OKAY}=tensor:ok,${OKAY}=magiceden:again,garbage`,
        SOLGATE_MAGICEDEN_URL: "ftp://x",
        SOLGATE_FLOOR_TIMEOUT_MS: "5",
      }),
      problems,
    );
    expect(problems).toHaveLength(7);
    expect(problems.join("\n")).not.toContain("secret");
  });

  it("the embedded localnet's marketplace: the default Magic Eden source for its collections, never over an operator's", () => {
    const env = (vars: Record<string, string>) => (name: string) => vars[name];
    const local = { url: "http://127.0.0.1:8899", collections: { [OKAY]: "solgate_sentinels", [MAD_LADS]: "local" } };
    const defaults = parseMarketConfig(env({ SOLGATE_FLOOR_SOURCES: `${MAD_LADS}=tensor:mad_lads` }), []);
    expect(withLocalMarketplace(defaults, local)).toMatchObject({
      magicEden: { url: "http://127.0.0.1:8899" },
      floorSources: {
        [OKAY]: { source: "magiceden", id: "solgate_sentinels" },
        // An operator's mapping of a collection wins over the localnet's.
        [MAD_LADS]: { source: "tensor", id: "mad_lads" },
      },
    });
    const own = parseMarketConfig(env({ SOLGATE_MAGICEDEN_URL: "https://me.example" }), []);
    expect(withLocalMarketplace(own, local)).toBe(own);
    expect(withLocalMarketplace(defaults, undefined)).toBe(defaults);
  });
});
