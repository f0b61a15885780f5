/**
 * ListCollectionNfts cursors: keyset cursors (src/page-cursor.ts) scoped by a hash of the collection
 * address, so a cursor of one collection is refused for another, and keyed by the last id consumed:
 * the DAS keyset position (`after`, sorted by id), so page 10 costs what page 1 costs.
 */
import { createHash } from "node:crypto";
import { CURSOR_SCOPE_BYTES, decodeKeysetCursor, encodeKeysetCursor } from "../page-cursor.ts";

function tagOf(collection: string): Buffer {
  return createHash("sha256").update("solgate.collections.v1:").update(collection).digest().subarray(0, CURSOR_SCOPE_BYTES);
}

/** The cursor continuing `collection`'s listing after the member (or skipped item) `lastId`. */
export function encodePageCursor(collection: string, lastId: string): string {
  return encodeKeysetCursor(tagOf(collection), lastId);
}

/**
 * The last id of the previous page. Throws SolgateError INVALID_PARAMETER (field `cursor`) when the
 * cursor is malformed, altered, or belongs to another collection.
 */
export function decodePageCursor(cursor: string, collection: string): string {
  return decodeKeysetCursor(cursor, tagOf(collection), "the cursor belongs to another collection; send the address of the first page");
}
