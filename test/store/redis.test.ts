/** The Redis connection and leases, against a real redis-server that is killed and restarted. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSolgateError } from "../../src/errors.ts";
import { createRedisLease } from "../../src/store/lease.ts";
import { connectRedis } from "../../src/store/redis.ts";
import type { Redis } from "../../src/store/redis.ts";
import { startRedisServer } from "./redis-server.ts";
import type { RedisServer } from "./redis-server.ts";

let server: RedisServer;
const connections: Redis[] = [];

async function connect(commandTimeoutMs = 500): Promise<Redis> {
  const redis = await connectRedis({ topology: { kind: "single", url: server.url }, commandTimeoutMs });
  connections.push(redis);
  return redis;
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await Promise.all(connections.map((c) => c.close()));
  await server.stop();
});

describe("connectRedis", () => {
  it("refuses to start against a port where no Redis answers, naming the host but not the password", async () => {
    const url = "redis://user:secret@127.0.0.1:1";
    const error = await connectRedis({ topology: { kind: "single", url }, connectTimeoutMs: 1000 }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect(String(error?.message)).not.toContain("secret");
  });

  it("fails a command at once while Redis is down, as STORE_UNAVAILABLE, and recovers by itself when it returns", async () => {
    // A command timeout of 30 s: "at once" is then far from the slow path (waiting out the timeout).
    const redis = await connect(30_000);
    await redis.run("set", (c) => c.set("k", "v"));
    await server.kill();
    await until(() => !redis.isReady());
    const started = Date.now();
    const error = await redis
      .run("get", (c) => c.get("k"))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    // 10x a local round trip's worth of room, and a tenth of the command timeout it did not wait for.
    expect(Date.now() - started).toBeLessThan(3000);
    expect(isSolgateError(error) && error.reason).toBe("STORE_UNAVAILABLE");
    await server.start();
    await until(() => redis.isReady());
    expect(await redis.run("ping", (c) => c.ping())).toBe("PONG");
  });
});

describe("createRedisLease", () => {
  it("is held by one holder at a time, and passes to another once the holder stops renewing", async () => {
    const redis = await connect();
    const key = `lease-${Date.now()}`;
    const a = createRedisLease({ redis, key, holder: "a", ttlMs: 600 });
    const b = createRedisLease({ redis, key, holder: "b", ttlMs: 600 });
    expect(await a.hold()).toBe(true);
    expect(await b.hold()).toBe(false);
    // a renews while it keeps asking; b never gets it meanwhile.
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, 200));
      expect(await a.hold()).toBe(true);
      expect(await b.hold()).toBe(false);
    }
    // a dies (stops renewing): b holds within the TTL plus one check.
    await until(() => b.hold(), 2000);
    expect(await a.hold()).toBe(false);
  });

  it("is released at once on shutdown", async () => {
    const redis = await connect();
    const key = `lease-release-${Date.now()}`;
    const a = createRedisLease({ redis, key, holder: "a", ttlMs: 60_000 });
    const b = createRedisLease({ redis, key, holder: "b", ttlMs: 60_000 });
    expect(await a.hold()).toBe(true);
    await a.release();
    expect(await b.hold()).toBe(true);
  });
});
