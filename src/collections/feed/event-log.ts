/**
 * The collection feed's log, per collection: every event in order, numbered from 1 without gaps, kept for
 * the retention period (at least 24 hours by default) within a bound on events per collection, so memory
 * stays bounded whatever the chain does. Readers get what follows a sequence; a sequence older than what
 * is kept is refused (COLLECTION_CURSOR_EXPIRED), never skipped over. Live readers are woken on append.
 *
 * Two kinds: this process's memory (here: its epoch is new on every start, so a cursor from before a restart
 * is recognised as pointing into a log that is gone), and a fleet's Redis Streams (redis-feed-store.ts), whose
 * epoch lives in Redis, so a cursor stays good across restarts and replicas.
 */
import { randomBytes } from "node:crypto";
import { SolgateError } from "../../errors.ts";
import type { FloorPrice } from "../market/market-source.ts";
import { decodeFeedCursor, encodeFeedCursor } from "./feed-cursor.ts";

/** An event's content, as the feed makes it; the log adds its sequence and cursor. */
export interface FeedEventBody {
  readonly collection: string;
  readonly kind: "MEMBER_ADDED" | "MEMBER_REMOVED" | "MEMBER_TRANSFERRED" | "FLOOR_CHANGED";
  readonly slot: bigint;
  readonly signature: string;
  readonly instructionIndex: number;
  readonly innerIndex?: number;
  readonly verifiedSize: bigint;
  readonly asset: string;
  readonly compressed: boolean;
  readonly owner: string;
  readonly previousOwner: string;
  /** Unix ms of the block, or of when a floor change was seen. */
  readonly time: number | undefined;
  readonly instruction: string;
  /** FLOOR_CHANGED: the floor now, and the one before (absent the first time one is seen). */
  readonly floor?: FloorPrice;
  readonly previousFloor?: FloorPrice;
}

/** An event in the log. */
export interface FeedEvent extends FeedEventBody {
  readonly sequence: bigint;
  readonly cursor: string;
  /** When it was appended (ms since epoch): what retention counts from. */
  readonly appendedAt: number;
}

/** Options of {@link createMemoryEventLog}. */
export interface EventLogOptions {
  /** How long events are kept (ms). */
  retentionMs: number;
  /** The most events kept per collection; older ones go first even within the retention period. */
  maxEventsPerCollection: number;
  now?: () => number;
}

/** The collections' logs. */
export interface EventLog {
  /**
   * Appends an event; resolves to it, or to undefined when the log already holds an event with its idempotency
   * key (slot, signature, instruction indexes: a block read again after a lease moved).
   */
  append(body: FeedEventBody): Promise<FeedEvent | undefined>;
  /**
   * The events after `cursor` (all kept ones after it; none when undefined, which means "from now").
   * @throws SolgateError COLLECTION_CURSOR_INVALID (malformed, another collection's, ahead of the log) or
   *   COLLECTION_CURSOR_EXPIRED (before the oldest kept event, or another epoch's).
   */
  after(collection: string, cursor: string | undefined): Promise<FeedEvent[]>;
  /** The newest event of a collection kept, if any. */
  newest(collection: string): Promise<FeedEvent | undefined>;
  /** The sequence of the last event ever appended to a collection (0: none). */
  head(collection: string): Promise<bigint>;
  /** The cursor after event `sequence` of `collection`. */
  cursorOf(collection: string, sequence: bigint): string;
  /**
   * Calls `listener` with events appended to `collection` from about now on, in order (a listener may see a
   * gap at its very start, or after the store was away: sequences say so, and {@link after} fills it).
   * Returns the unsubscribe.
   */
  subscribe(collection: string, listener: (event: FeedEvent) => void): () => void;
}

/** A log in this process's memory, with its epoch (new on every start). */
export interface MemoryEventLog extends EventLog {
  readonly epoch: string;
}

/** The error of a cursor before the oldest event kept. */
export function cursorExpired(oldestCursor: string): SolgateError {
  return new SolgateError(
    "COLLECTION_CURSOR_EXPIRED",
    "the cursor points before the oldest event the feed still holds; re-read the collection and watch from oldestCursor",
    { field: "cursor", oldestCursor },
  );
}

/** The error of a cursor ahead of the log. */
export function cursorAhead(): SolgateError {
  return new SolgateError("COLLECTION_CURSOR_INVALID", "the cursor is ahead of the collection's feed", {
    field: "cursor",
  });
}

interface CollectionLog {
  events: FeedEvent[];
  /** The sequence of the last event ever appended (0: none). */
  head: bigint;
  listeners: Set<(event: FeedEvent) => void>;
}

/** A log in this process's memory. */
export function createMemoryEventLog(options: EventLogOptions): MemoryEventLog {
  const now = options.now ?? Date.now;
  const epoch = randomBytes(6).toString("base64url");
  const logs = new Map<string, CollectionLog>();
  const logOf = (collection: string): CollectionLog => {
    let log = logs.get(collection);
    if (log === undefined) {
      log = { events: [], head: 0n, listeners: new Set() };
      logs.set(collection, log);
    }
    return log;
  };
  const trim = (log: CollectionLog): void => {
    const oldestKept = now() - options.retentionMs;
    let drop = Math.max(0, log.events.length - options.maxEventsPerCollection);
    while (drop < log.events.length && log.events[drop]!.appendedAt < oldestKept) drop++;
    if (drop > 0) log.events.splice(0, drop);
  };

  return {
    epoch,
    async append(body) {
      const log = logOf(body.collection);
      const sequence = log.head + 1n;
      const event: FeedEvent = {
        ...body,
        sequence,
        cursor: encodeFeedCursor(body.collection, epoch, sequence),
        appendedAt: now(),
      };
      log.head = sequence;
      log.events.push(event);
      trim(log);
      for (const listener of log.listeners) listener(event);
      return event;
    },
    async after(collection, cursor) {
      if (cursor === undefined || cursor === "") return [];
      const position = decodeFeedCursor(collection, cursor);
      const log = logOf(collection);
      trim(log);
      const oldest = log.events[0];
      const expired = () => cursorExpired(oldest === undefined ? "" : oldest.cursor);
      if (position.epoch !== epoch) throw expired();
      if (position.sequence > log.head) throw cursorAhead();
      // Nothing kept is missing when the cursor's event is the newest one, or the one before the oldest kept.
      const firstKept = oldest?.sequence ?? log.head + 1n;
      if (position.sequence + 1n < firstKept) throw expired();
      return log.events.filter((e) => e.sequence > position.sequence);
    },
    async newest(collection) {
      const events = logs.get(collection)?.events;
      return events?.[events.length - 1];
    },
    async head(collection) {
      return logs.get(collection)?.head ?? 0n;
    },
    cursorOf: (collection, sequence) => encodeFeedCursor(collection, epoch, sequence),
    subscribe(collection, listener) {
      const log = logOf(collection);
      log.listeners.add(listener);
      return () => log.listeners.delete(listener);
    },
  };
}
