/**
 * Stateless page cursors: any replica can continue a listing from one, with no shared state.
 * Layout (53 bytes, base64url): version (1) | query hash (16) | last address of the page (32) | checksum (4).
 * The checksum catches corrupted or hand-edited cursors; a forged one could only start a listing of
 * the caller's own query at another address, which it may do anyway.
 */
import { createHash } from "node:crypto";
import { getAddressDecoder, getAddressEncoder } from "@solana/kit";
import type { Address } from "@solana/kit";
import { SolgateError } from "../errors.ts";

const VERSION = 1;
const HASH_BYTES = 16;
const ADDRESS_BYTES = 32;
const CHECKSUM_BYTES = 4;
const BODY_BYTES = 1 + HASH_BYTES + ADDRESS_BYTES;
const CURSOR_BYTES = BODY_BYTES + CHECKSUM_BYTES;

const addressEncoder = getAddressEncoder();
const addressDecoder = getAddressDecoder();

/** The cursor of the page after the one ending at `lastAddress`. */
export function encodeCursor(queryHash: Uint8Array, lastAddress: string): string {
  const body = Buffer.alloc(BODY_BYTES);
  body[0] = VERSION;
  body.set(queryHash.subarray(0, HASH_BYTES), 1);
  body.set(addressEncoder.encode(lastAddress as Address), 1 + HASH_BYTES);
  return Buffer.concat([body, checksum(body)]).toString("base64url");
}

/**
 * The last address of the previous page. Throws SolgateError INVALID_PARAMETER (field `cursor`) when
 * the cursor is malformed, tampered with, or belongs to another query.
 */
export function decodeCursor(cursor: string, queryHash: Uint8Array): Address {
  const bytes = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, "base64url") : Buffer.alloc(0);
  if (bytes.length !== CURSOR_BYTES || bytes[0] !== VERSION) throw invalidCursor("the cursor is malformed; start again without one");
  const body = bytes.subarray(0, BODY_BYTES);
  if (!checksum(body).equals(bytes.subarray(BODY_BYTES))) {
    throw invalidCursor("the cursor is corrupted or was altered; use nextCursor exactly as returned");
  }
  if (!Buffer.from(queryHash.subarray(0, HASH_BYTES)).equals(body.subarray(1, 1 + HASH_BYTES))) {
    throw invalidCursor("the cursor belongs to another query; send the same programId, size and match as for the first page");
  }
  return addressDecoder.decode(body.subarray(1 + HASH_BYTES));
}

function checksum(body: Uint8Array): Buffer {
  return createHash("sha256").update(body).digest().subarray(0, CHECKSUM_BYTES);
}

function invalidCursor(message: string): SolgateError {
  return new SolgateError("INVALID_PARAMETER", message, { field: "cursor" });
}
