/**
 * Follows a collection's change feed (WatchCollection) and picks up where it left off: after handling each event it
 * saves that event's cursor to a file, and when started again it passes the saved cursor, so the stream resumes
 * right after the last event handled. Events that came while it was stopped come first; none is skipped. A cursor
 * older than the feed's log is refused (COLLECTION_CURSOR_EXPIRED): then re-read the collection and watch from now.
 * `npm run watch` (Node 22.18+ runs this file as it is).
 *
 *   SOLGATE_URL          the gateway, e.g. http://127.0.0.1:8080
 *   SOLGATE_API_KEY      an API key
 *   SOLGATE_COLLECTION   the collection to follow (default: the localnet's seeded collection)
 *   SOLGATE_CURSOR_FILE  where the last cursor handled is kept (default: collection-cursor)
 *   SOLGATE_EVENTS       how many events to handle before stopping (default: 3)
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { CollectionEventKind, createSolgateClient, errorReason } from "@solgate/client";
import type { CollectionEvent } from "@solgate/client";

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`set ${name}`);
  return value;
};

const solgate = createSolgateClient({ baseUrl: env("SOLGATE_URL"), apiKey: env("SOLGATE_API_KEY"), protocol: "grpc" });
const collection = env("SOLGATE_COLLECTION", "8HV7NUeYyk2B4P5VY8qjptse9VaZ3J8qRq6W3NVB5NSJ");
const cursorFile = env("SOLGATE_CURSOR_FILE", "collection-cursor");
const wanted = Number(env("SOLGATE_EVENTS", "3"));

/** What is kept between runs, as one line `<sequence> <cursor>`: the cursor to resume from, and its sequence. */
interface Saved {
  sequence: bigint;
  cursor: string;
}

/** Saved only once the event is handled, and atomically (a crash mid-write must not lose the old cursor). */
function save(event: CollectionEvent): void {
  writeFileSync(`${cursorFile}.tmp`, `${event.sequence} ${event.cursor}\n`);
  renameSync(`${cursorFile}.tmp`, cursorFile);
}

/** What the application does with a change: here, print it. */
function handle(event: CollectionEvent): void {
  const what =
    event.kind === CollectionEventKind.FLOOR_CHANGED
      ? `floor ${event.floorPrice?.sol ?? "none"} SOL (was ${event.previousFloorPrice?.sol ?? "none"})`
      : `${event.assetId} owner ${event.owner || "?"} (${event.instruction} in ${event.signature})`;
  const kind = CollectionEventKind[event.kind];
  console.log(`event ${event.sequence} ${kind}: ${what}; verified size ${event.verifiedSize}`);
}

function readSaved(): Saved {
  const [sequence, cursor] = readFileSync(cursorFile, "utf8").trim().split(" ");
  if (!/^\d+$/u.test(sequence ?? "") || !cursor) throw new Error(`${cursorFile} is not "<sequence> <cursor>"`);
  return { sequence: BigInt(sequence!), cursor };
}

async function watch(saved: Saved | undefined): Promise<void> {
  const abort = new AbortController();
  let handled = 0;
  let last: CollectionEvent | undefined;
  const stream = solgate.collection.watchCollection(
    { address: collection, cursor: saved?.cursor ?? "" },
    { signal: abort.signal },
  );
  try {
    for await (const message of stream) {
      if (message.message.case !== "event") continue; // a heartbeat: the stream is alive, nothing changed
      const event = message.message.value;
      if (handled === 0 && saved !== undefined) {
        console.log(`feed: resumed at sequence ${event.sequence}`);
        // Without a kinds filter the log has no gaps: the first event after the cursor is the next one.
        if (event.sequence !== saved.sequence + 1n)
          throw new Error(`resumed at ${event.sequence}, not right after ${saved.sequence}`);
      }
      handle(event);
      save(event);
      last = event;
      if (++handled === wanted) break;
    }
  } finally {
    abort.abort();
  }
  console.log(`feed: handled ${handled} events, last sequence ${last?.sequence}, cursor saved to ${cursorFile}`);
}

async function main(): Promise<void> {
  const saved = existsSync(cursorFile) ? readSaved() : undefined;
  console.log(
    saved === undefined
      ? "feed: no saved cursor, watching from now"
      : `feed: resuming after sequence ${saved.sequence}`,
  );
  try {
    await watch(saved);
  } catch (error) {
    if (errorReason(error) !== "COLLECTION_CURSOR_EXPIRED") throw error;
    // The log no longer holds what followed the cursor (too old, or the gateway restarted): start over from the
    // collection's current state, then follow it from now.
    const { collection: current } = await solgate.collection.getCollection({ address: collection });
    console.log(
      `feed: the saved cursor is gone; re-read the collection (${current?.itemCount} verified), watching from now`,
    );
    rmSync(cursorFile);
    await watch(undefined);
  }
}

main().catch((error: unknown) => {
  console.log(`failed: ${errorReason(error) ?? ""} ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
