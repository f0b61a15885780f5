/**
 * What every collection feed store must do, checked on two replicas' stores over one shared Redis (a single
 * server, a Cluster, Sentinel): the followed collections and their cap, a first read recorded once, appends
 * seen by the other replica with the same cursors and state, a block appended twice appending nothing twice,
 * the last slot published, and live readers on the other replica getting every event in order.
 */
import { expect } from "vitest";
import type { FeedEvent, FeedEventBody } from "../../../src/collections/feed/event-log.ts";
import type { FeedStore } from "../../../src/collections/feed/redis-feed-store.ts";

const COLLECTION = "8HV7NUeYyk2B4P5VY8qjptse9VaZ3J8qRq6W3NVB5NSJ";
const OTHER = "9PWJKDEDi5acq9Qopcx2UpR9Gu7sxRjxnHBETFj3tP21";

function event(slot: bigint, signature: string, extra: Partial<FeedEventBody> = {}): FeedEventBody {
  return {
    collection: COLLECTION,
    kind: "MEMBER_ADDED",
    slot,
    signature,
    instructionIndex: 0,
    verifiedSize: 3n,
    asset: `asset-${signature}`,
    compressed: false,
    owner: "owner",
    previousOwner: "",
    time: 1_800_000_000_000,
    instruction: "verify_collection",
    ...extra,
  };
}

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Checks `a` and `b`, two replicas' stores of one chain on an empty store. */
export async function checkFeedStore(a: FeedStore, b: FeedStore): Promise<void> {
  expect(await a.want(COLLECTION, 1)).toBe(true);
  expect(await b.want(COLLECTION, 1)).toBe(true);
  expect(await b.want(OTHER, 1)).toBe(false);
  expect(await a.wanted()).toEqual([COLLECTION]);

  expect(await b.state(COLLECTION)).toBeUndefined();
  await a.seed(
    COLLECTION,
    2n,
    new Map([
      ["m1", "o1"],
      ["m2", "o2"],
    ]),
  );
  // A second first read (another replica that raced) changes nothing.
  await b.seed(COLLECTION, 9n, new Map([["x", "y"]]));
  expect(await b.state(COLLECTION)).toEqual({
    size: 2n,
    members: new Map([
      ["m1", "o1"],
      ["m2", "o2"],
    ]),
  });

  const live: FeedEvent[] = [];
  const unsubscribe = b.subscribe(COLLECTION, (e) => live.push(e));
  // Let the live reader start (its first read of the head) before appending.
  await new Promise((r) => setTimeout(r, 300));
  const first = (await a.append(event(100n, "s1", { asset: "m3", verifiedSize: 3n })))!;
  expect(first.sequence).toBe(1n);
  await a.append(event(100n, "s1", { asset: "m3", instructionIndex: 1, kind: "MEMBER_REMOVED", verifiedSize: 2n }));
  await a.append(
    event(101n, "s2", { asset: "m1", kind: "MEMBER_TRANSFERRED", owner: "o9", previousOwner: "o1", verifiedSize: 2n }),
  );
  // The same block read again by the next lease holder: nothing appended twice, nor anything older.
  expect(await b.append(event(101n, "s2", { asset: "m1", kind: "MEMBER_TRANSFERRED", owner: "o9" }))).toBeUndefined();
  expect(await b.append(event(100n, "s1", { asset: "m3" }))).toBeUndefined();
  expect(await b.head(COLLECTION)).toBe(3n);

  const read = await b.after(COLLECTION, first.cursor);
  expect(read.map((e) => [e.sequence, e.kind, e.asset, e.verifiedSize])).toEqual([
    [2n, "MEMBER_REMOVED", "m3", 2n],
    [3n, "MEMBER_TRANSFERRED", "m1", 2n],
  ]);
  expect(read[1]!.cursor).toBe(a.cursorOf(COLLECTION, 3n));
  expect((await b.newest(COLLECTION))?.sequence).toBe(3n);
  expect(await b.state(COLLECTION)).toEqual({
    size: 2n,
    members: new Map([
      ["m1", "o9"],
      ["m2", "o2"],
    ]),
  });

  const floor = { lamports: 1_500_000_000n, sol: 1.5, updatedAt: new Date(1_800_000_000_000), source: "magiceden" };
  await a.append(event(0n, "", { kind: "FLOOR_CHANGED", asset: "", owner: "", verifiedSize: 2n, floor }));
  expect((await b.state(COLLECTION))?.floor).toEqual(floor);
  expect((await b.newest(COLLECTION))?.floor).toEqual(floor);

  await until(() => live.length === 4);
  expect(live.map((e) => e.sequence)).toEqual([1n, 2n, 3n, 4n]);
  unsubscribe();

  expect(await b.lastSlot()).toBeUndefined();
  await a.setLastSlot(101n);
  expect(await b.lastSlot()).toBe(101n);
}
