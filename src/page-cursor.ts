/**
 * Stateless keyset cursors: any replica continues a listing from one, with no shared state.
 * Layout (53 bytes, base64url): version (1) | scope (16) | last key of the page (32) | checksum (4).
 * The scope ties a cursor to its listing (a query hash, a collection tag), so one listing's cursor is
 * refused by another; the key is where the next page starts, so page 1,000 costs what page 1 costs.
 * The checksum catches corrupted or hand-edited cursors; a forged one could only start the caller's
 * own listing at another key, which it may do anyway.
 *
 * The one keyset-cursor module: each listing makes its cursors with {@link keysetCursors}, saying how
 * its scope is derived and what to tell a caller who brings another listing's cursor.
 */
import { createHash } from "node:crypto";
import { getAddressDecoder, getAddressEncoder } from "@solana/kit";
import type { Address } from "@solana/kit";
import { SolgateError } from "./errors.ts";

const VERSION = 1;
/** Bytes of the scope a cursor carries. */
export const CURSOR_SCOPE_BYTES = 16;
const KEY_BYTES = 32;
const CHECKSUM_BYTES = 4;
const BODY_BYTES = 1 + CURSOR_SCOPE_BYTES + KEY_BYTES;
const CURSOR_BYTES = BODY_BYTES + CHECKSUM_BYTES;
/** The base64url length of a cursor; anything longer is refused before decoding. */
const CURSOR_CHARS = Math.ceil((CURSOR_BYTES * 4) / 3);

const addressEncoder = getAddressEncoder();
const addressDecoder = getAddressDecoder();

/** The cursor continuing the listing `scope` (its first 16 bytes) after the base58 32-byte key `lastKey`. */
export function encodeKeysetCursor(scope: Uint8Array, lastKey: string): string {
  const body = Buffer.alloc(BODY_BYTES);
  body[0] = VERSION;
  body.set(scope.subarray(0, CURSOR_SCOPE_BYTES), 1);
  body.set(addressEncoder.encode(lastKey as Address), 1 + CURSOR_SCOPE_BYTES);
  return Buffer.concat([body, checksum(body)]).toString("base64url");
}

/**
 * The last key of the previous page. Throws SolgateError INVALID_PARAMETER (field `cursor`) when the
 * cursor is malformed or altered, or, with `otherListing` as the message, belongs to another listing.
 */
export function decodeKeysetCursor(cursor: string, scope: Uint8Array, otherListing: string): Address {
  const bytes =
    cursor.length <= CURSOR_CHARS && /^[A-Za-z0-9_-]+$/u.test(cursor)
      ? Buffer.from(cursor, "base64url")
      : Buffer.alloc(0);
  if (bytes.length !== CURSOR_BYTES || bytes[0] !== VERSION)
    throw invalidCursor("the cursor is malformed; start again without one");
  const body = bytes.subarray(0, BODY_BYTES);
  if (!checksum(body).equals(bytes.subarray(BODY_BYTES))) {
    throw invalidCursor("the cursor is corrupted or was altered; use nextCursor exactly as returned");
  }
  if (!Buffer.from(scope.subarray(0, CURSOR_SCOPE_BYTES)).equals(body.subarray(1, 1 + CURSOR_SCOPE_BYTES)))
    throw invalidCursor(otherListing);
  return addressDecoder.decode(body.subarray(1 + CURSOR_SCOPE_BYTES));
}

/** The cursors of one kind of listing, scoped by `Scope` (a collection address, a query hash, ...). */
export interface KeysetCursors<Scope> {
  /** The cursor continuing the listing `scope` after the base58 32-byte key `lastKey`. */
  encode(scope: Scope, lastKey: string): string;
  /** The last key of the previous page; throws as {@link decodeKeysetCursor} does. */
  decode(cursor: string, scope: Scope): Address;
}

/** Cursors whose scope is `scopeBytes(scope)` (its first 16 bytes count), refusing another listing's with `otherListing`. */
export function keysetCursors<Scope>(
  scopeBytes: (scope: Scope) => Uint8Array,
  otherListing: string,
): KeysetCursors<Scope> {
  return {
    encode: (scope, lastKey) => encodeKeysetCursor(scopeBytes(scope), lastKey),
    decode: (cursor, scope) => decodeKeysetCursor(cursor, scopeBytes(scope), otherListing),
  };
}

function checksum(body: Uint8Array): Buffer {
  return createHash("sha256").update(body).digest().subarray(0, CHECKSUM_BYTES);
}

function invalidCursor(message: string): SolgateError {
  return new SolgateError("INVALID_PARAMETER", message, { field: "cursor" });
}
