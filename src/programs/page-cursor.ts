/**
 * ListProgramAccounts cursors: keyset cursors (src/page-cursor.ts) scoped by the query's hash and
 * keyed by the last address of the page.
 */
import type { Address } from "@solana/kit";
import { decodeKeysetCursor, encodeKeysetCursor } from "../page-cursor.ts";

/** The cursor of the page after the one ending at `lastAddress`. */
export function encodeCursor(queryHash: Uint8Array, lastAddress: string): string {
  return encodeKeysetCursor(queryHash, lastAddress);
}

/**
 * The last address of the previous page. Throws SolgateError INVALID_PARAMETER (field `cursor`) when
 * the cursor is malformed, tampered with, or belongs to another query.
 */
export function decodeCursor(cursor: string, queryHash: Uint8Array): Address {
  return decodeKeysetCursor(cursor, queryHash, "the cursor belongs to another query; send the same programId, size and match as for the first page");
}
