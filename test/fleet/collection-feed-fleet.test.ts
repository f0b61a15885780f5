/**
 * The collection feed in a fleet of real processes: two gateways (`node src/main.ts`) on one real Redis over
 * the localnet world, fed by real traffic (a member of the generated collection moved back and forth with
 * signed SPL Token transfers). Watched over Server-Sent Events on both; the gateway holding the fee lease (the
 * one that reads blocks) is killed -9 while transfers go on; the other takes the lease over and reads on from
 * the last slot published: its client sees every transfer (0 lost, in order, any duplicate with the same
 * idempotency key), and the killed gateway's client resumes on the other with its last event id
 * (`Last-Event-ID`). A cursor the log trimmed away is refused on any replica with COLLECTION_CURSOR_EXPIRED.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainKeyPrefix, connectRedis } from "../../src/store/redis.ts";
import type { Redis } from "../../src/store/redis.ts";
import { startCollectionWorld } from "../collections/collection-world.ts";
import type { CollectionWorld } from "../collections/collection-world.ts";
import { createMemberCourier } from "../collections/feed/member-transfers.ts";
import type { MemberCourier, Move } from "../collections/feed/member-transfers.ts";
import { startRedisServer } from "../store/redis-server.ts";
import type { RedisServer } from "../store/redis-server.ts";
import { FLEET_KEY, startGatewayProcess } from "./fleet-harness.ts";
import type { GatewayProcess } from "./fleet-harness.ts";

const CHAIN = "feedfleet";
const PREFIX = chainKeyPrefix(CHAIN);
let world: CollectionWorld;
let server: RedisServer;
let redis: Redis;
let courier: MemberCourier;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  world = await startCollectionWorld(40);
  server = await startRedisServer();
  redis = await connectRedis({ topology: { kind: "single", url: server.url } });
  courier = await createMemberCourier(world.localnet.rpcUrl, world.manifest, 1);
}, 120_000);
afterAll(async () => {
  for (const fn of cleanups.reverse()) await fn().catch(() => {});
  await redis?.close();
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

function gateway(): Promise<GatewayProcess> {
  return startGatewayProcess({
    rpcUrl: world.localnet.rpcUrl,
    wsUrl: world.localnet.wsUrl,
    chain: CHAIN,
    redisUrl: server.url,
    extra: { SOLGATE_FEED_HEARTBEAT_MS: "1000" },
  });
}

/** One SSE event as a client gets it. */
interface SseEvent {
  id: string;
  event: string;
  data: { kind: string; sequence: string; cursor: string; slot: string; signature: string; instructionIndex: number };
}

/** An SSE watch: its events as they come, and whether the connection ended. */
interface SseWatch {
  events: SseEvent[];
  ended: boolean;
  status: number;
  close(): void;
}

async function watchSse(url: string, collection: string, lastEventId?: string): Promise<SseWatch> {
  const abort = new AbortController();
  const response = await fetch(`${url}/v1/${CHAIN}/collections/${collection}/events`, {
    headers: {
      authorization: `Bearer ${FLEET_KEY}`,
      ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
    },
    signal: abort.signal,
  });
  const watch: SseWatch = { events: [], ended: false, status: response.status, close: () => abort.abort() };
  if (response.status !== 200) {
    watch.ended = true;
    return watch;
  }
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of response.body! as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = new Map<string, string>();
        for (const line of block.split("\n")) {
          const colon = line.indexOf(":");
          if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
        }
        if (fields.has("data") && fields.has("id"))
          watch.events.push({
            id: fields.get("id")!,
            event: fields.get("event") ?? "",
            data: JSON.parse(fields.get("data")!) as SseEvent["data"],
          });
      }
    }
  })()
    .catch(() => {})
    .finally(() => {
      watch.ended = true;
    });
  return watch;
}

const keyOf = (e: SseEvent) => `${e.data.slot}:${e.data.signature}:${e.data.instructionIndex}`;

describe("the collection feed in a fleet of two gateway processes", () => {
  it("the lease holder killed -9 mid-traffic: the other reads on, 0 transfers lost, and a cursor resumes across replicas", async () => {
    const collection = world.generated.mint;
    // A starts alone, so it holds the fee lease (it reads blocks for the fleet); B joins after.
    const a = await gateway();
    cleanups.push(() => a.kill());
    await until(async () => (await redis.run("t", (c) => c.exists(`${PREFIX}fee-lease`))) === 1, "A's fee lease");
    const b = await gateway();
    cleanups.push(() => b.kill());

    const onA = await watchSse(a.url, collection);
    const onB = await watchSse(b.url, collection);
    cleanups.push(
      async () => onA.close(),
      async () => onB.close(),
    );
    expect([onA.status, onB.status]).toEqual([200, 200]);
    // The lease holder reads the collection for the fleet; events start from there.
    await until(
      async () => (await redis.run("t", (c) => c.hExists(`${PREFIX}feed:sizes`, collection))) === 1,
      "the collection's first read",
    );

    const moves: Move[] = [await courier.move(), await courier.move()];
    await until(() => onA.events.length >= 2 && onB.events.length >= 2, "the first transfers on both gateways");
    expect(onB.events.map((e) => e.id)).toEqual(onA.events.map((e) => e.id));

    await a.kill();
    for (let i = 0; i < 4; i++) moves.push(await courier.move());
    const wanted = new Set(moves.map((m) => m.signature));
    await until(
      () => new Set(onB.events.map((e) => e.data.signature)).size >= wanted.size,
      "every transfer on B after A was killed",
      60_000,
    );
    expect(new Set(onB.events.map((e) => e.data.signature))).toEqual(wanted);
    expect(onB.events.every((e) => e.event === "MEMBER_TRANSFERRED" && e.data.kind === "member-transferred")).toBe(
      true,
    );
    // In order without a gap; a duplicate (at least once) carries the same idempotency key as the first.
    const sequences = onB.events.map((e) => BigInt(e.data.sequence));
    expect(sequences).toEqual(sequences.map((_, i) => sequences[0]! + BigInt(i)));
    const keys = onB.events.map(keyOf);
    const duplicates = keys.length - new Set(keys).size;
    expect(new Set(onB.events.map((e) => e.data.signature)).size).toBe(keys.length - duplicates);
    console.log(`${moves.length} transfers, ${onB.events.length} events on B, ${duplicates} duplicates`);

    // A's client: its stream ended with A; it resumes on B from its last event id and gets the rest, in order.
    await until(() => onA.ended, "A's stream to end");
    const last = onA.events[onA.events.length - 1]!;
    const resumed = await watchSse(b.url, collection, last.id);
    cleanups.push(async () => resumed.close());
    const rest = moves.slice(onA.events.length).map((m) => m.signature);
    await until(() => resumed.events.length >= rest.length, "the resumed stream on B");
    expect(resumed.events.map((e) => e.data.signature)).toEqual(rest);
    expect(BigInt(resumed.events[0]!.data.sequence)).toBe(BigInt(last.data.sequence) + 1n);

    // A cursor the log no longer holds (trimmed here by hand, as retention would): refused on B as expired.
    await redis.run("t", (c) =>
      c.xTrim(`${PREFIX}feed:log:${collection}`, "MINID", `${BigInt(last.data.sequence) + 1n}-0`),
    );
    const first = onA.events[0]!;
    const expired = await fetch(`${b.url}/v1/${CHAIN}/collections/${collection}/events?cursor=${first.id}`, {
      headers: { authorization: `Bearer ${FLEET_KEY}` },
    });
    expect(expired.status).toBe(409);
    expect(((await expired.json()) as { code: string }).code).toBe("collection_cursor_expired");
  }, 180_000);
});
