/**
 * Jito bundles' core (transport-free): the checks a bundle passes before anything is forwarded, its id,
 * the send to the block engine and its status. Nothing is forwarded unless every check passed, and the
 * bundle goes in one sendBundle call, so nothing is half-sent.
 *
 * Checks, each refusal its own reason: 1-5 transactions (BUNDLE_TOO_LARGE); every one decodes and its
 * signatures verify (INVALID_TRANSACTION); no duplicates (BUNDLE_DUPLICATE_TRANSACTION); every
 * blockhash fresh (BLOCKHASH_EXPIRED); at least one top-level System transfer of >= 1,000 lamports to a
 * tip account named in the message itself (BUNDLE_NO_TIP); no transfer whose destination comes from a
 * lookup table that holds a tip account (BUNDLE_TIP_IN_LOOKUP_TABLE).
 */
import { createHash } from "node:crypto";
import { address, getBase58Decoder } from "@solana/kit";
import type { GetMultipleAccountsApi, Rpc } from "@solana/kit";
import { SolgateError } from "../errors.ts";
import { assertSignaturesValid, decodeWireTransaction } from "../solana/wire-transaction.ts";
import type { DecodedTransaction } from "../solana/wire-transaction.ts";
import type { BlockEngine, InflightBundleStatus } from "../upstream/block-engine.ts";
import type { BlockhashCache } from "./blockhash-cache.ts";
import { toBase64Wire } from "./chain-calls.ts";

/** The most transactions a bundle holds (Jito's limit). */
export const MAX_BUNDLE_TRANSACTIONS = 5;
/** The least tip the block engine takes. */
export const MIN_TIP_LAMPORTS = 1000n;

const SYSTEM_PROGRAM = "11111111111111111111111111111111";
const base58 = getBase58Decoder();

/** The bundle id as Jito derives it: SHA-256 of the first signatures (base58) joined by commas, hex. */
export function bundleIdOf(signatures: readonly string[]): string {
  return createHash("sha256").update(signatures.join(",")).digest("hex");
}

/** A top-level System transfer: its destination's account index and lamports. */
function transfersOf(tx: DecodedTransaction): { destinationIndex: number; lamports: bigint }[] {
  const { staticAccounts, instructions } = tx.message;
  const out: { destinationIndex: number; lamports: bigint }[] = [];
  for (const ix of instructions) {
    if (String(staticAccounts[ix.programAddressIndex]) !== SYSTEM_PROGRAM) continue;
    const data = ix.data;
    const accounts = ix.accountIndices ?? [];
    // Transfer: u32 LE 2, then u64 LE lamports; accounts [from, to].
    if (data === undefined || data.length !== 12 || accounts.length < 2) continue;
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (view.getUint32(0, true) !== 2) continue;
    out.push({ destinationIndex: accounts[1] as number, lamports: view.getBigUint64(4, true) });
  }
  return out;
}

/** Resolves the addresses of lookup tables (for the lookup-table check). */
export type LookupTableReader = (tables: readonly string[]) => Promise<Map<string, readonly string[]>>;

/** Options of {@link createBundles}. */
export interface BundlesOptions {
  readonly engine: BlockEngine | undefined;
  readonly blockhashes: BlockhashCache;
  readonly lookupTables: LookupTableReader;
}

/** What a bundle send did. */
export interface BundleOutcome {
  readonly bundleId: string;
  readonly signatures: readonly string[];
}

/** The bundles core. */
export interface Bundles {
  /** Checks and forwards a bundle. @throws SolgateError with the reason of the first failed check. */
  send(wires: readonly Uint8Array[]): Promise<BundleOutcome>;
  /** The block engine's status of a bundle. */
  status(bundleId: string): Promise<InflightBundleStatus>;
}

/** Creates the bundles core. */
export function createBundles(options: BundlesOptions): Bundles {
  const unavailable = () =>
    new SolgateError("BUNDLES_UNAVAILABLE", "this chain has no block engine configured (SOLGATE_JITO_URL)");

  async function check(wires: readonly Uint8Array[], engine: BlockEngine): Promise<DecodedTransaction[]> {
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
    for (const blockhash of new Set(txs.map((tx) => tx.blockhash))) await options.blockhashes.check(blockhash);

    const tips = new Set(await engine.tipAccounts());
    // Tip accounts reached through lookup tables: the tables' addresses, read once.
    const tables = [
      ...new Set(
        txs.flatMap((tx) =>
          (tx.message.version === 0 ? (tx.message.addressTableLookups ?? []) : []).map((l) =>
            String(l.lookupTableAddress),
          ),
        ),
      ),
    ];
    const tableAddresses =
      tables.length === 0 ? new Map<string, readonly string[]>() : await options.lookupTables(tables);
    let tipped = false;
    txs.forEach((tx, index) => {
      const statics = tx.message.staticAccounts.map(String);
      const loaded: string[] = [];
      if (tx.message.version === 0) {
        const lookups = tx.message.addressTableLookups ?? [];
        // Loaded accounts come writable first (every table), then read-only, as the runtime orders them.
        for (const l of lookups) {
          const table = tableAddresses.get(String(l.lookupTableAddress)) ?? [];
          for (const i of l.writableIndexes) loaded.push(table[i] ?? "");
        }
        for (const l of lookups) {
          const table = tableAddresses.get(String(l.lookupTableAddress)) ?? [];
          for (const i of l.readonlyIndexes) loaded.push(table[i] ?? "");
        }
      }
      if (loaded.some((a) => tips.has(a))) {
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
    return txs;
  }

  return {
    async send(wires) {
      const engine = options.engine;
      if (engine === undefined) throw unavailable();
      const txs = await check(wires, engine);
      const signatures = txs.map((tx) => tx.signature);
      // One call: the engine takes the bundle whole or not at all.
      const engineId = await engine.sendBundle(txs.map((tx) => toBase64Wire(tx.wire)));
      const bundleId = bundleIdOf(signatures);
      if (engineId !== bundleId) throw new Error(`block engine answered bundle id ${engineId}, expected ${bundleId}`);
      return { bundleId, signatures };
    },
    async status(bundleId) {
      const engine = options.engine;
      if (engine === undefined) throw unavailable();
      if (!/^[0-9a-f]{64}$/.test(bundleId)) {
        throw new SolgateError("INVALID_PARAMETER", "bundle id must be 64 lowercase hex digits", { field: "id" });
      }
      return engine.inflightStatus(bundleId);
    },
  };
}

/** A lookup table's addresses from its account data (a 56-byte header, then 32-byte addresses). */
export function lookupTableAddressesOf(data: Uint8Array): string[] {
  const out: string[] = [];
  for (let o = 56; o + 32 <= data.length; o += 32) out.push(base58.decode(data.subarray(o, o + 32)));
  return out;
}

/** A {@link LookupTableReader} over the chain's RPC (one getMultipleAccounts). */
export function lookupTablesFromRpc(rpc: Rpc<GetMultipleAccountsApi>): LookupTableReader {
  return async (tables) => {
    const { value } = await rpc
      .getMultipleAccounts(
        tables.map((t) => address(t)),
        { encoding: "base64" },
      )
      .send();
    const out = new Map<string, readonly string[]>();
    value.forEach((account, i) => {
      if (account !== null)
        out.set(tables[i] as string, lookupTableAddressesOf(Buffer.from(account.data[0], "base64")));
    });
    return out;
  };
}
