/**
 * Jito bundles' core (transport-free): a bundle's id, the send to the block engine and its status. The checks
 * a bundle passes first are bundle-checks.ts's: nothing is forwarded unless every check passed, and the bundle
 * goes in one sendBundle call, so nothing is half-sent.
 *
 * Status (see {@link BundleState}): the block engine's word (`getInflightBundleStatuses`: Pending, Landed,
 * Failed, Invalid), then the transactions' own records from the status engine (confirmed, finalized).
 * The members are NOT tracked for rebroadcast: one resent alone could land without the others, which is
 * exactly what a bundle must never do. A bundle that will never land (the engine's Failed or Invalid, a
 * lapsed blockhash) says so with its reason at the first read that can tell.
 *
 * What was sent lives in a {@link BundleStore}: in memory for one process, in Redis for a fleet, where any replica
 * answers for a bundle any replica took. A bundle is recorded before it goes to the engine, so the client never
 * hears it was taken unless it was recorded. A store that cannot be read answers STORE_UNAVAILABLE, never
 * NOT_FOUND: "not found" needs both the store's answer that it holds no record and the engine's that it does
 * not hold the bundle.
 */
import { BoundedMap } from "../bounded-map.ts";
import { sleep } from "../sleep.ts";
import { createHash } from "node:crypto";
import type { GetMultipleAccountsApi, Rpc } from "@solana/kit";
import { SolgateError, isSolgateError } from "../errors.ts";
import { createLookupTableResolver } from "../solana/lookup-tables.ts";
import { BlockEngineRefusal } from "../upstream/block-engine.ts";
import type { BlockEngine, InflightBundleStatus } from "../upstream/block-engine.ts";
import { checkBundle, type LookupTableReader } from "./bundle-checks.ts";
import type { BlockhashCache } from "./blockhash-cache.ts";
import { toBase64Wire } from "./chain-calls.ts";
import { bundleRank, bundleRecordKey, isFinalBundleState } from "./bundle-record.ts";
import type { BundleRecord, BundleState } from "./bundle-record.ts";
import { createMemoryBundleStore } from "./bundle-store.ts";
import type { BundleStore, SentBundle } from "./bundle-store.ts";
import type { StatusRecord } from "./transaction-status.ts";

export { FINAL_BUNDLE_STATES, isFinalBundleState } from "./bundle-record.ts";
export type { BundleRecord, BundleState } from "./bundle-record.ts";

/** The bundle id as Jito derives it: SHA-256 of the first signatures (base58) joined by commas, hex. */
export function bundleIdOf(signatures: readonly string[]): string {
  return createHash("sha256").update(signatures.join(",")).digest("hex");
}

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
  /** Where sent bundles are kept (default: the last `maxRemembered` in memory). */
  readonly store?: BundleStore;
  /** Bundles the default store remembers (default 10,000; oldest forgotten first). */
  readonly maxRemembered?: number;
  /**
   * How long a watch waits for a shared store that cannot be read (default 10 s, less when the client goes away
   * first) before it ends with STORE_UNAVAILABLE.
   */
  readonly storeWaitMs?: number;
  /**
   * How long after a bundle was recorded the engine's "not held" is read as "not yet" while the sending replica has
   * not said the engine took it (default 10 s, beyond the engine call's timeout).
   */
  readonly acceptWindowMs?: number;
  /** Background failures (a progress write that did not reach the store), for logs. */
  readonly onError?: (error: unknown) => void;
}

/** One event of a bundle watch. */
export type BundleWatchEvent =
  | { readonly kind: "record"; readonly record: BundleRecord }
  | { readonly kind: "heartbeat"; readonly slot: bigint };

/** The bundles core. */
export interface Bundles {
  /**
   * Checks and forwards a bundle; answers with its record right after the send (pending).
   * @throws SolgateError with the reason of the first failed check; STORE_UNAVAILABLE when it cannot be recorded
   * (nothing was sent); BUNDLE_REFUSED when the engine refuses it.
   */
  send(wires: readonly Uint8Array[]): Promise<BundleRecord>;
  /**
   * Where a bundle stands.
   * @throws SolgateError INVALID_PARAMETER for a malformed id; NOT_FOUND for one the store holds no record of and
   * the engine does not hold; STORE_UNAVAILABLE when the store cannot be read.
   */
  status(bundleId: string): Promise<BundleRecord>;
  /**
   * The record at once, then each change until a final state; heartbeats while idle; ends when `signal` aborts.
   * While the store cannot be read it asks again, for up to `storeWaitMs`, then ends with STORE_UNAVAILABLE.
   * @throws SolgateError INVALID_PARAMETER for a malformed id (at once), NOT_FOUND (on first iteration).
   */
  watch(bundleId: string, signal?: AbortSignal): AsyncGenerator<BundleWatchEvent, void, undefined>;
}

/**
 * Creates the bundles core. Long on purpose: send, status and watch share one bundle's in-memory view (the last
 * record answered, so an answer never goes back) and the store's failure handling; the checks are apart
 * (bundle-checks.ts), as are the records (bundle-record.ts) and their stores.
 */
export function createBundles(options: BundlesOptions): Bundles {
  const unavailable = () =>
    new SolgateError("BUNDLES_UNAVAILABLE", "this chain has no block engine configured (SOLGATE_JITO_URL)");

  const store = options.store ?? createMemoryBundleStore({ maxEntries: options.maxRemembered });
  const pollIntervalMs = options.pollIntervalMs ?? 400;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 15_000;
  const storeWaitMs = options.storeWaitMs ?? 10_000;
  const acceptWindowMs = options.acceptWindowMs ?? 10_000;
  const memberRecord = options.memberRecord ?? (async () => undefined);
  const onError = options.onError ?? (() => {});
  // What this replica last answered per bundle (bounded), with the send it was about: an answer never goes back
  // (a progress write lost in a failover must not turn `confirmed` into `landed`), and a final one is still
  // answered while the store cannot be read (nothing changes after it).
  const answered = new BoundedMap<string, { sentAt: number | undefined; record: BundleRecord }>(10_000);

  function answer(bundleId: string, sentAt: number | undefined, record: BundleRecord): BundleRecord {
    const before = answered.get(bundleId);
    if (before !== undefined && before.sentAt === sentAt && bundleRank(before.record.state) > bundleRank(record.state))
      return before.record;
    answered.delete(bundleId);
    answered.set(bundleId, { sentAt, record });
    return record;
  }

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

  /**
   * The answer when the store cannot be read: this replica's own final answer (nothing changes after it), else
   * STORE_UNAVAILABLE.
   */
  function unreadable(bundleId: string, error: unknown): BundleRecord {
    const before = answered.get(bundleId)?.record;
    if (before !== undefined && isFinalBundleState(before.state)) return before;
    if (isSolgateError(error) && error.reason === "STORE_UNAVAILABLE") throw storeUnreadable(bundleId, error);
    throw error;
  }

  async function read(bundleId: string, engine: BlockEngine): Promise<BundleRecord> {
    let bundle: SentBundle | undefined;
    try {
      bundle = await store.get(bundleId);
    } catch (error) {
      return unreadable(bundleId, error);
    }
    if (bundle?.record !== undefined && isFinalBundleState(bundle.record.state)) {
      return answer(bundleId, bundle.sentAt, bundle.record);
    }
    if (bundle === undefined) {
      // Not recorded: the engine's word is all there is.
      const inflight = await engineCall(() => engine.inflightStatus(bundleId));
      if (inflight.status === "Invalid") {
        // Something this replica saw land stays found after the engine forgets it (minutes later).
        const before = answered.get(bundleId);
        if (before !== undefined && before.sentAt === undefined && bundleRank(before.record.state) > 0)
          return before.record;
        throw new SolgateError(
          "NOT_FOUND",
          `Solgate holds no record of bundle ${bundleId} (it was not sent through Solgate, or its record expired) and the block engine does not hold it`,
          { bundleId },
        );
      }
      return answer(bundleId, undefined, engineRecord(bundleId, inflight, [], undefined, new Date()));
    }
    const fresh = await readSent(bundle, engine);
    // Another replica may have read it further along: the furthest record is the answer.
    const held = bundle.record;
    if (held !== undefined && bundleRank(held.state) > bundleRank(fresh.state))
      return answer(bundleId, bundle.sentAt, held);
    if (held === undefined || bundleRecordKey(held) !== bundleRecordKey(fresh)) {
      // Progress is shared so that every replica answers it; a write lost here is read again by the next one.
      await store.advance(bundleId, fresh).catch(onError);
    }
    return answer(bundleId, bundle.sentAt, fresh);
  }

  /** A recorded bundle's state now: its blockhashes, then its members' records, else the engine's word. */
  async function readSent(bundle: SentBundle, engine: BlockEngine): Promise<BundleRecord> {
    const { bundleId } = bundle;
    // Expiry is read before the chain, so that a bundle that landed in its last valid block is never called expired.
    const expiredBlockhash = await lapsed(bundle);
    const members = await Promise.all(bundle.signatures.map((signature) => memberRecord(signature)));
    const updatedAt = new Date();
    const lifetime =
      bundle.lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight: bundle.lastValidBlockHeight };
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
      return {
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
    }
    let inflight = await engineCall(() => engine.inflightStatus(bundleId));
    // Recorded a moment ago and not yet said taken: the engine may simply not have it yet (its send is under way
    // on the replica that took it); "does not hold it" would be final, and false.
    if (inflight.status === "Invalid" && !bundle.accepted && Date.now() - bundle.sentAt < acceptWindowMs) {
      inflight = { status: "Pending" };
    }
    if (expiredBlockhash !== undefined && (inflight.status === "Pending" || inflight.status === "Invalid")) {
      return {
        bundleId,
        state: "expired",
        engineStatus: inflight.status,
        reason: `blockhash ${expiredBlockhash} lapsed before the bundle landed; rebuild its transactions with a fresh blockhash, sign them again and resend`,
        signatures: bundle.signatures,
        transactions: [],
        ...lifetime,
        updatedAt,
      };
    }
    return engineRecord(bundleId, inflight, bundle.signatures, bundle.lastValidBlockHeight, updatedAt);
  }

  return {
    async send(wires) {
      const engine = options.engine;
      if (engine === undefined) throw unavailable();
      const { txs, lastValidBlockHeight } = await checkBundle(wires, {
        blockhashes: options.blockhashes,
        lookupTables: options.lookupTables,
        tipAccounts: () => engineCall(() => engine.tipAccounts()),
      });
      const signatures = txs.map((tx) => tx.signature);
      const bundleId = bundleIdOf(signatures);
      const blockhashes = [...new Set(txs.map((tx) => tx.blockhash))];
      // Recorded before anything reaches the engine: a bundle the store cannot record is refused untouched
      // (STORE_UNAVAILABLE), so that a client never hears of a bundle no replica could answer for.
      const sentAt = Date.now();
      await store.insert({
        bundleId,
        signatures,
        blockhashes,
        ...(lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight }),
        sentAt,
        accepted: false,
      });
      answered.delete(bundleId);
      // One call: the engine takes the bundle whole or not at all.
      let engineId: string;
      try {
        engineId = await engineCall(() => engine.sendBundle(txs.map((tx) => toBase64Wire(tx.wire))));
      } catch (e) {
        if (e instanceof BlockEngineRefusal) {
          // Refused: nothing was taken, so the client may fix it and send again.
          await store.delete(bundleId).catch(onError);
          throw new SolgateError("BUNDLE_REFUSED", `the block engine refused the bundle: ${e.message}`, {
            bundleId,
            engineCode: e.code,
            engineMessage: e.message,
          });
        }
        // No answer: the engine may hold it, so its record stays (it reads `invalid` if the engine does not).
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
      // A mark that does not reach the store only delays a true `invalid` by the accept window.
      await store.accept(bundleId).catch(onError);
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
    // Since when the store could not be read (a failover): the watch waits for it, for up to storeWaitMs.
    let unreadableSince: number | undefined;
    while (signal?.aborted !== true) {
      let record: BundleRecord;
      try {
        record = await read(bundleId, engine);
        unreadableSince = undefined;
      } catch (error) {
        if (!(isSolgateError(error) && error.reason === "STORE_UNAVAILABLE")) throw error;
        unreadableSince ??= Date.now();
        if (Date.now() - unreadableSince >= storeWaitMs) throw error;
        await sleep(Math.min(250, pollIntervalMs), signal);
        continue;
      }
      const key = bundleRecordKey(record);
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

/**
 * A bundle lookup the store could not answer: whether Solgate took the bundle is unknown, so the client is asked
 * to retry (STORE_UNAVAILABLE), never told it is not found.
 */
export function storeUnreadable(bundleId: string, cause: SolgateError): SolgateError {
  return new SolgateError(
    "STORE_UNAVAILABLE",
    `the shared store cannot be read, so whether Solgate took bundle ${bundleId} is unknown; retry shortly`,
    { bundleId },
    { cause, retryAfterMs: cause.retryAfterMs ?? 1000 },
  );
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

/** A {@link LookupTableReader} over the chain's RPC: the checked, cached resolver of src/solana/lookup-tables.ts. */
export function lookupTablesFromRpc(rpc: Rpc<GetMultipleAccountsApi>): LookupTableReader {
  return createLookupTableResolver({ rpc });
}
