/**
 * The collection feed in a fleet's Redis: each collection's log is a Redis Stream whose entry ids are the
 * event sequences (`<sequence>-0`), trimmed on every append to the retention period and the most events kept
 * (XADD MINID), so a cursor names the same event on every replica and after any restart. The log's epoch is
 * kept in Redis too: a cursor is refused as expired only when its events were trimmed, or when the store was
 * wiped (a new epoch), never because the replica that gave it out is gone.
 *
 * Beside the logs, what lets another replica take the following over where the last one stopped: the
 * collections followed (any replica's watch adds one; the lease holder reads them), each one's verified members
 * and size as of its newest event (updated by the same script that appends, so they never disagree with the
 * log), and the last block slot whose events were all appended. A block read again after the lease moved
 * appends nothing twice: the script keeps the idempotency keys of each collection's newest slot.
 *
 * Live readers: an append is announced on a channel (the collection's address); each replica reads a
 * collection's new entries once for all its watchers of it, and reads again every second in case an
 * announcement was missed (a reconnect), so the store's load grows with collections, not watchers.
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "../../store/redis.ts";
import type { FloorPrice } from "../market/market-source.ts";
import { cursorAhead, cursorExpired } from "./event-log.ts";
import type { EventLog, FeedEvent, FeedEventBody } from "./event-log.ts";
import { decodeFeedCursor, encodeFeedCursor } from "./feed-cursor.ts";

/** A followed collection's state as of its newest event. */
export interface FollowedState {
  readonly size: bigint;
  /** Verified members: asset id -> owner ("" when not known). */
  readonly members: Map<string, string>;
  /** The last floor in the log, when a floor was ever logged. */
  readonly floor?: FloorPrice;
}

/** The fleet's side of the feed: the shared log and what the lease holder needs to take over. */
export interface FeedStore extends EventLog {
  /**
   * Adds a collection to those the fleet follows.
   * @returns false when `max` are followed already (the caller refuses with COLLECTION_FEED_FULL).
   */
  want(collection: string, max: number): Promise<boolean>;
  /** The collections the fleet follows. */
  wanted(): Promise<string[]>;
  /** A collection's state as the log last left it; undefined before its first read (seed). */
  state(collection: string): Promise<FollowedState | undefined>;
  /** Records a collection's first read (its members and size), unless one is recorded already. */
  seed(collection: string, size: bigint, members: ReadonlyMap<string, string>): Promise<void>;
  /** Up to `count` events after sequence `after`, as kept (no cursor checks: a reader that keeps its own place). */
  read(collection: string, after: bigint, count: number): Promise<FeedEvent[]>;
  /** The last slot whose events were all appended (undefined before any). */
  lastSlot(): Promise<bigint | undefined>;
  setLastSlot(slot: bigint): Promise<void>;
  close(): void;
}

/** Options of {@link createRedisFeedStore}. */
export interface RedisFeedStoreOptions {
  redis: Redis;
  /** The chain's key prefix (chainKeyPrefix): every key shares its hash tag, so one script may touch them all. */
  prefix: string;
  retentionMs: number;
  maxEventsPerCollection: number;
  /** How often live readers read again without an announcement (default 1 s). */
  pollMs?: number;
  now?: () => number;
  onError?: (error: unknown) => void;
}

/**
 * Lua that drops the stream's (KEYS[1]) oldest entries while they are older than `cutoff` (a Lua expression of
 * epoch ms): appends and resumes both trim by age, so an old cursor is refused even with no new append.
 */
function ageTrim(cutoff: string): string {
  return `local cutoff = ${cutoff}
for round = 1, 8 do
  local rows = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 64)
  local drop = nil
  for _, row in ipairs(rows) do
    local t = nil
    for i = 1, #row[2], 2 do if row[2][i] == 't' then t = tonumber(row[2][i + 1]) end end
    if t ~= nil and t < cutoff then drop = row[1] else break end
  end
  if drop == nil then break end
  local dropSeq = tonumber(string.match(drop, '^(%d+)'))
  redis.call('XTRIM', KEYS[1], 'MINID', '=', (dropSeq + 1) .. '-0')
end
`;
}

// KEYS: 1 stream, 2 heads, 3 sizes, 4 members, 5 last slots, 6 keys seen in the last slot, 7 floors.
// ARGV: 1 collection, 2 event JSON, 3 now, 4 retention ms, 5 max events, 6 slot, 7 idempotency key ('' none),
//       8 kind, 9 asset, 10 owner, 11 verified size.
// Answers the new sequence, or false for a duplicate.
const APPEND = `
if ARGV[7] ~= '' then
  local slot = tonumber(ARGV[6])
  local last = tonumber(redis.call('HGET', KEYS[5], ARGV[1]) or '-1')
  if slot < last then return false end
  if slot == last then
    if redis.call('SISMEMBER', KEYS[6], ARGV[7]) == 1 then return false end
  else
    redis.call('DEL', KEYS[6])
    redis.call('HSET', KEYS[5], ARGV[1], ARGV[6])
  end
  redis.call('SADD', KEYS[6], ARGV[7])
end
local seq = redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
local keepFrom = seq - tonumber(ARGV[5]) + 1
if keepFrom < 1 then keepFrom = 1 end
redis.call('XADD', KEYS[1], 'MINID', '=', keepFrom .. '-0', seq .. '-0', 'e', ARGV[2], 't', ARGV[3])
-- Retention by age (a few rounds per append at most).
${ageTrim("tonumber(ARGV[3]) - tonumber(ARGV[4])")}redis.call('HSET', KEYS[3], ARGV[1], ARGV[11])
if ARGV[8] == 'MEMBER_ADDED' or ARGV[8] == 'MEMBER_TRANSFERRED' then
  if ARGV[9] ~= '' then redis.call('HSET', KEYS[4], ARGV[9], ARGV[10]) end
elseif ARGV[8] == 'MEMBER_REMOVED' then
  if ARGV[9] ~= '' then redis.call('HDEL', KEYS[4], ARGV[9]) end
elseif ARGV[8] == 'FLOOR_CHANGED' then
  redis.call('HSET', KEYS[7], ARGV[1], ARGV[2])
end
return seq`;

// The same age trim, alone (before a resume is checked, so an old cursor is refused even with no new append).
const TRIM = `
${ageTrim("tonumber(ARGV[1]) - tonumber(ARGV[2])")}return 1`;

// KEYS: 1 sizes, 2 members. ARGV: collection, size, then asset, owner pairs. Only when no size is recorded yet.
const SEED = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1`;

// KEYS: 1 the followed set. ARGV: collection, max. 1 when followed (now or already), 0 when full.
const WANT = `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1`;

interface Reader {
  listeners: Set<(event: FeedEvent) => void>;
  /** The last sequence handed to the listeners (undefined until first read). */
  last: bigint | undefined;
  reading: Promise<void> | undefined;
  again: boolean;
}

/** The feed's store in Redis. */
export async function createRedisFeedStore(options: RedisFeedStoreOptions): Promise<FeedStore> {
  const { redis } = options;
  const p = `${options.prefix}feed:`;
  const now = options.now ?? Date.now;
  const onError = options.onError ?? (() => {});
  const key = {
    epoch: `${p}epoch`,
    stream: (c: string) => `${p}log:${c}`,
    heads: `${p}heads`,
    sizes: `${p}sizes`,
    members: (c: string) => `${p}members:${c}`,
    lastSlots: `${p}last-slots`,
    seen: (c: string) => `${p}seen:${c}`,
    floors: `${p}floors`,
    wanted: `${p}collections`,
    slot: `${p}slot`,
    channel: `${p}appended`,
  };
  // The epoch is made once per store; every replica reads the same one.
  await redis.run("feed epoch", (c) => c.set(key.epoch, randomBytes(6).toString("base64url"), { NX: true }));
  const epoch = (await redis.run("feed epoch", (c) => c.get(key.epoch))) ?? "";

  const readers = new Map<string, Reader>();
  let subscribed: Promise<void> | undefined;
  const poll = setInterval(() => {
    for (const collection of readers.keys()) pull(collection);
  }, options.pollMs ?? 1000);
  poll.unref();

  function eventOf(collection: string, id: string, fields: Record<string, unknown>): FeedEvent {
    const sequence = BigInt(id.split("-")[0]!);
    return {
      ...decodeBody(String(fields.e)),
      sequence,
      cursor: encodeFeedCursor(collection, epoch, sequence),
      appendedAt: Number(fields.t),
    };
  }

  async function range(collection: string, after: bigint, count?: number): Promise<FeedEvent[]> {
    const rows = await redis.run("read the collection feed", (c) =>
      c.xRange(key.stream(collection), `(${after}-0`, "+", count === undefined ? undefined : { COUNT: count }),
    );
    return rows.map((row) => eventOf(collection, row.id, row.message));
  }

  async function head(collection: string): Promise<bigint> {
    const value = await redis.run("read the collection feed", (c) => c.hGet(key.heads, collection));
    return BigInt(value ?? 0);
  }

  /** Hands a collection's new entries to this replica's listeners, one read at a time. */
  function pull(collection: string): void {
    const reader = readers.get(collection);
    if (reader === undefined) return;
    if (reader.reading !== undefined) {
      reader.again = true;
      return;
    }
    reader.reading = (async () => {
      do {
        reader.again = false;
        reader.last ??= await head(collection);
        for (;;) {
          const events = await range(collection, reader.last, 1000);
          for (const event of events) {
            reader.last = event.sequence;
            for (const listener of reader.listeners) listener(event);
          }
          if (events.length < 1000) break;
        }
      } while (reader.again && readers.get(collection) === reader);
    })()
      .catch(onError)
      .finally(() => {
        reader.reading = undefined;
      });
  }

  return {
    async append(body) {
      const json = encodeBody(body);
      const idempotencyKey =
        body.kind === "FLOOR_CHANGED" ? "" : `${body.signature}:${body.instructionIndex}:${body.innerIndex ?? ""}`;
      const c = body.collection;
      const appendedAt = now();
      const sequence = await redis.run("append to the collection feed", (client) =>
        client.eval(APPEND, {
          keys: [key.stream(c), key.heads, key.sizes, key.members(c), key.lastSlots, key.seen(c), key.floors],
          arguments: [
            c,
            json,
            String(appendedAt),
            String(options.retentionMs),
            String(options.maxEventsPerCollection),
            String(body.slot),
            idempotencyKey,
            body.kind,
            body.asset,
            body.owner,
            String(body.verifiedSize),
          ],
        }),
      );
      if (sequence === null || sequence === undefined) return undefined;
      await redis.publish("announce a collection event", key.channel, c).catch(onError);
      const seq = BigInt(sequence as number);
      return { ...body, sequence: seq, cursor: encodeFeedCursor(c, epoch, seq), appendedAt };
    },
    async after(collection, cursor) {
      if (cursor === undefined || cursor === "") return [];
      const position = decodeFeedCursor(collection, cursor);
      await redis.run("trim the collection feed", (c) =>
        c.eval(TRIM, { keys: [key.stream(collection)], arguments: [String(now()), String(options.retentionMs)] }),
      );
      const [top, oldest] = await Promise.all([
        head(collection),
        redis.run("read the collection feed", (c) => c.xRange(key.stream(collection), "-", "+", { COUNT: 1 })),
      ]);
      const oldestCursor = oldest[0] === undefined ? "" : eventOf(collection, oldest[0].id, oldest[0].message).cursor;
      if (position.epoch !== epoch) throw cursorExpired(oldestCursor);
      if (position.sequence > top) throw cursorAhead();
      const firstKept = oldest[0] === undefined ? top + 1n : BigInt(oldest[0].id.split("-")[0]!);
      if (position.sequence + 1n < firstKept) throw cursorExpired(oldestCursor);
      return range(collection, position.sequence);
    },
    async newest(collection) {
      const rows = await redis.run("read the collection feed", (c) =>
        c.xRevRange(key.stream(collection), "+", "-", { COUNT: 1 }),
      );
      return rows[0] === undefined ? undefined : eventOf(collection, rows[0].id, rows[0].message);
    },
    head,
    read: range,
    cursorOf: (collection, sequence) => encodeFeedCursor(collection, epoch, sequence),
    subscribe(collection, listener) {
      subscribed ??= redis
        .subscribe(key.channel, (announced) => pull(announced))
        .catch((error: unknown) => {
          subscribed = undefined;
          onError(error);
        });
      let reader = readers.get(collection);
      if (reader === undefined) {
        reader = { listeners: new Set(), last: undefined, reading: undefined, again: false };
        readers.set(collection, reader);
        pull(collection);
      }
      reader.listeners.add(listener);
      return () => {
        reader.listeners.delete(listener);
        if (reader.listeners.size === 0 && readers.get(collection) === reader) readers.delete(collection);
      };
    },
    async want(collection, max) {
      const ok = await redis.run("follow a collection", (c) =>
        c.eval(WANT, { keys: [key.wanted], arguments: [collection, String(max)] }),
      );
      return ok === 1;
    },
    wanted: () => redis.run("read the followed collections", (c) => c.sMembers(key.wanted)),
    async state(collection) {
      const [size, members, floor] = await Promise.all([
        redis.run("read a followed collection", (c) => c.hGet(key.sizes, collection)),
        redis.run("read a followed collection", (c) => c.hGetAll(key.members(collection))),
        redis.run("read a followed collection", (c) => c.hGet(key.floors, collection)),
      ]);
      if (size === null || size === undefined) return undefined;
      const floorEvent = floor === null || floor === undefined ? undefined : decodeBody(floor);
      return {
        size: BigInt(size),
        members: new Map(Object.entries(members)),
        ...(floorEvent?.floor === undefined ? {} : { floor: floorEvent.floor }),
      };
    },
    async seed(collection, size, members) {
      const pairs: string[] = [];
      for (const [asset, owner] of members) pairs.push(asset, owner);
      await redis.run("record a followed collection", (c) =>
        c.eval(SEED, { keys: [key.sizes, key.members(collection)], arguments: [collection, String(size), ...pairs] }),
      );
    },
    async lastSlot() {
      const value = await redis.run("read the feed's slot", (c) => c.get(key.slot));
      return value === null || value === undefined ? undefined : BigInt(value);
    },
    async setLastSlot(slot) {
      await redis.run("record the feed's slot", (c) => c.set(key.slot, String(slot)));
    },
    close() {
      clearInterval(poll);
      readers.clear();
    },
  };
}

/** An event's body as stored: its bigints as decimal strings, dates as ISO strings. */
function encodeBody(body: FeedEventBody): string {
  const floorJson = (f: FloorPrice | undefined) =>
    f === undefined ? undefined : { ...f, lamports: String(f.lamports), updatedAt: f.updatedAt.toISOString() };
  return JSON.stringify({
    ...body,
    slot: String(body.slot),
    verifiedSize: String(body.verifiedSize),
    floor: floorJson(body.floor),
    previousFloor: floorJson(body.previousFloor),
  });
}

type StoredFloor = Omit<FloorPrice, "lamports" | "updatedAt"> & { lamports: string; updatedAt: string };

function decodeBody(text: string): FeedEventBody {
  const raw = JSON.parse(text) as Omit<FeedEventBody, "slot" | "verifiedSize" | "floor" | "previousFloor"> & {
    slot: string;
    verifiedSize: string;
    floor?: StoredFloor;
    previousFloor?: StoredFloor;
  };
  const floorOf = (f: StoredFloor | undefined): FloorPrice | undefined =>
    f === undefined ? undefined : { ...f, lamports: BigInt(f.lamports), updatedAt: new Date(f.updatedAt) };
  const { floor, previousFloor, ...rest } = raw;
  return {
    ...rest,
    slot: BigInt(raw.slot),
    verifiedSize: BigInt(raw.verifiedSize),
    ...(floor === undefined ? {} : { floor: floorOf(floor) }),
    ...(previousFloor === undefined ? {} : { previousFloor: floorOf(previousFloor) }),
  };
}
