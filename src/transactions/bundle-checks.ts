/**
 * The checks a Jito bundle passes before anything is forwarded (bundles.ts sends and tracks it). Each refusal
 * has its own reason: 1-5 transactions (BUNDLE_TOO_LARGE); every one decodes and its signatures verify
 * (INVALID_TRANSACTION); no duplicates (BUNDLE_DUPLICATE_TRANSACTION); every blockhash fresh
 * (BLOCKHASH_EXPIRED); at least one top-level System transfer (src/solana/jito-tips.ts) of >= 1,000 lamports
 * to a tip account named in the message itself (BUNDLE_NO_TIP); no transaction that reaches a tip account
 * through a lookup table (BUNDLE_TIP_IN_LOOKUP_TABLE).
 *
 * {@link decodeBundle} and {@link assertTipped} are pure; {@link checkBundle} adds the three reads they need
 * (blockhash validity, the engine's tip accounts, lookup tables).
 */
import { SolgateError } from "../errors.ts";
import { transferDestinationPosition, transferLamports } from "../solana/jito-tips.ts";
import type { LookupTableResolver } from "../solana/lookup-tables.ts";
import { SYSTEM_PROGRAM } from "../solana/program-ids.ts";
import { assertSignaturesValid, decodeWireTransaction } from "../solana/wire-transaction.ts";
import type { DecodedTransaction } from "../solana/wire-transaction.ts";
import type { BlockhashCache } from "./blockhash-cache.ts";

/** The most transactions a bundle holds (Jito's limit). */
export const MAX_BUNDLE_TRANSACTIONS = 5;
/** The least tip the block engine takes. */
export const MIN_TIP_LAMPORTS = 1000n;

/** Resolves the addresses a message loads from lookup tables (for the lookup-table check). */
export type LookupTableReader = Pick<LookupTableResolver, "loadedOf">;

/** What {@link checkBundle} reads. */
export interface BundleCheckReads {
  readonly blockhashes: BlockhashCache;
  readonly lookupTables: LookupTableReader;
  /** The block engine's tip accounts (its failures are the caller's to word). */
  tipAccounts(): Promise<readonly string[]>;
}

/**
 * Sizes, decodes and verifies a bundle's transactions, refusing duplicates.
 * @throws SolgateError BUNDLE_TOO_LARGE, INVALID_TRANSACTION (with the member's index), BUNDLE_DUPLICATE_TRANSACTION.
 */
export function decodeBundle(wires: readonly Uint8Array[]): DecodedTransaction[] {
  if (wires.length === 0 || wires.length > MAX_BUNDLE_TRANSACTIONS) {
    throw new SolgateError(
      "BUNDLE_TOO_LARGE",
      `a bundle holds 1 to ${MAX_BUNDLE_TRANSACTIONS} transactions; this one holds ${wires.length}`,
      { count: wires.length },
    );
  }
  const txs = wires.map((wire, index) => {
    try {
      const tx = decodeWireTransaction(wire);
      assertSignaturesValid(tx);
      return tx;
    } catch (e) {
      if (e instanceof SolgateError) {
        throw new SolgateError(e.reason, `transaction ${index}: ${e.message}`, { ...e.details, index });
      }
      throw e;
    }
  });
  const seen = new Set<string>();
  txs.forEach((tx, index) => {
    if (seen.has(tx.signature)) {
      throw new SolgateError("BUNDLE_DUPLICATE_TRANSACTION", `transaction ${index} repeats an earlier one`, {
        index,
        signature: tx.signature,
      });
    }
    seen.add(tx.signature);
  });
  return txs;
}

/**
 * Refuses a bundle that reaches a tip account through a lookup table, or that tips too little.
 * `loadedByTx[i]`: the addresses member i loads from its tables.
 * @throws SolgateError BUNDLE_TIP_IN_LOOKUP_TABLE, BUNDLE_NO_TIP.
 */
export function assertTipped(
  txs: readonly DecodedTransaction[],
  tips: ReadonlySet<string>,
  loadedByTx: readonly (readonly string[])[],
): void {
  let tipped = false;
  txs.forEach((tx, index) => {
    const statics = tx.message.staticAccounts.map(String);
    if (loadedByTx[index]!.some((a) => tips.has(a))) {
      throw new SolgateError(
        "BUNDLE_TIP_IN_LOOKUP_TABLE",
        `transaction ${index} reaches a tip account through an address lookup table; name it in the message itself`,
        { index },
      );
    }
    for (const t of transfersOf(tx)) {
      const to = statics[t.destinationIndex];
      if (to !== undefined && tips.has(to) && t.lamports >= MIN_TIP_LAMPORTS) tipped = true;
    }
  });
  if (!tipped) {
    throw new SolgateError(
      "BUNDLE_NO_TIP",
      `no transaction transfers at least ${MIN_TIP_LAMPORTS} lamports to a tip account (getTipAccounts)`,
      { minimumLamports: MIN_TIP_LAMPORTS },
    );
  }
}

/**
 * Every check, in order; the decoded members and the least last valid height of their blockhashes (exact or
 * an upper bound), for the bundle's record.
 */
export async function checkBundle(
  wires: readonly Uint8Array[],
  reads: BundleCheckReads,
): Promise<{ txs: DecodedTransaction[]; lastValidBlockHeight: bigint | undefined }> {
  const txs = decodeBundle(wires);
  let lastValidBlockHeight: bigint | undefined;
  for (const blockhash of new Set(txs.map((tx) => tx.blockhash))) {
    const validity = await reads.blockhashes.check(blockhash);
    if (lastValidBlockHeight === undefined || validity.lastValidBlockHeight < lastValidBlockHeight)
      lastValidBlockHeight = validity.lastValidBlockHeight;
  }
  const tips = new Set(await reads.tipAccounts());
  const loadedByTx = await Promise.all(txs.map((tx) => loadedAddressesOf(tx, reads.lookupTables)));
  assertTipped(txs, tips, loadedByTx);
  return { txs, lastValidBlockHeight };
}

/**
 * The addresses a member loads from lookup tables. A table that does not exist, is not one, or lacks an
 * index loads nothing here: the chain refuses that transaction, and the block engine the bundle; this
 * check only looks for tip accounts.
 */
async function loadedAddressesOf(tx: DecodedTransaction, lookupTables: LookupTableReader): Promise<readonly string[]> {
  try {
    const { writable, readonly } = await lookupTables.loadedOf(tx.message);
    return [...writable, ...readonly];
  } catch (error) {
    if (error instanceof SolgateError && error.reason === "INVALID_TRANSACTION") return [];
    throw error;
  }
}

/** A top-level System transfer (src/solana/jito-tips.ts says which): its destination's account index and lamports. */
function transfersOf(tx: DecodedTransaction): { destinationIndex: number; lamports: bigint }[] {
  const { staticAccounts, instructions } = tx.message;
  const out: { destinationIndex: number; lamports: bigint }[] = [];
  for (const ix of instructions) {
    if (staticAccounts[ix.programAddressIndex] !== SYSTEM_PROGRAM) continue;
    const data = ix.data;
    const accounts = ix.accountIndices ?? [];
    if (data === undefined) continue;
    const position = transferDestinationPosition(data, 0, data.length, accounts.length);
    if (position < 0) continue;
    out.push({ destinationIndex: accounts[position] as number, lamports: transferLamports(data, 0) });
  }
  return out;
}
