/**
 * The fee window shared by a fleet, on a real localnet with background traffic and a real Redis: the
 * replica holding the fee lease reads blocks, another replays its log and makes no block reads, both
 * answer the same levels, and the other takes over when the holder stops.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import { createFeeMarket } from "../../src/fees/fee-market.ts";
import type { FeeMarket } from "../../src/fees/fee-market.ts";
import { createRedisWindowLog, decodeEntry, encodeEntry } from "../../src/fees/window-log.ts";
import { createRedisLease } from "../../src/store/lease.ts";
import { connectRedis } from "../../src/store/redis.ts";
import type { Redis } from "../../src/store/redis.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/index.ts";
import { startRedisServer } from "../store/redis-server.ts";
import type { RedisServer } from "../store/redis-server.ts";

let localnet: LocalnetHandle;
let server: RedisServer;
let redis: Redis;
const upstreams: Upstream[] = [];

beforeAll(async () => {
  [localnet, server] = await Promise.all([startLocalnet({ slotMs: 100, traffic: true }), startRedisServer()]);
  redis = await connectRedis({ topology: { kind: "single", url: server.url } });
});
afterAll(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
  await redis?.close();
  await Promise.all([localnet?.stop(), server?.stop()]);
});

/** A fee market of one replica, with its own upstream and a count of its block reads. */
function replica(name: string): { market: FeeMarket; blockReads: () => number } {
  let reads = 0;
  const upstream = createUpstream({
    chain: "fleet",
    rpcUrls: [localnet.rpcUrl],
    metrics: { onCall: (method) => (reads += method === "getBlock" || method === "getSlot" ? 1 : 0), onResult() {} },
  });
  upstreams.push(upstream);
  const market = createFeeMarket({
    upstream,
    pollIntervalMs: 100,
    replication: {
      lease: createRedisLease({ redis, key: "solgate:fleet:fee-lease", holder: name, ttlMs: 1000 }),
      log: createRedisWindowLog({ redis, key: "solgate:fleet:fee-blocks", maxEntries: 300 }),
      reachable: () => redis.isReady(),
    },
  });
  return { market, blockReads: () => reads };
}

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the fee window shared through Redis", () => {
  it("round-trips an entry: prices, write locks and the follower's progress", () => {
    const state = {
      tipSlot: 9n,
      nextSlot: 10n,
      consecutiveFailures: 0,
      refused: false,
      lastError: undefined,
      lastBlockAt: 5,
      lastBlockSlot: 9n,
      lastMoveAt: 6,
      droppedSlots: 0n,
      firstSlot: 1n,
    };
    const entry = {
      kind: "block" as const,
      slot: 9n,
      transactions: [
        { price: 2n ** 63n, writable: ["A", "B"] },
        { price: 0n, writable: ["B"] },
      ],
      state,
    };
    expect(decodeEntry(encodeEntry(entry))).toEqual(entry);
  });

  it("is read from blocks by the lease holder only; the other replica answers the same levels, then takes over", async () => {
    const a = replica("a");
    a.market.start();
    await until(() => a.market.global().source === "blocks");
    const b = replica("b");
    b.market.start();
    await until(() => b.market.global().source === "blocks");
    // Both answer from the same window: compare at a moment when both have seen the same newest slot.
    await until(() => a.market.global().slot === b.market.global().slot && a.market.global().slot > 0n);
    expect(b.market.global().priority).toEqual(a.market.global().priority);
    const accounts = ["So11111111111111111111111111111111111111112"];
    expect(b.market.forAccounts(accounts).priority).toEqual(a.market.forAccounts(accounts).priority);
    expect(b.blockReads()).toBe(0);
    expect(a.blockReads()).toBeGreaterThan(0);

    await a.market.stop();
    const slotAtStop = b.market.global().slot;
    await until(() => b.blockReads() > 0 && b.market.global().slot > slotAtStop + 5n);
    expect(b.market.global().source).toBe("blocks");
    await b.market.stop();
  }, 60_000);
});
