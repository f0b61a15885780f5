/**
 * The one status engine of a chain. Once per tick it reads the statuses of every tracked and every
 * watched signature together (`getSignatureStatuses`, 256 per call), rebroadcasts tracked sends that
 * are still unseen, declares expired those whose blockhash lapsed unseen, and tells the watchers of
 * each signature about each change once. Upstream calls per tick depend on how many signatures are
 * in flight, never on how many clients watch them. A send waiting for confirmation also follows the
 * node's notification for its signature (when the upstream has a WebSocket), which brings the next
 * tick forward to that moment.
 *
 * With a Geyser stream (stream-status.ts), a tick takes statuses from what the stream delivered and reads
 * from the node only what the stream cannot vouch for; a status the stream delivers about a signature
 * followed here (a `confirm: false` send too) ticks at once.
 *
 * Expiry is judged against a block height read *before* the statuses it is combined with, so a
 * transaction that landed in the last valid block is never called expired.
 *
 * In a fleet (a shared store), the replica holding the store's lease does the fleet-wide work: it
 * follows every send in flight and rebroadcasts. The others follow only the sends their own clients
 * wait on, and hear of every change through the store, so upstream calls do not grow with replicas.
 * The engine is the only writer of the store.
 */
import type {
  GetBlockHeightApi,
  GetSignatureStatusesApi,
  GetTransactionApi,
  Rpc,
  SendTransactionApi,
} from "@solana/kit";
import { SolgateError, isSolgateError } from "../errors.ts";
import type { SignatureFeed } from "../upstream/signature-feed.ts";
import type { BlockhashCache } from "./blockhash-cache.ts";
import { sendWire } from "./chain-calls.ts";
import { createStatusBatcher, fetchStatuses } from "./status-batcher.ts";
import type { TrackedSend, TransactionStore } from "./transaction-store.ts";
import { isAdvance, isTerminalState, observeStatus } from "./transaction-status.ts";
import { publicRecord, stepTrackedSend } from "./tracked-send.ts";
import type { StepContext } from "./tracked-send.ts";
import type { SignatureStatusView, StatusRecord, WaitingReason } from "./transaction-status.ts";
import { createStatusWaits } from "./status-waits.ts";
import { createWatcherRegistry } from "./watchers.ts";
import { createTickPacer } from "./tick-pacer.ts";
import { createChainRecords } from "./chain-records.ts";
import { ASK_THE_NODE } from "./stream-status.ts";
import type { StreamStatuses } from "./stream-status.ts";
import type { WatchEvent } from "./watchers.ts";
import { BoundedMap } from "../bounded-map.ts";

/** The upstream methods the engine uses. */
export type StatusEngineRpc = Rpc<GetSignatureStatusesApi & GetBlockHeightApi & SendTransactionApi & GetTransactionApi>;

/** Options of {@link createStatusEngine}. */
export interface StatusEngineOptions {
  rpc: StatusEngineRpc;
  store: TransactionStore;
  blockhashes: BlockhashCache;
  /**
   * Pushed notifications (the node's `signatureSubscribe`): a confirm-and-wait send's confirmation
   * brings the next tick forward to the moment the node announces it. Polling alone without it.
   */
  feed?: Pick<SignatureFeed, "follow">;
  /**
   * Statuses the Geyser stream delivered (stream-status.ts): while the stream is usable, a tick takes a
   * signature's status from it instead of the node, and a tick reads from the node only what the stream
   * cannot vouch for (a signature not yet read in this epoch of the stream, an expiry to confirm, an error it
   * could not decode). Status lookups of recently seen signatures are answered from it too.
   */
  stream?: Pick<StreamStatuses, "lookup" | "usable" | "epoch" | "onChange">;
  /** Time between ticks (default 400 ms, about a slot). */
  pollIntervalMs?: number;
  /**
   * Time between ticks while a confirm-and-wait send is waiting without a notification to come (no feed,
   * or its subscription not yet acknowledged) (default 20 ms): its latency is the client's.
   */
  confirmPollIntervalMs?: number;
  /** Least time between block-height reads, which only expiry needs (default 1 s). */
  heightIntervalMs?: number;
  /** Time between sends of a transaction not yet seen in a block (default 2 s). */
  rebroadcastIntervalMs?: number;
  /** Idle time after which a watch stream gets a heartbeat (default 15 s). */
  heartbeatIntervalMs?: number;
  /** Signatures Solgate did not send that may be watched at once (default 100,000). */
  maxWatchedSignatures?: number;
  /**
   * Why an unseen send waits (the fee market's `waiting`): its odds and the price that would land now, when the
   * blocks it competes in are too full for its fee. Without it records never carry `waiting`.
   */
  waiting?: (wire: Uint8Array) => WaitingReason | undefined;
  /** Receives errors of background work (a failed tick, a failed rebroadcast). */
  onError?: (error: unknown) => void;
  /** Clock, for tests. */
  now?: () => number;
}

/** Counters for metrics and benchmarks. */
export interface StatusEngineStats {
  ticks: number;
  /** Tracked sends not yet final, as of the last full tick. */
  inFlight: number;
  /** Those sends by state (`submitted`, `confirmed`), as of the last full tick. */
  inFlightByState: Readonly<Record<string, number>>;
  rebroadcasts: number;
  watchers: number;
  watchedSignatures: number;
  /** Statuses a tick took from the stream, and those it read from the node (`getSignatureStatuses`). */
  streamStatuses: number;
  nodeStatuses: number;
  /** Status lookups (GetTransactionStatus of a signature Solgate does not track) answered from the stream. */
  streamLookups: number;
}

/** The engine. */
export interface StatusEngine {
  /**
   * Starts following a send (its first submission is the caller's), unless the send is tracked already.
   * @returns undefined when it starts following it; the send as tracked already otherwise (a duplicate).
   */
  track(send: TrackedSend): Promise<TrackedSend | undefined>;
  /** The tracked send with this signature, if any. */
  tracked(signature: string): Promise<TrackedSend | undefined>;
  /**
   * Stops tracking a send whose first submission failed, so that the client may simply retry it, unless another
   * replica found it tracked meanwhile and answered `submitted` for it: then it stays tracked and is rebroadcast.
   * @returns whether it was forgotten.
   */
  forget(signature: string): Promise<boolean>;
  /** The node said it has the send already (it is not rebroadcast). */
  noteLanded(signature: string): Promise<void>;
  /** The send's blockhash lifetime, learnt after it was tracked. */
  noteLifetime(
    signature: string,
    lifetime: Pick<TrackedSend, "lastValidBlockHeight" | "expiryExact" | "commitment">,
  ): Promise<void>;
  /** Where a signature stands: tracked, watched, or read from the chain; undefined when the chain knows nothing. */
  record(signature: string): Promise<StatusRecord | undefined>;
  /**
   * Waits until a tracked send is confirmed, failed or expired (or finalized); after `timeoutMs`, or
   * if the signal aborts, answers with the record as it stands / rejects with the abort reason.
   */
  settle(signature: string, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<StatusRecord>;
  /**
   * The record at once, then each change until a terminal state; heartbeats while idle. Ends when
   * `signal` aborts, freeing everything the stream held.
   * @throws SolgateError NOT_FOUND (on first iteration) when the signature is neither tracked nor known to the chain.
   */
  watch(signature: string, signal?: AbortSignal): AsyncGenerator<WatchEvent, void, undefined>;
  /** The newest slot seen in a status response. */
  newestSlot(): bigint;
  stats(): StatusEngineStats;
  start(): void;
  /** Stops ticking and ends every watch stream. */
  stop(): void;
}

/**
 * Creates the engine; call `start()`.
 *
 * Longer than a factory should be (~470 lines), on purpose for now: its parts (the tick that reads statuses, the
 * pushed confirmations, the answers to reads and the watches) share one piece of state, the in-process view of
 * every followed send and who waits on it, and each writes that view under the rules the others read it by. The
 * pieces that stand alone already live beside it (status-waits.ts, watchers.ts, status-batcher.ts,
 * stream-status.ts); splitting the rest means passing that view between files, a change for its own commit with
 * the status tests run under load.
 */
export function createStatusEngine(options: StatusEngineOptions): StatusEngine {
  const { rpc, store, blockhashes } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 400;
  const confirmPollIntervalMs = Math.min(options.confirmPollIntervalMs ?? 20, pollIntervalMs);
  const heightIntervalMs = options.heightIntervalMs ?? 1000;
  const rebroadcastIntervalMs = options.rebroadcastIntervalMs ?? 2000;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 15_000;
  const maxWatched = options.maxWatchedSignatures ?? 100_000;
  const onError = options.onError ?? (() => {});
  const now = options.now ?? Date.now;

  const registry = createWatcherRegistry(now);
  const batcher = createStatusBatcher({ rpc });
  // Records of watched signatures Solgate did not send, shared by all their watchers.
  const untracked = new Map<string, StatusRecord>();
  // Watched signatures not yet confirmed, followed on the feed (Geyser, else PubSub): its word polls them now.
  const pushed = new Map<string, AbortController>();
  function stopPush(signature: string): void {
    pushed.get(signature)?.abort();
    pushed.delete(signature);
  }
  const stats = {
    ticks: 0,
    rebroadcasts: 0,
    inFlight: 0,
    inFlightByState: {} as Readonly<Record<string, number>>,
    streamStatuses: 0,
    nodeStatuses: 0,
    streamLookups: 0,
  };
  const stream = options.stream;
  // The stream's epoch in which each followed signature was last read from the node: within that epoch the
  // stream's silence about it means "no news".
  const readInEpoch = new Map<string, number>();
  // Sends followed here as of the last full tick (plus those tracked since): a stream status about one ticks now.
  let followedHere = new Set<string>();
  // Those of them the stream spoke of since the last tick.
  const spokenOf = new Set<string>();
  // Records of landed transactions Solgate did not send, answered from the stream: kept while the stream says the
  // same (state and slot), so that a repeated lookup costs no call (the fee is read once) and is the same object.
  const seenRecords = new BoundedMap<string, StatusRecord>(10_000);
  // The public record of each tracked send as stored, the same object while the send does not change.
  const publicRecords = new WeakMap<TrackedSend, StatusRecord>();
  let height: bigint | undefined;
  let heightReadAt = -Infinity;
  let fullTickAt = -Infinity;
  let lastSweepAt = 0;
  let slot = 0n;

  const chain = createChainRecords(rpc, onError, now);

  async function advanceTracked(
    send: TrackedSend,
    status: SignatureStatusView | null,
    ctx: StepContext,
    rebroadcasts: Promise<void>[],
  ): Promise<void> {
    const step = stepTrackedSend(send, status, ctx);
    if (step.kind !== "transition" && status === null && send.state === "submitted") await announceWaiting(send);
    if (step.kind === "none") return;
    if (step.kind === "transition") {
      announced.delete(send.signature);
      const next = step.next;
      const fee =
        next.state === "expired" ? undefined : (next.fee ?? next.expectedFee ?? (await chain.feeOf(next.signature)));
      const record = fee === undefined ? next : { ...next, fee };
      if (isTerminalState(next.state)) followedHere.delete(next.signature);
      await store.put(record);
      await store.publish(publicRecord(record));
      return;
    }
    await store.put(step.next);
    if (step.kind !== "rebroadcast") return;
    stats.rebroadcasts++;
    rebroadcasts.push(
      sendWire(rpc, send.wire, { commitment: send.commitment, blockhash: send.blockhash }).then(
        () => {},
        (error: unknown) => {
          // A lapsed blockhash shows up as expiry on a later tick; anything else is worth a log line.
          if (!(isSolgateError(error) && error.reason === "BLOCKHASH_EXPIRED")) onError(error);
        },
      ),
    );
  }

  // The landing price last announced to watchers per waiting send, so that a stream hears of a change, not every tick.
  const announced = new BoundedMap<string, bigint>(100_000);

  function waitingOf(send: TrackedSend): WaitingReason | undefined {
    if (send.state !== "submitted" || send.landed || send.wire.length === 0) return undefined;
    try {
      return options.waiting?.(send.wire);
    } catch (error) {
      onError(error);
      return undefined;
    }
  }

  /** Tells watchers why a send waits, when the reason is new or its landing price moved. */
  async function announceWaiting(send: TrackedSend): Promise<void> {
    const waiting = waitingOf(send);
    if (waiting === undefined || announced.get(send.signature) === waiting.landingPrice) return;
    announced.set(send.signature, waiting.landingPrice);
    await store.publish({ ...publicRecord(send), waiting });
  }

  async function advanceUntracked(signature: string, status: SignatureStatusView | null): Promise<void> {
    const current = untracked.get(signature);
    if (current === undefined || status === null) return;
    if (!isAdvance(current.state, observeStatus(status).state)) return;
    const next = await chain.recordOf(signature, status, current.fee);
    if (untracked.get(signature) !== current) return; // every watcher left meanwhile
    if (isTerminalState(next.state)) untracked.delete(signature);
    else untracked.set(signature, next);
    if (next.state !== "submitted") stopPush(signature);
    registry.publish(next);
  }

  /**
   * The sends this tick follows: every send in flight, on the lease holder's full ticks (one per poll
   * interval); else only those waited on here (the fast ticks of a confirm-and-wait send, and a
   * replica without the lease).
   */
  async function sendsToFollow(leading: boolean): Promise<TrackedSend[]> {
    if (leading && now() - fullTickAt >= pollIntervalMs) {
      fullTickAt = now();
      fullTick = true;
      spokenOf.clear();
      const active = await store.active();
      stats.inFlight = active.length;
      const byState: Record<string, number> = {};
      for (const send of active) byState[send.state] = (byState[send.state] ?? 0) + 1;
      stats.inFlightByState = byState;
      return active;
    }
    // Plus the sends the stream just spoke of (a confirm: false send among them): pushed, not left for the next
    // full tick.
    const due = new Set([...pacer.waited(), ...spokenOf]);
    spokenOf.clear();
    const waited = await Promise.all([...due].map((signature) => store.get(signature)));
    return waited.filter((s): s is TrackedSend => s !== undefined && !isTerminalState(s.state));
  }

  let fullTick = false;

  /**
   * The statuses of this tick's signatures: from the stream where it vouches for them, else from the node.
   * A submitted send that may have expired is always read from the node: expiry is decided on a read
   * that came after the height that proves the lapse, never on the stream's silence.
   */
  async function readStatuses(
    active: readonly TrackedSend[],
    watchedOnly: readonly string[],
    mayHaveExpired: (send: TrackedSend) => boolean,
  ): Promise<{ statuses: Map<string, SignatureStatusView | null>; slot: bigint }> {
    const statuses = new Map<string, SignatureStatusView | null>();
    const toRead: string[] = [];
    const usable = stream?.usable() === true;
    const epoch = stream?.epoch();
    // `known`: where the signature stands here (a tracked send, or a watched signature's record). One confirmed
    // in slot S is finalized when the stream says S is, though the stream never delivered it.
    const consider = (signature: string, send: TrackedSend | undefined, known: StatusRecord | undefined) => {
      if (!usable || stream === undefined) {
        toRead.push(signature);
        return;
      }
      const finalizedBySlot = known?.state === "confirmed" && known.error === undefined ? known.slot : undefined;
      const said = stream.lookup(signature, finalizedBySlot);
      if (said !== undefined && said !== ASK_THE_NODE) {
        statuses.set(signature, said);
        stats.streamStatuses++;
      } else if (
        said === undefined &&
        readInEpoch.get(signature) === epoch &&
        (send === undefined || !mayHaveExpired(send))
      ) {
        statuses.set(signature, null); // no news since the last read, which the stream would have carried
        stats.streamStatuses++;
      } else {
        toRead.push(signature);
      }
    };
    for (const send of active) consider(send.signature, send, send);
    for (const signature of watchedOnly) consider(signature, undefined, untracked.get(signature));
    if (toRead.length === 0) return { statuses, slot: 0n };
    const read = await fetchStatuses(rpc, toRead, false);
    stats.nodeStatuses += toRead.length;
    for (const [signature, status] of read.statuses) statuses.set(signature, status);
    if (epoch !== undefined) for (const signature of toRead) readInEpoch.set(signature, epoch);
    return { statuses, slot: read.slot };
  }

  async function tick(): Promise<void> {
    stats.ticks++;
    fullTick = false;
    const leading = await store.lease.hold();
    const active = await sendsToFollow(leading);
    const activeSignatures = new Set(active.map((s) => s.signature));
    const watchedOnly = [...untracked.keys()].filter((s) => !activeSignatures.has(s));
    if (fullTick) {
      followedHere = activeSignatures;
      for (const signature of readInEpoch.keys()) {
        if (!activeSignatures.has(signature) && !untracked.has(signature)) readInEpoch.delete(signature);
      }
    }
    if (active.length > 0 || watchedOnly.length > 0) {
      const t = now();
      const heightBefore = height;
      // Unseen: not landed as far as the node said, nor as the stream says now. A send the stream already
      // delivered needs no height read (and its tick waits for none).
      const usable = stream?.usable() === true;
      const streamSaw = (signature: string) => {
        const said = usable ? stream?.lookup(signature) : undefined;
        return said !== undefined && said !== ASK_THE_NODE;
      };
      const unseen = active.filter((s) => s.state === "submitted" && !s.landed && !streamSaw(s.signature));
      const heightDue = unseen.length > 0 && t - heightReadAt >= heightIntervalMs;
      const heightCall = heightDue ? rpc.getBlockHeight({ commitment: "confirmed" }).send() : undefined;
      if (heightDue) heightReadAt = t;
      heightCall?.catch(() => {}); // awaited below; keep an early rejection from going unhandled
      // Sends whose limit is only an upper bound: ask whether their blockhash still stands before a rebroadcast.
      const lapsed = new Set<string>();
      const toCheck = new Map<string, "processed" | "confirmed">();
      for (const s of unseen) {
        if (!s.expiryExact && t - s.lastBroadcastAt >= rebroadcastIntervalMs) toCheck.set(s.blockhash, s.commitment);
      }
      await Promise.all(
        [...toCheck].map(async ([blockhash, commitment]) => {
          if (!(await blockhashes.isValid(blockhash, commitment))) lapsed.add(blockhash);
        }),
      );
      const read = await readStatuses(
        active,
        watchedOnly,
        (send) =>
          (heightBefore !== undefined &&
            send.lastValidBlockHeight !== undefined &&
            heightBefore > send.lastValidBlockHeight) ||
          lapsed.has(send.blockhash),
      );
      if (read.slot > slot) slot = read.slot;
      if (heightCall !== undefined) {
        try {
          height = BigInt(await heightCall);
          blockhashes.noteBlockHeight(height, now() - t); // as of the call, made at t (its answer may have waited)
        } catch (error) {
          onError(error); // expiry waits for the next reading; the statuses are still applied
        }
      }
      const rebroadcasts: Promise<void>[] = [];
      await Promise.all([
        ...active.map((send) =>
          advanceTracked(
            send,
            read.statuses.get(send.signature) ?? null,
            {
              heightBefore,
              blockhashLapsed: lapsed.has(send.blockhash),
              now: t,
              // Only the lease holder rebroadcasts: once per period for the whole fleet.
              rebroadcastIntervalMs: leading ? rebroadcastIntervalMs : Number.POSITIVE_INFINITY,
            },
            rebroadcasts,
          ),
        ),
        ...watchedOnly.map((s) => advanceUntracked(s, read.statuses.get(s) ?? null)),
      ]);
      await Promise.all(rebroadcasts);
    }
    // Sweeping every watcher on every fast tick would cost more than it gives: a few sweeps per interval do.
    if (now() - lastSweepAt >= Math.min(1000, heartbeatIntervalMs / 4)) {
      lastSweepAt = now();
      registry.heartbeat(slot, heartbeatIntervalMs);
    }
  }

  /**
   * A tick whose reads fail with UPSTREAM_UNAVAILABLE (the upstream's budget, retries and failover all
   * spent, or every node's breaker open) fails the sends waiting for confirmation: they would otherwise
   * hold their clients until the confirm timeout. The sends stay tracked; the client may ask again.
   */
  async function tickOrFailWaits(): Promise<void> {
    try {
      await tick();
    } catch (error) {
      if (isSolgateError(error) && error.reason === "UPSTREAM_UNAVAILABLE")
        waits.failWaiting(confirmationUnreadable(error));
      throw error;
    }
  }

  // What this replica last answered per signature (bounded): an answer never goes back. Through a failover the
  // store can lag what this replica already said (a record read from the chain while the store was away, or a
  // status update the promoted replica never got), and a client must not see `confirmed` turn into `submitted`.
  const answered = new BoundedMap<string, StatusRecord>(10_000);

  async function record(signature: string): Promise<StatusRecord | undefined> {
    const found = await currentRecord(signature);
    const before = answered.get(signature);
    if (found === undefined) {
      // Something seen in a block stays found; a send only submitted may have been forgotten (its admission
      // failed, so the client may send it again).
      return before !== undefined && before.state !== "submitted" ? before : undefined;
    }
    if (before !== undefined && isAdvance(found.state, before.state)) return before;
    answered.delete(signature);
    answered.set(signature, found);
    return found;
  }

  async function currentRecord(signature: string): Promise<StatusRecord | undefined> {
    // With the shared store away, the chain still answers for anything that reached a block; for the rest,
    // the answer is that the store cannot be read, never "not found": it may well hold a send still in flight.
    let unreadable: unknown;
    const tracked = await store.get(signature).catch((error: unknown) => {
      onError(error);
      unreadable = error;
      return undefined;
    });
    if (tracked !== undefined) {
      const waiting = waitingOf(tracked);
      if (waiting !== undefined) return { ...publicRecord(tracked), waiting };
      let found = publicRecords.get(tracked);
      if (found === undefined) publicRecords.set(tracked, (found = publicRecord(tracked)));
      return found;
    }
    const watched = untracked.get(signature);
    if (watched !== undefined) return watched;
    // Recently seen on the stream: its status from memory while the stream is usable (a terminal one at any
    // time: it cannot change), its fee read once.
    const said = stream?.lookup(signature);
    if (said !== undefined && said !== ASK_THE_NODE) {
      const state = observeStatus(said).state;
      if (stream?.usable() === true || isTerminalState(state)) {
        stats.streamLookups++;
        const kept = seenRecords.get(signature);
        if (kept !== undefined && kept.state === state && kept.slot === said.slot && kept.fee !== undefined)
          return kept;
        const found = await chain.recordOf(signature, said, kept?.fee);
        seenRecords.set(signature, found);
        return found;
      }
    }
    const status = await batcher.lookup(signature);
    if (status !== null) return chain.recordOf(signature, status);
    if (unreadable !== undefined) throw storeUnreadable(signature, unreadable);
    return undefined;
  }

  /** A signature Solgate did not send joins the polled set while someone watches it. */
  async function follow(signature: string, found: StatusRecord): Promise<void> {
    if (isTerminalState(found.state) || untracked.has(signature)) return;
    // A store that cannot be read: followed as a signature Solgate did not send (polled all the same).
    if ((await store.get(signature).catch(() => undefined)) !== undefined) return;
    if (untracked.size >= maxWatched) {
      throw new SolgateError(
        "RATE_LIMITED",
        "too many signatures are being watched; retry shortly",
        {
          maxWatchedSignatures: maxWatched,
        },
        { retryAfterMs: 5000 },
      );
    }
    untracked.set(signature, found);
    if (options.feed !== undefined && found.state === "submitted" && !pushed.has(signature)) {
      const subscription = new AbortController();
      pushed.set(signature, subscription);
      // "Look now": the watched-only signatures are polled on every tick, so one tick at once reads it.
      const followed = options.feed.follow(signature, "confirmed", subscription.signal, {
        onNotified: () => pacer.hurry(0),
        onFailed: () => pushed.delete(signature),
      });
      if (!followed) pushed.delete(signature);
    }
  }

  const pacer = createTickPacer({
    tick: tickOrFailWaits,
    pollIntervalMs,
    confirmPollIntervalMs,
    ...(options.feed === undefined ? {} : { feed: options.feed }),
    onError,
    now,
  });

  const waits = createStatusWaits({
    registry,
    record,
    async tracked(signature) {
      const send = await store.get(signature);
      return send === undefined ? undefined : publicRecord(send);
    },
    follow,
    unfollow: (signature) => {
      stopPush(signature);
      return untracked.delete(signature);
    },
    onWaitStart: pacer.waitStarted,
    now,
  });

  store.onPublished((r) => registry.publish(r));
  // A stream status about a signature followed here: tick now rather than at the next interval.
  const offStream = stream?.onChange((signature) => {
    if (followedHere.has(signature)) spokenOf.add(signature);
    else if (!untracked.has(signature)) return;
    pacer.hurry(0);
  });

  return {
    async track(send) {
      const existing = await store.insert(send);
      if (existing === undefined) followedHere.add(send.signature);
      return existing;
    },
    tracked: (signature) => store.get(signature),
    async forget(signature) {
      const forgotten = await store.delete(signature);
      if (forgotten) answered.delete(signature);
      return forgotten;
    },
    async noteLanded(signature) {
      // Read again: a tick may have moved the record on meanwhile.
      const current = await store.get(signature);
      if (current?.state === "submitted") await store.put({ ...current, landed: true });
    },
    async noteLifetime(signature, lifetime) {
      const current = await store.get(signature);
      if (current !== undefined) await store.put({ ...current, ...lifetime });
    },
    record,
    settle: waits.settle,
    watch: waits.watch,
    newestSlot: () => slot,
    stats: () => ({ ...stats, watchers: registry.size(), watchedSignatures: untracked.size }),
    start: pacer.start,
    stop() {
      offStream?.();
      pacer.stop();
      waits.closeAll();
      void store.lease.release();
    },
  };
}

/**
 * A lookup the store could not answer and the chain does not know: whether Solgate took the signature is
 * unknown, so the client is asked to retry (STORE_UNAVAILABLE), never told it is not found.
 */
export function storeUnreadable(signature: string, cause: unknown): SolgateError {
  const retryAfterMs = isSolgateError(cause) && cause.retryAfterMs !== undefined ? cause.retryAfterMs : 1000;
  return new SolgateError(
    "STORE_UNAVAILABLE",
    `the shared store cannot be read, so whether Solgate took transaction ${signature} is unknown (the chain does not know it yet); retry shortly`,
    { signature },
    { cause, retryAfterMs },
  );
}

/** What a send waiting for confirmation hears when the upstream is down: it was sent, its fate is unknown. */
function confirmationUnreadable(cause: SolgateError): SolgateError {
  return new SolgateError(
    "UPSTREAM_UNAVAILABLE",
    `the transaction was sent, but its confirmation cannot be read: ${cause.message}; ask for its status later`,
    cause.details,
    { cause, ...(cause.retryAfterMs === undefined ? {} : { retryAfterMs: cause.retryAfterMs }) },
  );
}
