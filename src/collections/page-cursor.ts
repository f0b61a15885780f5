/**
 * Stateless cursors for collection pages: any replica continues a listing from one.
 * Layout (53 bytes, base64url): version (1) | collection tag (16) | last id consumed (32) | checksum (4).
 * The tag is a hash of the collection address, so a cursor of one collection is refused for another;
 * the last id is the DAS keyset position (`after`, sorted by id), so page 10 costs what page 1 costs.
 * The checksum catches corrupted or hand-edited cursors; a forged one could only start the caller's
 * own listing at another id, which it may do anyway.
 */
import { createHash } from "node:crypto";
import bs58 from "bs58";
import { SolgateError } from "../errors.ts";

const VERSION = 1;
const TAG_BYTES = 16;
const ID_BYTES = 32;
const CHECKSUM_BYTES = 4;
const BODY_BYTES = 1 + TAG_BYTES + ID_BYTES;
const CURSOR_BYTES = BODY_BYTES + CHECKSUM_BYTES;
/** The base64url length of a cursor; anything longer is refused before decoding. */
const CURSOR_CHARS = Math.ceil((CURSOR_BYTES * 4) / 3);

function tagOf(collection: string): Buffer {
  return createHash("sha256").update("solgate.collections.v1:").update(collection).digest().subarray(0, TAG_BYTES);
}

function checksum(body: Uint8Array): Buffer {
  return createHash("sha256").update(body).digest().subarray(0, CHECKSUM_BYTES);
}

/** The cursor continuing `collection`'s listing after the member (or skipped item) `lastId`. */
export function encodePageCursor(collection: string, lastId: string): string {
  const id = bs58.decode(lastId);
  if (id.length !== ID_BYTES) throw new RangeError(`not a 32-byte id: ${lastId}`);
  const body = Buffer.alloc(BODY_BYTES);
  body[0] = VERSION;
  tagOf(collection).copy(body, 1);
  body.set(id, 1 + TAG_BYTES);
  return Buffer.concat([body, checksum(body)]).toString("base64url");
}

/**
 * The last id of the previous page. Throws SolgateError INVALID_PARAMETER (field `cursor`) when the
 * cursor is malformed, altered, or belongs to another collection.
 */
export function decodePageCursor(cursor: string, collection: string): string {
  const bytes = cursor.length <= CURSOR_CHARS && /^[A-Za-z0-9_-]+$/u.test(cursor) ? Buffer.from(cursor, "base64url") : Buffer.alloc(0);
  if (bytes.length !== CURSOR_BYTES || bytes[0] !== VERSION) throw invalidCursor("the cursor is malformed; start again without one");
  const body = bytes.subarray(0, BODY_BYTES);
  if (!checksum(body).equals(bytes.subarray(BODY_BYTES))) {
    throw invalidCursor("the cursor is corrupted or was altered; use nextCursor exactly as returned");
  }
  if (!tagOf(collection).equals(body.subarray(1, 1 + TAG_BYTES))) {
    throw invalidCursor("the cursor belongs to another collection; send the address of the first page");
  }
  return bs58.encode(body.subarray(1 + TAG_BYTES));
}

function invalidCursor(message: string): SolgateError {
  return new SolgateError("INVALID_PARAMETER", message, { field: "cursor" });
}
