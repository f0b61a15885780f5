/**
 * Collection feed cursors: `<epoch>.<sequence>.<scope>`, base64url. The epoch names the log the sequence
 * belongs to (a memory log gets a new one on every start, so a cursor from before a restart is known to
 * point into a log that is gone, not into the new log's numbering); the scope is a hash of the collection,
 * so a cursor of one collection is refused for another.
 */
import { createHash } from "node:crypto";
import { SolgateError } from "../../errors.ts";

/** What a cursor says. */
export interface FeedPosition {
  readonly epoch: string;
  readonly sequence: bigint;
}

function scopeOf(collection: string): string {
  return createHash("sha256").update("solgate.feed.v1:").update(collection).digest("base64url").slice(0, 8);
}

/** The cursor after event `sequence` of `collection`'s log `epoch`. */
export function encodeFeedCursor(collection: string, epoch: string, sequence: bigint): string {
  return Buffer.from(`${epoch}.${sequence}.${scopeOf(collection)}`).toString("base64url");
}

const SHAPE = /^([A-Za-z0-9_-]{1,32})\.(0|[1-9][0-9]{0,19})\.([A-Za-z0-9_-]{8})$/;

/**
 * Reads a cursor given back by a client.
 * @throws SolgateError COLLECTION_CURSOR_INVALID when it is malformed or belongs to another collection.
 */
export function decodeFeedCursor(collection: string, cursor: string): FeedPosition {
  const text = /^[A-Za-z0-9_-]{1,96}$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("latin1") : "";
  const match = SHAPE.exec(text);
  if (match === null)
    throw new SolgateError("COLLECTION_CURSOR_INVALID", "the cursor is malformed; pass one the feed gave out", {
      field: "cursor",
    });
  if (match[3] !== scopeOf(collection))
    throw new SolgateError(
      "COLLECTION_CURSOR_INVALID",
      "the cursor belongs to another collection; pass one this collection's feed gave out",
      { field: "cursor" },
    );
  return { epoch: match[1]!, sequence: BigInt(match[2]!) };
}
