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
 *
 * Status (see {@link BundleState}): the block engine's word (`getInflightBundleStatuses`: Pending, Landed,
 * Failed, Invalid), then the transactions' own records from the status engine (confirmed, finalized).
 * The members are NOT tracked for rebroadcast: one resent alone could land without the others, which is
 * exactly what a bundle must never do. A bundle that will never land (the engine's Failed or Invalid, a
 * lapsed blockhash) says so with its reason at the first read that can tell.
 */
import { createHash } from "node:crypto";
import { address, getBase58Decoder } from "@solana/kit";
import type { GetMultipleAccountsApi, Rpc } from "@solana/kit";
import { SolgateError } from "../errors.ts";
import { assertSignaturesValid, decodeWireTransaction } from "../solana/wire-transaction.ts";
import type { DecodedTransaction } from "../solana/wire-transaction.ts";
import { BlockEngineRefusal } from "../upstream/block-engine.ts";
import type { BlockEngine, InflightBundleStatus } from "../upstream/block-engine.ts";
import type { BlockhashCache } from "./blockhash-cache.ts";
import { toBase64Wire } from "./chain-calls.ts";
import type { StatusRecord } from "./transaction-status.ts";

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
  /** A transaction's record (the status engine's `record`: tracked, watched or read from the chain). */
  readonly memberRecord?: (signature: string) => Promise<StatusRecord | undefined>;
  /** The newest slot seen, for heartbeats. */
  readonly newestSlot?: () => bigint;
  /** Time between reads while a bundle is watched (default 400 ms). */
  readonly pollIntervalMs?: number;
  /** Idle time before a watch gets a heartbeat (default 15 s). */
  readonly heartbeatIntervalMs?: number;
  /** Bundles sent through this server that are remembered (default 10,000; oldest forgotten first). */
  readonly maxRemembered?: number;
}

/**
 * Where a bundle stands. `pending`, `landed` (Jito's Landed, not yet confirmed), `confirmed` and `finalized`
 * (every member at that commitment); `failed` (the engine's Failed, or a member failed on the chain),
 * `invalid` (the engine does not hold it) and `expired` (a blockhash lapsed before it landed) mean it will
 * never land. Final: finalized, failed, invalid, expired.
 */
export type BundleState = "pending" | "landed" | "confirmed" | "finalized" | "failed" | "invalid" | "expired";

/** The states after which nothing changes. */
export const FINAL_BUNDLE_STATES: ReadonlySet<BundleState> = new Set(["finalized", "failed", "invalid", "expired"]);

/** The state of one bundle. */
export interface BundleRecord {
  readonly bundleId: string;
  readonly state: BundleState;
  /** The block engine's word, when it was asked. */
  readonly engineStatus?: InflightBundleStatus["status"];
  /** Why it will never land (failed, invalid, expired). */
  readonly reason?: string;
  /** The slot of the block that holds it. */
  readonly slot?: bigint;
  /** The members' first signatures in order (empty for a bundle not sent through this server). */
  readonly signatures: readonly string[];
  /** The members' own records, once the bundle is in a block. */
  readonly transactions: readonly StatusRecord[];
  /** The least last valid block height of its blockhashes, when known. */
  readonly lastValidBlockHeight?: bigint;
  readonly updatedAt: Date;
}

/** One event of a bundle watch. */
export type BundleWatchEvent =
  | { readonly kind: "record"; readonly record: BundleRecord }
  | { readonly kind: "heartbeat"; readonly slot: bigint };

/** The bundles core. */
export interface Bundles {
  /**
   * Checks and forwards a bundle; answers with its record right after the send (pending).
   * @throws SolgateError with the reason of the first failed check; BUNDLE_REFUSED when the engine refuses it.
   */
  send(wires: readonly Uint8Array[]): Promise<BundleRecord>;
  /**
   * Where a bundle stands.
   * @throws SolgateError INVALID_PARAMETER for a malformed id, NOT_FOUND for one neither sent here nor held by the engine.
   */
  status(bundleId: string): Promise<BundleRecord>;
  /**
   * The record at once, then each change until a final state; heartbeats while idle; ends when `signal` aborts.
   * @throws SolgateError INVALID_PARAMETER for a malformed id (at once), NOT_FOUND (on first iteration).
   */
  watch(bundleId: string, signal?: AbortSignal): AsyncGenerator<BundleWatchEvent, void, undefined>;
}

/** What is remembered of a bundle sent through this server. */
interface SentBundle {
  readonly signatures: readonly string[];
  readonly blockhashes: readonly string[];
  readonly lastValidBlockHeight?: bigint;
  /** Its final record, once it has one (nothing changes after). */
  final?: BundleRecord;
}

/** Whether a bundle in this state will never change again. */
export function isFinalBundleState(state: BundleState): boolean {
  return FINAL_BUNDLE_STATES.has(state);
}

/** Creates the bundles core. */
export function createBundles(options: BundlesOptions): Bundles {
  const unavailable = () =>
    new SolgateError("BUNDLES_UNAVAILABLE", "this chain has no block engine configured (SOLGATE_JITO_URL)");

  async function check(
    wires: readonly Uint8Array[],
    engine: BlockEngine,
  ): Promise<{ txs: DecodedTransaction[]; lastValidBlockHeight: bigint | undefined }> {
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
    // The least last valid height of the bundle's blockhashes (exact or an upper bound), for its record.
    let lastValidBlockHeight: bigint | undefined;
    for (const blockhash of new Set(txs.map((tx) => tx.blockhash))) {
      const validity = await options.blockhashes.check(blockhash);
      if (lastValidBlockHeight === undefined || validity.lastValidBlockHeight < lastValidBlockHeight)
        lastValidBlockHeight = validity.lastValidBlockHeight;
    }

    const tips = new Set(await engineCall(() => engine.tipAccounts()));
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
    return { txs, lastValidBlockHeight };
  }

  const sent = new Map<string, SentBundle>();
  const maxRemembered = options.maxRemembered ?? 10_000;
  const pollIntervalMs = options.pollIntervalMs ?? 400;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 15_000;
  const memberRecord = options.memberRecord ?? (async () => undefined);

  /** The engine's call; its failures as a catalogue error (a refusal is the caller's to read). */
  async function engineCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      if (e instanceof BlockEngineRefusal || e instanceof SolgateError) throw e;
      throw new SolgateError(
        "BLOCK_ENGINE_UNAVAILABLE",
        `the block engine did not answer: ${e instanceof Error ? e.message : String(e)}`,
        {},
        { retryAfterMs: 1000, cause: e },
      );
    }
  }

  function assertBundleId(bundleId: string): void {
    if (!/^[0-9a-f]{64}$/.test(bundleId)) {
      throw new SolgateError("INVALID_PARAMETER", "bundle_id must be 64 lowercase hex digits", { field: "bundleId" });
    }
  }

  /**
   * A blockhash of the bundle that has lapsed (the node's word, through the cache), once the chain is also
   * past the last valid height the client was told: that height may be an upper bound (a blockhash not
   * fetched through Solgate), and `expired` below it would contradict it.
   */
  async function lapsed(bundle: SentBundle): Promise<string | undefined> {
    for (const blockhash of bundle.blockhashes) {
      try {
        await options.blockhashes.check(blockhash);
      } catch (e) {
        if (!(e instanceof SolgateError && e.reason === "BLOCKHASH_EXPIRED")) throw e;
        const told = bundle.lastValidBlockHeight;
        if (told !== undefined && (await options.blockhashes.blockHeight()) <= told) return undefined;
        return blockhash;
      }
    }
    return undefined;
  }

  function remember(bundleId: string, bundle: SentBundle): void {
    sent.delete(bundleId);
    sent.set(bundleId, bundle);
    while (sent.size > maxRemembered) sent.delete(sent.keys().next().value as string);
  }

  async function read(bundleId: string, engine: BlockEngine): Promise<BundleRecord> {
    const bundle = sent.get(bundleId);
    if (bundle?.final !== undefined) return bundle.final;
    if (bundle === undefined) {
      // Not sent here: the engine's word is all there is.
      const inflight = await engineCall(() => engine.inflightStatus(bundleId));
      if (inflight.status === "Invalid") {
        throw new SolgateError(
          "NOT_FOUND",
          `bundle ${bundleId} was not sent through Solgate and the block engine does not hold it`,
          { bundleId },
        );
      }
      return engineRecord(bundleId, inflight, [], undefined, new Date());
    }
    // Expiry is read before the chain, so that a bundle that landed in its last valid block is never called expired.
    const expiredBlockhash = await lapsed(bundle);
    const members = await Promise.all(bundle.signatures.map((signature) => memberRecord(signature)));
    const updatedAt = new Date();
    const lifetime =
      bundle.lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight: bundle.lastValidBlockHeight };
    let record: BundleRecord;
    if (members.some((m) => m?.slot !== undefined)) {
      // In a block: the members' own records say the rest, and the engine is not asked (Jito keeps in-flight
      // statuses for minutes only, and rate-limits the call).
      const transactions = members.map(
        (m, i) => m ?? { signature: bundle.signatures[i] as string, state: "submitted" as const, updatedAt },
      );
      const failedAt = transactions.findIndex((m) => m.state === "failed");
      const state: BundleState =
        failedAt >= 0
          ? "failed"
          : transactions.every((m) => m.state === "finalized")
            ? "finalized"
            : transactions.every((m) => m.state === "confirmed" || m.state === "finalized")
              ? "confirmed"
              : "landed";
      const slot = transactions.find((m) => m.slot !== undefined)?.slot;
      record = {
        bundleId,
        state,
        ...(failedAt >= 0
          ? {
              reason: `transaction ${failedAt} failed on the chain: ${transactions[failedAt]?.error?.message ?? "error"}`,
            }
          : {}),
        ...(slot === undefined ? {} : { slot }),
        signatures: bundle.signatures,
        transactions,
        ...lifetime,
        updatedAt,
      };
    } else {
      const inflight = await engineCall(() => engine.inflightStatus(bundleId));
      if (expiredBlockhash !== undefined && (inflight.status === "Pending" || inflight.status === "Invalid")) {
        record = {
          bundleId,
          state: "expired",
          engineStatus: inflight.status,
          reason: `blockhash ${expiredBlockhash} lapsed before the bundle landed; rebuild its transactions with a fresh blockhash, sign them again and resend`,
          signatures: bundle.signatures,
          transactions: [],
          ...lifetime,
          updatedAt,
        };
      } else {
        record = engineRecord(bundleId, inflight, bundle.signatures, bundle.lastValidBlockHeight, updatedAt);
      }
    }
    if (isFinalBundleState(record.state)) {
      const current = sent.get(bundleId);
      if (current !== undefined) current.final = record;
    }
    return record;
  }

  return {
    async send(wires) {
      const engine = options.engine;
      if (engine === undefined) throw unavailable();
      const { txs, lastValidBlockHeight } = await check(wires, engine);
      const signatures = txs.map((tx) => tx.signature);
      const bundleId = bundleIdOf(signatures);
      const blockhashes = [...new Set(txs.map((tx) => tx.blockhash))];
      // One call: the engine takes the bundle whole or not at all.
      let engineId: string;
      try {
        engineId = await engineCall(() => engine.sendBundle(txs.map((tx) => toBase64Wire(tx.wire))));
      } catch (e) {
        if (e instanceof BlockEngineRefusal) {
          throw new SolgateError("BUNDLE_REFUSED", `the block engine refused the bundle: ${e.message}`, {
            bundleId,
            engineCode: e.code,
            engineMessage: e.message,
          });
        }
        throw e;
      }
      if (engineId !== bundleId) {
        throw new SolgateError(
          "BLOCK_ENGINE_UNAVAILABLE",
          `the block engine answered bundle id ${engineId}, not Jito's ${bundleId}`,
          { bundleId, engineId },
          { retryAfterMs: 1000 },
        );
      }
      remember(bundleId, {
        signatures,
        blockhashes,
        ...(lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight }),
      });
      return {
        bundleId,
        state: "pending",
        engineStatus: "Pending",
        signatures,
        transactions: [],
        ...(lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight }),
        updatedAt: new Date(),
      };
    },
    async status(bundleId) {
      const engine = options.engine;
      if (engine === undefined) throw unavailable();
      assertBundleId(bundleId);
      return read(bundleId, engine);
    },
    watch(bundleId, signal) {
      const engine = options.engine;
      if (engine === undefined) throw unavailable();
      assertBundleId(bundleId);
      return watchBundle(bundleId, engine, signal);
    },
  };

  async function* watchBundle(
    bundleId: string,
    engine: BlockEngine,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<BundleWatchEvent, void, undefined> {
    let last: string | undefined;
    let lastEventAt = Date.now();
    while (signal?.aborted !== true) {
      const record = await read(bundleId, engine);
      const key = recordKey(record);
      if (key !== last) {
        last = key;
        lastEventAt = Date.now();
        yield { kind: "record", record };
        if (isFinalBundleState(record.state)) return;
      } else if (Date.now() - lastEventAt >= heartbeatIntervalMs) {
        lastEventAt = Date.now();
        yield { kind: "heartbeat", slot: options.newestSlot?.() ?? 0n };
      }
      await sleep(pollIntervalMs, signal);
    }
  }
}

/** What a watcher would see change in a record (not its read time). */
function recordKey(record: BundleRecord): string {
  return JSON.stringify([
    record.state,
    record.engineStatus,
    record.reason,
    String(record.slot),
    record.transactions.map((t) => [t.state, String(t.slot)]),
  ]);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** A record from the engine's word alone. */
function engineRecord(
  bundleId: string,
  inflight: InflightBundleStatus,
  signatures: readonly string[],
  lastValidBlockHeight: bigint | undefined,
  updatedAt: Date,
): BundleRecord {
  const base = {
    bundleId,
    engineStatus: inflight.status,
    signatures,
    transactions: [],
    ...(lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight }),
    updatedAt,
  };
  switch (inflight.status) {
    case "Pending":
      return { ...base, state: "pending" };
    case "Landed":
      return { ...base, state: "landed", ...(inflight.landedSlot === undefined ? {} : { slot: inflight.landedSlot }) };
    case "Failed":
      return {
        ...base,
        state: "failed",
        reason: `the block engine could not land the bundle: ${inflight.reason ?? "it said Failed and gave no reason"}`,
      };
    case "Invalid":
      return {
        ...base,
        state: "invalid",
        reason: "the block engine does not hold the bundle (it dropped it, or never received it)",
      };
  }
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
