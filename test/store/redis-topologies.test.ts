/**
 * Every shared store on a real Redis Cluster (3 masters, 3 replicas) and a real Sentinel group (1 master,
 * 1 replica, 3 sentinels): the transaction store's scripts and transactions, its status channel, the bundle
 * store's scripts, the collection feed's store, leases, the
 * fee window's log, shared values and the fleet's rate counters; then a master lost (SIGKILL) and a clean
 * failover while sends are being recorded: every send is either recorded and readable afterwards, or refused
 * with STORE_UNAVAILABLE (never lost, never another error), and recording resumes by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSolgateError } from "../../src/errors.ts";
import { createRedisWindowLog } from "../../src/fees/window-log.ts";
import { createRateLimiter } from "../../src/server/rate-limit.ts";
import { createRedisLease } from "../../src/store/lease.ts";
import { chainKeyPrefix, connectRedis } from "../../src/store/redis.ts";
import type { Redis } from "../../src/store/redis.ts";
import { createRedisValues } from "../../src/store/shared-values.ts";
import { createRedisBundleStore } from "../../src/transactions/redis-bundle-store.ts";
import { createRedisTransactionStore } from "../../src/transactions/redis-transaction-store.ts";
import type { TrackedSend } from "../../src/transactions/transaction-store.ts";
import type { StatusRecord } from "../../src/transactions/transaction-status.ts";
import { checkBundleStore } from "../transactions/bundle-store-contract.ts";
import { createRedisFeedStore } from "../../src/collections/feed/redis-feed-store.ts";
import { checkFeedStore } from "../collections/feed/feed-store-contract.ts";
import { startRedisCluster, startRedisSentinel } from "./redis-topologies.ts";
import type { RedisTopologyServer } from "./redis-topologies.ts";

function send(signature: string): TrackedSend {
  return {
    signature,
    state: "submitted",
    updatedAt: new Date(1_700_000_000_000),
    wire: new Uint8Array([1, 2, 3, 250]),
    blockhash: "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N",
    lastValidBlockHeight: 1000n,
    expiryExact: true,
    commitment: "confirmed",
    expectedFee: 5000n,
    landed: false,
    lastBroadcastAt: 1_700_000_000_123,
    broadcasts: 1,
  };
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

const topologies: [string, () => Promise<RedisTopologyServer>][] = [
  ["a Redis Cluster", startRedisCluster],
  ["Sentinel", startRedisSentinel],
];

describe.each(topologies)("on %s", (_name, start) => {
  let server: RedisTopologyServer;
  const connections: Redis[] = [];
  const connect = async () => {
    const redis = await connectRedis({ topology: server.topology, commandTimeoutMs: 1000 });
    connections.push(redis);
    return redis;
  };
  let chains = 0;
  const chain = () => `t${++chains}`;

  beforeAll(async () => {
    server = await start();
  }, 90_000);
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
    await server?.stop();
  });

  it("runs the transaction store's scripts, transactions and status channel across two replicas", async () => {
    const prefix = chainKeyPrefix(chain());
    const [a, b] = await Promise.all([connect(), connect()]);
    const storeA = await createRedisTransactionStore({ redis: a, prefix });
    const storeB = await createRedisTransactionStore({ redis: b, prefix });
    const heard: StatusRecord[] = [];
    storeB.onPublished((r) => heard.push(r));

    expect(await storeA.insert(send("sig1"))).toBeUndefined();
    expect((await storeB.insert(send("sig1")))?.signature).toBe("sig1");
    await storeA.insert(send("sig2"));
    expect((await storeB.active()).map((s) => s.signature).sort()).toEqual(["sig1", "sig2"]);
    await storeB.put({ ...send("sig2"), state: "finalized" });
    expect((await storeA.active()).map((s) => s.signature)).toEqual(["sig1"]);
    // B found sig1 (and answered for it): A's forget keeps it. A send no one else found is forgotten everywhere.
    expect(await storeA.delete("sig1")).toBe(false);
    expect((await storeB.get("sig1"))?.signature).toBe("sig1");
    await storeA.insert(send("sig3"));
    expect(await storeA.delete("sig3")).toBe(true);
    expect(await storeB.get("sig3")).toBeUndefined();

    await storeA.publish({ signature: "sig2", state: "confirmed", updatedAt: new Date(), slot: 7n });
    await until(() => heard.length === 1);
    expect(heard[0]).toMatchObject({ signature: "sig2", state: "confirmed", slot: 7n });
  });

  it("runs the collection feed's store (its log, cursors, state and live readers) across two replicas", async () => {
    const prefix = chainKeyPrefix(chain());
    const [a, b] = await Promise.all([connect(), connect()]);
    const options = { prefix, retentionMs: 3_600_000, maxEventsPerCollection: 100, pollMs: 200 };
    const storeA = await createRedisFeedStore({ redis: a, ...options });
    const storeB = await createRedisFeedStore({ redis: b, ...options });
    await checkFeedStore(storeA, storeB);
    storeA.close();
    storeB.close();
  });

  it("runs the bundle store's scripts across two replicas", async () => {
    const prefix = chainKeyPrefix(chain());
    const [a, b] = await Promise.all([connect(), connect()]);
    await checkBundleStore(createRedisBundleStore({ redis: a, prefix }), createRedisBundleStore({ redis: b, prefix }));
  });

  it("holds a lease on one replica at a time, logs fee blocks, shares values and counts rate limits once", async () => {
    const prefix = chainKeyPrefix(chain());
    const [a, b] = await Promise.all([connect(), connect()]);
    const leaseA = createRedisLease({ redis: a, key: `${prefix}lease`, holder: "a" });
    const leaseB = createRedisLease({ redis: b, key: `${prefix}lease`, holder: "b" });
    expect([await leaseA.hold(), await leaseB.hold()]).toEqual([true, false]);
    await leaseA.release();

    const log = createRedisWindowLog({ redis: a, key: `${prefix}fee-blocks`, maxEntries: 10 });
    const reader = createRedisWindowLog({ redis: b, key: `${prefix}fee-blocks`, maxEntries: 10 });
    expect(log).toBeDefined();
    expect(reader).toBeDefined();

    const values = createRedisValues(a, `${prefix}count:`);
    await values.set("c", "42", 10_000);
    expect(await createRedisValues(b, `${prefix}count:`).get("c")).toBe("42");

    const limit = { points: 3, durationMs: 60_000, burst: 0 };
    const limits = new Map([["k", limit]]);
    const limiters = [a, b].map((redis) =>
      createRateLimiter({ limits, redis, keyPrefix: `solgate:ratelimit:${prefix}` }),
    );
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => limiters[i % 2].consume("k")));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(3);
  });

  for (const how of ["killMaster", "failover"] as const) {
    it(`loses no recorded send when ${how === "killMaster" ? "its master is killed" : "it fails over"} mid-run, and resumes by itself`, async () => {
      const prefix = chainKeyPrefix(chain());
      const redis = await connect();
      const store = await createRedisTransactionStore({ redis, prefix });
      const listener = await createRedisTransactionStore({ redis: await connect(), prefix });
      const heard: string[] = [];
      listener.onPublished((r) => heard.push(r.signature));
      const recorded: string[] = [];
      const refused: string[] = [];
      const other: unknown[] = [];
      let stop = false;
      let n = 0;
      const writer = (async () => {
        while (!stop) {
          const signature = `s${++n}`;
          try {
            await store.insert(send(signature));
            recorded.push(signature);
          } catch (error) {
            if (isSolgateError(error) && error.reason === "STORE_UNAVAILABLE") refused.push(signature);
            else other.push(error);
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      })();
      await until(() => recorded.length >= 50);
      await server[how](`${prefix}active`);
      const after = recorded.length;
      await until(() => recorded.length >= after + 50, 30_000);
      stop = true;
      await writer;

      expect(other).toEqual([]);
      // Status changes still reach the other replicas (their subscriptions followed the new master).
      await until(async () => {
        await store.publish({ signature: "after", state: "confirmed", updatedAt: new Date() }).catch(() => {});
        return heard.includes("after");
      });
      const active = new Set((await store.active()).map((s) => s.signature));
      expect(recorded.filter((s) => !active.has(s))).toEqual([]);
      // What was refused was refused, not half-taken into a broken state: each reads back as absent or whole.
      for (const s of refused) {
        const got = await store.get(s);
        if (got !== undefined) expect(got.signature).toBe(s);
      }
    }, 90_000);
  }
});
