/**
 * The `memo` of a signature listing, as agave's `extract_and_fmt_memos` builds it: each top-level
 * instruction of the SPL Memo program (v1 or v3) as `[<byte length>] <text, UTF-8 lossy>`, joined
 * with "; "; null when there is none.
 */
import type { TransactionRecord } from "../chain/block-store.ts";

const MEMO_PROGRAMS = new Set([
  "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
  "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
]);
const lossy = new TextDecoder("utf-8", { fatal: false });

/** The formatted memos of a recorded transaction, or null. */
export function decodeMemos(record: Pick<TransactionRecord, "tx" | "keys">): string | null {
  const memos: string[] = [];
  for (const ix of record.tx.message.instructions) {
    const program = record.keys.keys[ix.programIdIndex];
    if (program !== undefined && MEMO_PROGRAMS.has(program)) memos.push(`[${ix.data.length}] ${lossy.decode(ix.data)}`);
  }
  return memos.length === 0 ? null : memos.join("; ");
}
