/** What a fleet shares besides sends: costly counts and the marketplaces' call budgets, on a real Redis. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSharedMarketBudget } from "../../src/collections/market/market-budget.ts";
import { connectRedis } from "../../src/store/redis.ts";
import type { Redis } from "../../src/store/redis.ts";
import { createRedisValues } from "../../src/store/shared-values.ts";
import { startRedisServer } from "./redis-server.ts";
import type { RedisServer } from "./redis-server.ts";

let server: RedisServer;
let a: Redis;
let b: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  [a, b] = await Promise.all([
    connectRedis({ topology: { kind: "single", url: server.url }, commandTimeoutMs: 300 }),
    connectRedis({ topology: { kind: "single", url: server.url }, commandTimeoutMs: 300 }),
  ]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await server?.stop();
});

describe("shared values", () => {
  it("are seen by every replica until they expire, and never fail a caller while Redis is away", async () => {
    const one = createRedisValues(a, "test:count:");
    const two = createRedisValues(b, "test:count:");
    await one.set("collection", "10000", 300);
    expect(await two.get("collection")).toBe("10000");
    await new Promise((r) => setTimeout(r, 400));
    expect(await two.get("collection")).toBeUndefined();
  });
});

describe("the marketplaces' shared budget", () => {
  it("is one budget for two replicas: 2 calls a second plus a burst of 2, not twice that", async () => {
    const [one, two] = [createSharedMarketBudget(a), createSharedMarketBudget(b)];
    const allowed: boolean[] = [];
    for (let i = 0; i < 5; i++) allowed.push(await one("magiceden"), await two("magiceden"));
    expect(allowed.filter(Boolean)).toHaveLength(4);
    // Another marketplace has a budget of its own.
    expect(await one("tensor")).toBe(true);
  });
});
