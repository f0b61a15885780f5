/**
 * The collection feed's Redis store on a real Redis, as two replicas (two connections) see it: one log with the
 * same cursors on both, resumed on the other replica and after a reconnect; trimming by count and by age with
 * COLLECTION_CURSOR_EXPIRED (never a silent skip); a block appended twice (a lease that moved) appends nothing
 * twice; the followed collections' state kept in step with the log; live readers on another replica.
 * The Cluster and Sentinel topologies run the same store in test/store/redis-topologies.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkFeedStore } from "./feed-store-contract.ts";
import type { FeedEventBody } from "../../../src/collections/feed/event-log.ts";
import { createRedisFeedStore } from "../../../src/collections/feed/redis-feed-store.ts";
import { encodeFeedCursor } from "../../../src/collections/feed/feed-cursor.ts";
import { SolgateError } from "../../../src/errors.ts";
import { chainKeyPrefix, connectRedis } from "../../../src/store/redis.ts";
import type { Redis } from "../../../src/store/redis.ts";
import { startRedisServer } from "../../store/redis-server.ts";
import type { RedisServer } from "../../store/redis-server.ts";

const COLLECTION = "8HV7NUeYyk2B4P5VY8qjptse9VaZ3J8qRq6W3NVB5NSJ";

let server: RedisServer;
const connections: Redis[] = [];
async function connect(): Promise<Redis> {
  const redis = await connectRedis({ topology: { kind: "single", url: server.url } });
  connections.push(redis);
  return redis;
}
let chains = 0;
const prefix = () => chainKeyPrefix(`feed${++chains}`);

beforeAll(async () => {
  server = await startRedisServer();
}, 60_000);
afterAll(async () => {
  await Promise.all(connections.map((c) => c.close()));
  await server?.stop();
});

function body(slot: bigint, signature: string, extra: Partial<FeedEventBody> = {}): FeedEventBody {
  return {
    collection: COLLECTION,
    kind: "MEMBER_ADDED",
    slot,
    signature,
    instructionIndex: 0,
    verifiedSize: 1n,
    asset: `asset-${signature}`,
    compressed: false,
    owner: "owner",
    previousOwner: "",
    time: 1_800_000_000_000,
    instruction: "verify_collection",
    ...extra,
  };
}

async function refusal(promise: Promise<unknown>): Promise<SolgateError> {
  const e = await promise.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(SolgateError);
  return e as SolgateError;
}

describe("the collection feed's store on one Redis", () => {
  it("keeps the contract across two replicas (logs, cursors, state, live readers)", async () => {
    const p = prefix();
    const options = { prefix: p, retentionMs: 3_600_000, maxEventsPerCollection: 1000, pollMs: 200 };
    const a = await createRedisFeedStore({ redis: await connect(), ...options });
    const b = await createRedisFeedStore({ redis: await connect(), ...options });
    await checkFeedStore(a, b);
    a.close();
    b.close();
  });

  it("a cursor resumes on another replica and after a restart (a new connection and store), with the same events", async () => {
    const p = prefix();
    const options = { prefix: p, retentionMs: 3_600_000, maxEventsPerCollection: 1000 };
    const a = await createRedisFeedStore({ redis: await connect(), ...options });
    const first = (await a.append(body(10n, "s1")))!;
    await a.append(body(11n, "s2", { kind: "MEMBER_TRANSFERRED", owner: "new", previousOwner: "owner" }));
    a.close();
    const later = await createRedisFeedStore({ redis: await connect(), ...options });
    const resumed = await later.after(COLLECTION, first.cursor);
    expect(resumed.map((e) => [e.sequence, e.kind, e.owner, e.slot])).toEqual([[2n, "MEMBER_TRANSFERRED", "new", 11n]]);
    expect(resumed[0]!.cursor).toBe(later.cursorOf(COLLECTION, 2n));
    later.close();
  });

  it("trims to the most events kept and to the retention period: an older cursor is COLLECTION_CURSOR_EXPIRED with oldestCursor", async () => {
    let clock = 1_000_000;
    const byCount = await createRedisFeedStore({
      redis: await connect(),
      prefix: prefix(),
      retentionMs: 3_600_000,
      maxEventsPerCollection: 3,
    });
    for (let i = 1; i <= 5; i++) await byCount.append(body(BigInt(i), `c${i}`));
    const expired = await refusal(byCount.after(COLLECTION, byCount.cursorOf(COLLECTION, 1n)));
    expect(expired.reason).toBe("COLLECTION_CURSOR_EXPIRED");
    expect(expired.details.oldestCursor).toBe(byCount.cursorOf(COLLECTION, 3n));
    // The event just before the oldest kept one still loses nothing.
    expect((await byCount.after(COLLECTION, byCount.cursorOf(COLLECTION, 2n))).map((e) => e.sequence)).toEqual([
      3n,
      4n,
      5n,
    ]);
    byCount.close();

    const byAge = await createRedisFeedStore({
      redis: await connect(),
      prefix: prefix(),
      retentionMs: 10_000,
      maxEventsPerCollection: 1000,
      now: () => clock,
    });
    await byAge.append(body(1n, "t1"));
    await byAge.append(body(2n, "t2"));
    clock += 20_000;
    await byAge.append(body(3n, "t3"));
    const old = await refusal(byAge.after(COLLECTION, byAge.cursorOf(COLLECTION, 1n)));
    expect(old.reason).toBe("COLLECTION_CURSOR_EXPIRED");
    // With no append since, a resume still trims what aged out first.
    clock += 20_000;
    const all = await refusal(byAge.after(COLLECTION, byAge.cursorOf(COLLECTION, 2n)));
    expect(all.reason).toBe("COLLECTION_CURSOR_EXPIRED");
    expect(await byAge.after(COLLECTION, byAge.cursorOf(COLLECTION, 3n))).toEqual([]);
    byAge.close();
  });

  it("refuses a malformed cursor, another collection's, one ahead of the log (COLLECTION_CURSOR_INVALID) and another store's (EXPIRED)", async () => {
    const store = await createRedisFeedStore({
      redis: await connect(),
      prefix: prefix(),
      retentionMs: 3_600_000,
      maxEventsPerCollection: 10,
    });
    await store.append(body(1n, "x1"));
    expect((await refusal(store.after(COLLECTION, "bm9wZQ"))).reason).toBe("COLLECTION_CURSOR_INVALID");
    const other = "9PWJKDEDi5acq9Qopcx2UpR9Gu7sxRjxnHBETFj3tP21";
    expect((await refusal(store.after(COLLECTION, store.cursorOf(other, 1n)))).reason).toBe(
      "COLLECTION_CURSOR_INVALID",
    );
    expect((await refusal(store.after(COLLECTION, store.cursorOf(COLLECTION, 5n)))).reason).toBe(
      "COLLECTION_CURSOR_INVALID",
    );
    expect((await refusal(store.after(COLLECTION, encodeFeedCursor(COLLECTION, "gone", 1n)))).reason).toBe(
      "COLLECTION_CURSOR_EXPIRED",
    );
    store.close();
  });
});
