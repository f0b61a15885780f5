/**
 * The bundle stores' contract (bundle-store-contract.ts) on the memory store and on a real redis-server seen by
 * two replicas; the Redis store on a Cluster and through Sentinel is in test/store/redis-topologies.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSolgateError } from "../../src/errors.ts";
import { chainKeyPrefix, connectRedis } from "../../src/store/redis.ts";
import type { Redis } from "../../src/store/redis.ts";
import { createMemoryBundleStore } from "../../src/transactions/bundle-store.ts";
import { createRedisBundleStore } from "../../src/transactions/redis-bundle-store.ts";
import { startRedisServer } from "../store/redis-server.ts";
import type { RedisServer } from "../store/redis-server.ts";
import { checkBundleStore } from "./bundle-store-contract.ts";

describe("the memory bundle store", () => {
  it("keeps the contract", async () => {
    const store = createMemoryBundleStore();
    await checkBundleStore(store, store);
  });

  it("forgets the oldest bundle beyond its bound", async () => {
    const store = createMemoryBundleStore({ maxEntries: 2 });
    const bundle = (id: string) => ({ bundleId: id, signatures: [], blockhashes: [], sentAt: 0, accepted: true });
    for (const id of ["a", "b", "c"]) await store.insert(bundle(id));
    expect(await store.get("a")).toBeUndefined();
    expect((await store.get("c"))?.bundleId).toBe("c");
  });
});

describe("the Redis bundle store", () => {
  let server: RedisServer;
  const connections: Redis[] = [];
  const connect = async () => {
    const redis = await connectRedis({ topology: { kind: "single", url: server.url }, commandTimeoutMs: 1000 });
    connections.push(redis);
    return redis;
  };
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
    await server?.stop();
  });

  it("keeps the contract across two replicas", async () => {
    const prefix = chainKeyPrefix("bundles-contract");
    const [a, b] = await Promise.all([connect(), connect()]);
    await checkBundleStore(createRedisBundleStore({ redis: a, prefix }), createRedisBundleStore({ redis: b, prefix }));
  });

  it("keeps a bundle under the chain's hash tag for its time to live", async () => {
    const redis = await connect();
    const prefix = chainKeyPrefix("bundles-ttl");
    const store = createRedisBundleStore({ redis, prefix, ttlMs: 60_000 });
    await store.insert({ bundleId: "f".repeat(64), signatures: ["s"], blockhashes: ["h"], sentAt: 1, accepted: false });
    const ttl = await redis.client.pTTL(`solgate:{bundles-ttl}:bundle:${"f".repeat(64)}`);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it("answers STORE_UNAVAILABLE, never 'not recorded', when Redis does not answer", async () => {
    const redis = await connect();
    const store = createRedisBundleStore({ redis, prefix: chainKeyPrefix("bundles-down") });
    await server.kill();
    try {
      const error = await store.get("e".repeat(64)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isSolgateError(error) && error.reason).toBe("STORE_UNAVAILABLE");
    } finally {
      await server.start();
    }
  });
});
