/**
 * The collection feed in a fleet, in process: two feeds (two replicas) on one real Redis with the real fee lease,
 * over the real localnet world, fed by real traffic (the demo wallet's member moved back and forth with signed
 * SPL Token transfers: member-transfers.ts). Only the lease holder reads blocks; both serve the same log; when
 * the holder stops without a goodbye, the other takes the lease over and reads on from the last slot published,
 * so every transfer is an event (0 lost), and a cursor from one replica resumes on the other. Then the Geyser
 * path: a feed fed by the localnet's real Yellowstone stream, applying blocks as their slots are confirmed,
 * with no getBlock read while the stream flows. And webhooks in a fleet: registered on one replica, listed on
 * the other, delivered by the lease holder; its death mid-retry loses nothing (the other replica goes on with
 * the same delivery and the same webhook-id, in order), and a 410 disables the webhook for the fleet.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCollections } from "../../../src/collections/collections.ts";
import { createCollectionFeed } from "../../../src/collections/feed/collection-feed.ts";
import type { CollectionFeed, WatchMessage } from "../../../src/collections/feed/collection-feed.ts";
import { createMemoryEventLog } from "../../../src/collections/feed/event-log.ts";
import type { FeedEvent } from "../../../src/collections/feed/event-log.ts";
import { createRedisFeedStore } from "../../../src/collections/feed/redis-feed-store.ts";
import type { FeedStore } from "../../../src/collections/feed/redis-feed-store.ts";
import { createRedisLease } from "../../../src/store/lease.ts";
import { chainKeyPrefix, connectRedis } from "../../../src/store/redis.ts";
import type { Redis } from "../../../src/store/redis.ts";
import { createUpstream } from "../../../src/upstream/upstream.ts";
import type { Upstream } from "../../../src/upstream/upstream.ts";
import { startRedisServer } from "../../store/redis-server.ts";
import type { RedisServer } from "../../store/redis-server.ts";
import { startCollectionWorld } from "../collection-world.ts";
import type { CollectionWorld } from "../collection-world.ts";
import { createMemberCourier } from "./member-transfers.ts";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { createRedisWebhooks } from "../../../src/collections/feed/redis-webhooks.ts";
import type { WebhookDeliveryInfo, Webhooks } from "../../../src/collections/feed/webhooks.ts";
import { SolgateError } from "../../../src/errors.ts";
import type { MemberCourier } from "./member-transfers.ts";

let world: CollectionWorld;
let server: RedisServer;
let courier: MemberCourier;
const cleanups: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  world = await startCollectionWorld(40);
  server = await startRedisServer();
  courier = await createMemberCourier(world.localnet.rpcUrl, world.manifest, 0);
}, 120_000);
afterAll(async () => {
  for (const fn of cleanups.reverse()) await fn();
  await server?.stop();
  await world?.stop();
});

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not in time`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** An upstream to the localnet counting its calls by method. */
function countingUpstream(geyser = false): { upstream: Upstream; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const upstream = createUpstream({
    chain: "localnet",
    rpcUrls: [world.localnet.rpcUrl],
    maxRetries: 0,
    ...(geyser ? { geyserUrl: world.localnet.geyserUrl! } : {}),
    metrics: { onCall: (method) => calls.set(method, (calls.get(method) ?? 0) + 1), onResult() {} },
  });
  cleanups.push(() => upstream.close());
  return { upstream, calls };
}

/** Collects a watch's events as they come. */
function collect(stream: AsyncIterable<WatchMessage>): FeedEvent[] {
  const events: FeedEvent[] = [];
  void (async () => {
    for await (const message of stream) if ("event" in message) events.push(message.event);
  })().catch(() => {});
  return events;
}

const signatures = (events: readonly FeedEvent[]) => new Set(events.map((e) => e.signature));

describe("the collection feed in a fleet of two replicas", () => {
  let redisA: Redis;
  let redisB: Redis;

  it("only the lease holder reads blocks; after it stops without a goodbye the other reads on from the last slot published: 0 transfers lost", async () => {
    const collection = world.generated.mint;
    const prefix = chainKeyPrefix("feedfleet");
    redisA = await connectRedis({ topology: { kind: "single", url: server.url } });
    redisB = await connectRedis({ topology: { kind: "single", url: server.url } });
    cleanups.push(
      () => redisA.close(),
      () => redisB.close(),
    );
    const storeOptions = { prefix, retentionMs: 3_600_000, maxEventsPerCollection: 1000, pollMs: 200 };
    const stores: FeedStore[] = [
      await createRedisFeedStore({ redis: redisA, ...storeOptions }),
      await createRedisFeedStore({ redis: redisB, ...storeOptions }),
    ];
    for (const s of stores) cleanups.push(() => s.close());
    const replica = (i: number) => {
      const { upstream, calls } = countingUpstream();
      const lease = createRedisLease({
        redis: [redisA, redisB][i]!,
        key: `${prefix}fee-lease`,
        holder: `replica-${i}`,
        ttlMs: 5000,
      });
      const feed: CollectionFeed = createCollectionFeed({
        upstream,
        collections: createCollections({ upstream }),
        fleet: { store: stores[i]!, lease },
        pollMs: 100,
        heartbeatMs: 1000,
      });
      cleanups.push(() => feed.stop());
      return { feed, calls, lease };
    };
    // A starts first and takes the lease at its first turn; B joins after.
    const a = replica(0);
    await until(() => a.lease.hold(), "A's lease");
    const b = replica(1);
    const stop = new AbortController();
    cleanups.push(() => stop.abort());

    // A, the lease holder, reads the collection for the fleet.
    const onA = collect(await a.feed.watch(collection, "", [], stop.signal));
    await until(async () => (await stores[0]!.state(collection)) !== undefined, "the collection read");
    const onB = collect(await b.feed.watch(collection, "", [], stop.signal));
    const moves = [await courier.move(), await courier.move()];
    await until(() => onA.length >= 2 && onB.length >= 2, "the first two transfers on both replicas");
    expect(onB.slice(0, 2)).toMatchObject(
      moves.map((m) => ({ kind: "MEMBER_TRANSFERRED", asset: courier.mint, signature: m.signature, owner: m.to })),
    );
    expect(onB.map((e) => e.cursor)).toEqual(onA.map((e) => e.cursor));
    // The replica without the lease read no block.
    expect(b.calls.get("getBlock") ?? 0).toBe(0);
    expect(a.calls.get("getBlock") ?? 0).toBeGreaterThan(0);

    // A stops without giving the lease up (as a killed process would), then more transfers land at once.
    const lastOnA = onA[onA.length - 1]!;
    await a.feed.stop();
    moves.push(await courier.move());
    // That one landed while nobody led (the lease has not lapsed yet): only reading on from the last slot
    // published finds it.
    expect(b.calls.get("getBlock") ?? 0).toBe(0);
    for (let i = 0; i < 2; i++) moves.push(await courier.move());
    await until(() => signatures(onB).size >= moves.length, "every transfer on the replica that took over", 45_000);
    expect(signatures(onB)).toEqual(new Set(moves.map((m) => m.signature)));
    // In order, no gap; a duplicate would carry the same idempotency key (none here: a block read twice
    // appends nothing twice).
    expect(onB.map((e) => e.sequence)).toEqual(onB.map((_, i) => BigInt(i + 1)));
    expect(b.calls.get("getBlock") ?? 0).toBeGreaterThan(0);

    // A's client resumes on B with its last cursor: the events since, nothing missing, nothing before.
    const resumed = collect(await b.feed.watch(collection, lastOnA.cursor, [], stop.signal));
    await until(() => resumed.length >= moves.length - 2, "the resumed watch");
    expect(resumed.map((e) => e.signature)).toEqual(moves.slice(2).map((m) => m.signature));
  }, 120_000);
});

describe("the collection feed on Geyser", () => {
  it("applies the stream's blocks as their slots are confirmed, with no getBlock while it flows", async () => {
    const { upstream, calls } = countingUpstream(true);
    const feed = createCollectionFeed({
      upstream,
      collections: createCollections({ upstream }),
      log: createMemoryEventLog({ retentionMs: 3_600_000, maxEventsPerCollection: 1000 }),
      stream: { blocks: upstream.geyserBlocks!, confirmed: upstream.geyser! },
      // The follower's own check comes once a minute: the events must come from the stream.
      streamCheckMs: 60_000,
      pollMs: 100,
      heartbeatMs: 1000,
    });
    cleanups.push(() => feed.stop());
    const stop = new AbortController();
    cleanups.push(() => stop.abort());
    const events = collect(await feed.watch(world.generated.mint, "", [], stop.signal));
    // Past the first reads (the backfill, and the slots between it and the stream's first block).
    await until(() => upstream.geyserBlocks!.healthy() && feed.status().blocks >= 10, "blocks from the stream");
    const readsBefore = calls.get("getBlock") ?? 0;
    const moves = [await courier.move(), await courier.move()];
    // (A transfer of the test before, confirmed as the following began, may come first: only these count.)
    const mine = () => events.filter((e) => moves.some((m) => m.signature === e.signature));
    await until(() => mine().length >= 2, "the transfers from the stream");
    expect(mine().map((e) => e.signature)).toEqual(moves.map((m) => m.signature));
    expect(calls.get("getBlock") ?? 0).toBe(readsBefore);
  }, 60_000);
});

describe("the collection feed on Geyser without the status stream", () => {
  it("releases the stream's blocks by the node's confirmed slot (a fleet whose status stream is another replica's): no getBlock", async () => {
    const { upstream, calls } = countingUpstream(true);
    const feed = createCollectionFeed({
      upstream,
      collections: createCollections({ upstream }),
      log: createMemoryEventLog({ retentionMs: 3_600_000, maxEventsPerCollection: 1000 }),
      // No confirmed slot ever comes from the status stream.
      stream: { blocks: upstream.geyserBlocks!, confirmed: { onBlock: () => () => {} } },
      streamCheckMs: 60_000,
      pollMs: 100,
      heartbeatMs: 1000,
    });
    cleanups.push(() => feed.stop());
    const stop = new AbortController();
    cleanups.push(() => stop.abort());
    const events = collect(await feed.watch(world.generated.mint, "", [], stop.signal));
    await until(() => upstream.geyserBlocks!.healthy() && feed.status().blocks >= 10, "blocks from the stream");
    const readsBefore = calls.get("getBlock") ?? 0;
    const moves = [await courier.move(), await courier.move()];
    // (A transfer of the test before, confirmed as the following began, may come first: only these count.)
    const mine = () => events.filter((e) => moves.some((m) => m.signature === e.signature));
    await until(() => mine().length >= 2, "the transfers from the stream");
    expect(mine().map((e) => e.signature)).toEqual(moves.map((m) => m.signature));
    expect(calls.get("getBlock") ?? 0).toBe(readsBefore);
  }, 60_000);
});

describe("webhooks in a fleet of two replicas", () => {
  it("a delivery being retried outlives the replica trying it: the other goes on with the same webhook-id, in order; 410 disables", async () => {
    const collection = world.generated.mint;
    const prefix = chainKeyPrefix("whfleet");
    const received: { id: string; body: string; headers: Record<string, string> }[] = [];
    const answers: number[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({
          id: String(req.headers["webhook-id"]),
          body: Buffer.concat(chunks).toString(),
          headers: req.headers as Record<string, string>,
        });
        res.writeHead(answers.shift() ?? 200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => receiver.close(resolve)));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const replica = async (i: number) => {
      const redis = await connectRedis({ topology: { kind: "single", url: server.url } });
      cleanups.push(() => redis.close());
      const store = await createRedisFeedStore({
        redis,
        prefix,
        retentionMs: 3_600_000,
        maxEventsPerCollection: 1000,
        pollMs: 200,
      });
      cleanups.push(() => store.close());
      const lease = createRedisLease({ redis, key: `${prefix}fee-lease`, holder: `wh-${i}`, ttlMs: 3000 });
      const { upstream } = countingUpstream();
      const feed = createCollectionFeed({
        upstream,
        collections: createCollections({ upstream }),
        fleet: { store, lease },
        pollMs: 100,
      });
      cleanups.push(() => feed.stop());
      const webhooks: Webhooks = createRedisWebhooks({
        redis,
        prefix,
        store,
        lease,
        feed,
        allowPrivateUrls: true,
        firstBackoffMs: 300,
        maxBackoffMs: 600,
        pollMs: 100,
      });
      cleanups.push(() => webhooks.stop());
      return { feed, webhooks, lease, store };
    };
    // A starts first and takes the lease at its first turn (it reads blocks and delivers); B joins after.
    const a = await replica(0);
    await until(() => a.lease.hold(), "A's lease");
    const b = await replica(1);

    const { webhook, secret } = await b.webhooks.create("key-a", { url, collections: [collection], kinds: [] });
    expect((await a.webhooks.list("key-a")).map((w) => w.id)).toEqual([webhook.id]);
    // Another key's webhook does not exist for it, on either replica.
    expect(await a.webhooks.list("key-b")).toEqual([]);
    const refused = await b.webhooks.remove("key-b", webhook.id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(SolgateError);
    expect((refused as SolgateError).reason).toBe("WEBHOOK_NOT_FOUND");
    // The other refusals, in a fleet: a URL that is not delivered to, an address that is no collection (for a
    // webhook and for a watch), a malformed cursor.
    const reasonOf = (promise: Promise<unknown>) =>
      promise.then(
        () => "accepted",
        (e: unknown) => (e instanceof SolgateError ? e.reason : String(e)),
      );
    const spoof = world.manifest.spoofs.unverifiedMembers[0]!;
    const probe = new AbortController();
    cleanups.push(() => probe.abort());
    expect(
      await reasonOf(b.webhooks.create("key-a", { url: "ftp://x/hook", collections: [collection], kinds: [] })),
    ).toBe("WEBHOOK_URL_REFUSED");
    expect(await reasonOf(b.webhooks.create("key-a", { url, collections: [spoof], kinds: [] }))).toBe("NOT_FOUND");
    expect(await reasonOf(b.feed.watch(spoof, "", [], probe.signal))).toBe("NOT_FOUND");
    expect(await reasonOf(b.feed.watch(collection, "bm9wZQ", [], probe.signal))).toBe("COLLECTION_CURSOR_INVALID");

    const stop = new AbortController();
    cleanups.push(() => stop.abort());
    // A serves no watch, yet as the lease holder it reads the collection B's registration asked for, and follows it.
    await until(async () => (await a.store.state(collection)) !== undefined, "the collection's first read");
    // A transfer confirmed just as the following began (an earlier test's) may be logged: let it be delivered.
    await new Promise((r) => setTimeout(r, 1500));
    received.length = 0;
    // The receiver is down (500) for a while: the first delivery is retried by A.
    answers.push(...Array.from({ length: 20 }, () => 500));
    const moves = [await courier.move(), await courier.move()];
    await until(() => received.length >= 2, "A's first attempts");
    // A dies (no goodbye: its lease lapses); the receiver comes back; B takes the deliveries over.
    a.webhooks.stop();
    await a.feed.stop();
    answers.length = 0;
    const firstId = received[0]!.id;
    let delivered: WebhookDeliveryInfo[] = [];
    await until(
      async () => {
        const signatures = new Set(moves.map((m) => m.signature));
        delivered = (await b.webhooks.deliveries("key-a", webhook.id, 10, "")).deliveries.filter((d) =>
          signatures.has(d.event.signature),
        );
        return delivered.length === 2 && delivered.every((d) => d.state === "DELIVERED");
      },
      "both deliveries by the replica that took over",
      60_000,
    );
    // Newest first: the second transfer, then the first (retried across the lease move).
    expect(delivered.map((d) => d.event.signature)).toEqual([moves[1]!.signature, moves[0]!.signature]);
    expect(delivered[1]!.id).toBe(firstId);
    expect(delivered[1]!.attempts).toBeGreaterThanOrEqual(3);
    const successes = received.filter((r) => r.id === firstId).length;
    expect(successes).toBeGreaterThanOrEqual(3);
    // In order at the receiver: nothing of the second before the first got through.
    const secondAt = received.findIndex((r) => r.id === delivered[0]!.id);
    expect(received.slice(secondAt).some((r) => r.id === firstId)).toBe(false);
    // Signed as Standard Webhooks says, with the secret shown at creation.
    const last = received[received.length - 1]!;
    expect(new Webhook(secret).verify(last.body, last.headers)).toMatchObject({ signature: moves[1]!.signature });

    // A receiver answering 410 disables the webhook for the whole fleet.
    answers.push(410);
    await courier.move();
    await until(
      async () => (await b.webhooks.list("key-a"))[0]?.enabled === false,
      "the webhook disabled after a 410",
      30_000,
    );
  }, 120_000);
});
