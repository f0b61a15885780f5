/**
 * The fee market of one chain: follows blocks into a sliding window of compute-unit prices and answers
 * fee levels from memory, globally, for a set of write-locked accounts, or for a draft transaction.
 *
 * Levels are nearest-rank percentiles (see percentile.ts): low/medium/high/veryHigh = p25/p50/p75/p95.
 * For accounts, each level is the maximum of the global level and that level of each account.
 * `recommended` is medium, raised to `recommendedFloor` and capped by `recommendedCeiling`.
 *
 * Source of truth, in order: the block window while blocks can be read (`blocks`); otherwise the node's
 * `getRecentPrioritizationFees`, polled in the background (`recentPrioritizationFees`); otherwise
 * nothing (`none`, no levels), never invented numbers. Requests never wait on the upstream, except
 * `forTransaction`, which may read lookup tables (cached) and, in fallback, the accounts' recent fees.
 */
import { SolgateError } from "../errors.ts";
import type { SubscribeUpdateBlock } from "../../gen/geyser/geyser_pb.js";
import type { GetBlockApi, GetMultipleAccountsApi, GetRecentPrioritizationFeesApi, GetSlotApi, Rpc } from "@solana/kit";
import { computeBudgetOf } from "../solana/compute-budget.ts";
import { decodeWireTransaction, staticWritableAccounts } from "../solana/wire-transaction.ts";
import { createBlockFollower } from "./block-follower.ts";
import type { FollowerState } from "./block-follower.ts";
import type { FeeEstimate, FeeSource, PriorityLevelName } from "./fee-estimate.ts";
import type { FeeWindow } from "./fee-window.ts";
import { createFeeFallback } from "./fee-fallback.ts";
import { createFeeFeed } from "./fee-feed.ts";
import type { FeeFeedEvent } from "./fee-feed.ts";
import { createFeeOdds } from "./fee-odds.ts";
import type { FeeOdds, OddsAt, WaitingOdds } from "./fee-odds.ts";
import { createFeeReplication } from "./fee-replication.ts";
import type { FleetFollowing } from "./fee-replication.ts";
import { blockSnapshot, estimateOf, fallbackSnapshot } from "./fee-snapshot.ts";
import type { FeeSnapshot } from "./fee-snapshot.ts";
import { createFeeWindow } from "./fee-window.ts";
import { streamBlockOf } from "./geyser-block.ts";
import type { StreamBlock } from "./geyser-block.ts";
import type { FeeWindowStats } from "./fee-window.ts";
import { REFERENCE_CANDIDATE } from "./landing-odds.ts";
import type { Candidate } from "./landing-odds.ts";
import { createLookupTableResolver } from "../solana/lookup-tables.ts";
import { maxLevels } from "./percentile.ts";
import type { FeeLevels } from "./percentile.ts";
import { fetchRecentFeeLevels } from "./recent-fees.ts";
import { tipLevelsAdder } from "./tip-levels.ts";
import type { TipLevelSource } from "./tip-levels.ts";
import { REFERENCE_SHAPE, costShapeOf } from "./transaction-cost.ts";

const NO_PROGRESS: FollowerState = {
  tipSlot: undefined,
  nextSlot: undefined,
  consecutiveFailures: 0,
  refused: false,
  lastError: undefined,
  lastBlockAt: undefined,
  lastBlockSlot: undefined,
  lastMoveAt: undefined,
  droppedSlots: 0n,
  firstSlot: undefined,
};

export { PRICE_UNIT } from "./fee-estimate.ts";
export type { FeeFeedEvent } from "./fee-feed.ts";
export type { BaseFee, FeeEstimate, FeeSource, PriorityLevelName, PriorityLevels } from "./fee-estimate.ts";

/**
 * Blocks pushed by a stream (the Geyser block stream, src/upstream/geyser-blocks.ts): while it is healthy,
 * the market takes its blocks as they come and reads none over JSON-RPC but a check every `streamCheckMs`.
 */
export interface FeeBlockStream {
  healthy(): boolean;
  onBlock(listener: (block: SubscribeUpdateBlock) => void): () => void;
}

/** New blocks announced by slot alone (src/upstream/geyser-source.ts). */
export interface BlockAnnouncements {
  onBlock(listener: () => void): () => void;
}

/** The upstream calls the fee market makes. */
export type FeeMarketRpc = Rpc<GetSlotApi & GetBlockApi & GetRecentPrioritizationFeesApi & GetMultipleAccountsApi>;

/** Options of {@link createFeeMarket}. */
export interface FeeMarketOptions {
  /** The chain's upstream; only its kit `rpc` is used. */
  upstream: { readonly rpc: FeeMarketRpc };
  /** Window length in slots (default 150). */
  windowSlots?: number;
  /** Most accounts tracked (default 100,000); the coldest are dropped past it. */
  maxAccounts?: number;
  /** Time between ticks (default 400 ms, one slot). */
  pollIntervalMs?: number;
  /** A stream of blocks: fed at once from it while it is healthy; polling is the fallback. */
  stream?: FeeBlockStream;
  /**
   * Announces new blocks without their contents (the Geyser status stream): each runs a tick now rather than at
   * the next poll, and one that arrives while a tick runs gets one more tick after it, so that it is not left for
   * the next poll.
   */
  announcements?: BlockAnnouncements;
  /**
   * While the stream is healthy, how often the tick still asks the node its slot and reads any slot the
   * stream did not bring (default 5,000 ms).
   */
  streamCheckMs?: number;
  /** Stream blocks kept while a tick runs, to be applied after it (default 64; the oldest go first). */
  maxPendingStreamBlocks?: number;
  /** Most slots read per tick (default 20); older unread ones are dropped. */
  maxCatchUpSlots?: number;
  /** Slots read back from the tip at start (default `maxCatchUpSlots`, at most `windowSlots`). */
  backfillSlots?: number;
  /** getBlock calls in flight at once (default 4). */
  blockConcurrency?: number;
  /** Failed ticks in a row after which blocks count as unreadable (default 3). */
  failureThreshold?: number;
  /** Blocks count as stale when the newest block read is more than this many slots behind the tip (default `maxCatchUpSlots`). */
  maxLagSlots?: number;
  /** While blocks are unreadable, how often they are tried again (default 5 s). */
  blockRetryMs?: number;
  /** While in fallback, how often `getRecentPrioritizationFees` is polled (default 2 s). */
  fallbackRefreshMs?: number;
  /** The least `recommended` may be (default 0). */
  recommendedFloor?: bigint;
  /** The most `recommended` may be (default: none). */
  recommendedCeiling?: bigint;
  /** Landing odds: k, the slots within which a send must land (default 4). */
  oddsSlots?: number;
  /** The odds `recommended` must reach within k slots (default 0.9). */
  oddsTarget?: number;
  /**
   * How many standard deviations of their uncertainty the odds of `recommended` must clear the target by (default 1;
   * fee-odds.ts). No environment variable sets it: the calibration bench does, to measure the margin.
   */
  oddsConfidence?: number;
  /** The chain's block and per-account CU limits the odds assume (defaults agave 3.0's 60M and, with SIMD-0306, 24M). */
  blockCuLimit?: number;
  accountCuLimit?: number;
  /** Fewest blocks in the window before odds are given (default 32). */
  oddsMinBlocks?: number;
  /** Lookup-table cache: time to live (default 60 s) and size (default 10,000 tables). */
  lookupTableTtlMs?: number;
  maxLookupTables?: number;
  /**
   * In a fleet: the lease of following blocks, and the log its holder writes its window's changes to.
   * A replica without the lease reads no blocks: it replays the log (window-log.ts).
   */
  replication?: FleetFollowing;
  /** Sees every block the window takes (tip-levels.ts' observed tips): wraps the window as the odds do. */
  observer?: { feeding(window: FeeWindow): FeeWindow };
  /**
   * Jito tip levels, carried beside the priority levels in every estimate (GetFees, EstimateFees and the
   * watch, which publishes a change of them as it does a change of the levels); absent while it knows none.
   */
  tips?: Pick<TipLevelSource, "current">;
  /** Called with background failures (block reads, fallback polls), for logs. */
  onError?: (error: unknown, during: "blocks" | "fallback" | "replication") => void;
  /** A fee watch with nothing new gets a heartbeat after this long (default 15 s). */
  watchHeartbeatMs?: number;
  now?: () => number;
}

/** What the market is doing, for health checks, metrics and tests. */
export interface FeeMarketStatus {
  readonly source: FeeSource;
  readonly follower: FollowerState;
  readonly window: FeeWindowStats;
  readonly fallbackAt: number | undefined;
  readonly lookupTables: number;
}

/** One chain's fee market. */
export interface FeeMarket {
  /** Starts following blocks (the first tick runs at once). Idempotent. */
  start(): void;
  /** Stops following and waits for the tick in progress to end. */
  stop(): Promise<void>;
  /** Runs one tick now (tests, and callers that cannot wait for the next poll). */
  refresh(): Promise<void>;
  /** The global levels. Answered from memory. */
  global(): FeeEstimate;
  /**
   * Levels for a transaction that write-locks `writable`. Answered from memory. In fallback the node's
   * per-account floors are not in memory, so this gives the global levels (`forTransaction` asks the node).
   */
  forAccounts(writable: readonly string[], signatures?: number): FeeEstimate;
  /**
   * Levels for a draft transaction (wire bytes, signed or not): its static write locks plus those it loads
   * from lookup tables. @throws SolgateError INVALID_TRANSACTION for bytes that do not decode or unknown tables.
   */
  forTransaction(wire: Uint8Array): Promise<FeeEstimate>;
  /** The price for a named level (`auto` = recommended) given the write locks; undefined without data. */
  priceFor(level: PriorityLevelName, writable: readonly string[]): bigint | undefined;
  /**
   * The global levels as they move (FeeService.WatchFees): the current estimate at once, then one whenever
   * the levels, their odds, their source or the tip levels change, at most one per slot, and heartbeats in between;
   * until `signal` aborts. Every watch gets the same event objects.
   */
  watch(signal: AbortSignal): AsyncGenerator<FeeFeedEvent>;
  /** Fee watches open now. */
  watchers(): number;
  /**
   * Watches a send Solgate made (wire bytes already checked): its outcome within k slots corrects the odds,
   * and while it waits `waiting` can say why.
   */
  trackSend(wire: Uint8Array): void;
  /** For a tracked send still unseen while blocks are too full for its fee: its odds and the fee that would land now. */
  waiting(wire: Uint8Array): WaitingOdds | undefined;
  /** The odds' k and target. */
  readonly odds: Pick<FeeOdds, "withinSlots" | "target" | "stats">;
  /**
   * Odds at any price within any k (default the market's) for a draft (wire bytes; static and lookup-table write
   * locks, its own cost shape); undefined while blocks cannot say (fallback, or too few blocks yet).
   * @throws SolgateError INVALID_PARAMETER (field `withinSlots`) for a k outside 1 .. min(150, window - 1);
   * INVALID_TRANSACTION for bytes that do not decode.
   */
  oddsForTransaction(wire: Uint8Array, withinSlots?: number): Promise<OddsAt | undefined>;
  status(): FeeMarketStatus;
}

/**
 * Creates a stopped market; call `start()`.
 *
 * Longer than a factory should be (~350 lines): the tick (blocks read or streamed, the fleet's log, the
 * fallback) and the answers (estimates, odds, waiting sends) share the snapshot cache and the follower's state,
 * which each tick moves and every answer reads. The parts with state of their own are already beside it (the
 * window, the follower, the odds, the fallback, the feed, the replication, the lookup tables); what stays here
 * is the glue between them.
 */
export function createFeeMarket(options: FeeMarketOptions): FeeMarket {
  const rpc = options.upstream.rpc;
  const now = options.now ?? Date.now;
  const pollIntervalMs = options.pollIntervalMs ?? 400;
  const maxCatchUpSlots = options.maxCatchUpSlots ?? 20;
  const failureThreshold = options.failureThreshold ?? 3;
  const maxLagSlots = BigInt(options.maxLagSlots ?? maxCatchUpSlots);
  const blockRetryMs = options.blockRetryMs ?? 5000;
  const fallbackRefreshMs = options.fallbackRefreshMs ?? 2000;
  const stream = options.stream;
  const streamCheckMs = options.streamCheckMs ?? 5000;
  const maxPending = options.maxPendingStreamBlocks ?? 64;
  const floor = options.recommendedFloor ?? 0n;
  const ceiling = options.recommendedCeiling;
  if (ceiling !== undefined && ceiling < floor)
    throw new RangeError(`recommendedCeiling ${ceiling} is below recommendedFloor ${floor}`);

  const bounds = { floor, ceiling };
  const onError = options.onError ?? (() => {});
  const baseWindow = createFeeWindow({ windowSlots: options.windowSlots, maxAccounts: options.maxAccounts });
  const odds = createFeeOdds({
    windowSlots: baseWindow.windowSlots,
    withinSlots: options.oddsSlots,
    target: options.oddsTarget,
    confidence: options.oddsConfidence,
    blockCuLimit: options.blockCuLimit,
    accountCuLimit: options.accountCuLimit,
    minBlocks: options.oddsMinBlocks,
  });
  const observed = options.observer?.feeding(baseWindow) ?? baseWindow;
  const replica = createFeeReplication(odds.feeding(observed), options.replication, (error) =>
    onError(error, "replication"),
  );
  const window = replica.window;
  const follower = createBlockFollower({
    rpc,
    window,
    maxCatchUpSlots,
    backfillSlots: options.backfillSlots,
    blockConcurrency: options.blockConcurrency,
    now,
  });
  const fallback = createFeeFallback({
    rpc,
    refreshMs: fallbackRefreshMs,
    now,
    onError: (error) => onError(error, "fallback"),
  });
  const lookupTables = createLookupTableResolver({
    rpc,
    ttlMs: options.lookupTableTtlMs,
    maxTables: options.maxLookupTables,
    now,
  });

  const feed = createFeeFeed({ heartbeatMs: options.watchHeartbeatMs, now });
  const withTips = options.tips === undefined ? (estimate: FeeEstimate) => estimate : tipLevelsAdder(options.tips);
  let lastBlockAttempt = Number.NEGATIVE_INFINITY;
  let lastStreamCheck = Number.NEGATIVE_INFINITY;
  // Stream blocks not applied yet: they arrived during a tick, or after a gap the tick must read first.
  const pending: StreamBlock[] = [];
  let offStream: (() => void) | undefined;
  let offAnnouncements: (() => void) | undefined;
  // A block was announced during the tick in progress: one more tick follows it.
  let tickAgain = false;
  let snapshot: FeeSnapshot | undefined;
  let snapshotKey = "";
  let globalEstimate: FeeEstimate | undefined;
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let abort = new AbortController();

  /** The follower's progress: this replica's own, or the lease holder's as read from the log. */
  function followerState(): FollowerState {
    return replica.leading() ? follower.state() : (replica.mirrored() ?? NO_PROGRESS);
  }

  function blocksUsable(state: FollowerState = followerState()): boolean {
    if (state.refused || state.consecutiveFailures >= failureThreshold) return false;
    if (state.lastBlockSlot === undefined || state.tipSlot === undefined) return false;
    return state.tipSlot - state.lastBlockSlot <= maxLagSlots;
  }

  function current(): FeeSnapshot {
    const state = followerState();
    const usable = blocksUsable(state);
    const recent = fallback.current();
    const key = `${window.version()}:${recent?.fetchedAt}:${usable}`;
    if (snapshot !== undefined && key === snapshotKey) return snapshot;
    snapshotKey = key;
    snapshot = usable || recent === undefined ? blockSnapshot(window, state) : fallbackSnapshot(recent);
    globalEstimate = undefined;
    return snapshot;
  }

  function quoterFor(candidate: Candidate) {
    return (levels: FeeLevels) => odds.quote(levels, candidate, bounds);
  }

  /** The candidate of a transaction known only by its write locks: the reference shape with its counts. */
  function candidateOf(accounts: readonly string[], signatures: number): Candidate {
    if (accounts.length === 0 && signatures === 1) return REFERENCE_CANDIDATE;
    return {
      shape: { ...REFERENCE_SHAPE, signatures, writableAccounts: Math.max(1, accounts.length) },
      writable: accounts,
    };
  }

  function forCandidate(accounts: readonly string[], signatures: number, candidate: Candidate): FeeEstimate {
    const view = current();
    let levels = view.levels;
    if (view.source === "blocks")
      for (const address of accounts) levels = maxLevels(levels, window.account(address)?.levels);
    return withTips(estimateOf(view, levels, accounts, signatures, bounds, quoterFor(candidate)));
  }

  function forAccounts(writable: readonly string[], signatures = 1): FeeEstimate {
    const accounts = [...new Set(writable)];
    return forCandidate(accounts, signatures, candidateOf(accounts, signatures));
  }

  /** The candidate of a decoded transaction: its own cost shape (agave's defaults where it sets no limit). */
  function candidateOfTransaction(wire: Uint8Array, knownWritable?: readonly string[]) {
    const tx = decodeWireTransaction(wire);
    // Without the lookup tables resolved (tracked sends), the static write locks.
    const writable = knownWritable ?? staticWritableAccounts(tx.message);
    const signatures = tx.message.header.numSignerAccounts;
    const shape = costShapeOf(tx.message, signatures, writable.length);
    return { tx, signatures, candidate: { shape, writable } as Candidate };
  }

  function global(): FeeEstimate {
    const view = current();
    globalEstimate ??= estimateOf(view, view.levels, [], 1, bounds, quoterFor(REFERENCE_CANDIDATE));
    return withTips(globalEstimate);
  }

  /**
   * Applies the pending stream blocks in order. Without `force` it stops at a gap (a block whose parent was not
   * read) so that a tick can read the missing slots; with it, they count as dropped. Returns whether it stopped.
   */
  function applyStream(force: boolean): boolean {
    while (pending.length > 0) {
      if (follower.accept(pending[0], force) === "gap") return true;
      pending.shift();
    }
    return false;
  }

  function onStreamBlock(block: SubscribeUpdateBlock): void {
    // In a fleet only the lease holder follows blocks; the others replay its log.
    if (!running || !replica.leading()) return;
    let converted: StreamBlock;
    try {
      converted = streamBlockOf(block);
    } catch (error) {
      onError(error, "blocks");
      return;
    }
    pending.push(converted);
    if (pending.length > maxPending) pending.shift();
    if (inFlight !== undefined) return; // applied when the tick in progress ends
    if (applyStream(false)) {
      void runOnce(); // a gap: the tick reads the missing slots, then applies the rest
      return;
    }
    void replica.logChanges(follower.state());
    feed.offer(global());
  }

  async function cycle(): Promise<void> {
    const signal = abort.signal;
    if (!(await replica.turn())) {
      pending.length = 0;
      feed.offer(global());
      return;
    }
    const gap = applyStream(false);
    // On the stream, the tick only checks now and then, or reads the slots a gap left out.
    const streaming = stream?.healthy() === true && blocksUsable();
    const due = !streaming || gap || now() - lastStreamCheck >= streamCheckMs;
    if (due && (blocksUsable() || now() - lastBlockAttempt >= blockRetryMs)) {
      lastBlockAttempt = now();
      if (streaming) lastStreamCheck = now();
      await follower.tick(signal);
      const state = follower.state();
      if (state.consecutiveFailures > 0) onError(state.lastError, "blocks");
    }
    applyStream(true);
    await replica.logChanges(follower.state());
    if (!blocksUsable()) await fallback.refreshIfDue(signal);
    feed.offer(global()); // also precomputes, so that requests never sort
  }

  function runOnce(): Promise<void> {
    inFlight ??= cycle().finally(() => {
      inFlight = undefined;
      if (tickAgain) {
        tickAgain = false;
        onAnnouncement();
      }
    });
    return inFlight;
  }

  function onAnnouncement(): void {
    if (!running) return;
    if (inFlight !== undefined) tickAgain = true;
    else void runOnce().catch(() => {});
  }

  function schedule(): void {
    if (!running) return;
    timer = setTimeout(() => {
      timer = undefined;
      void runOnce().then(schedule, schedule);
    }, pollIntervalMs);
    timer.unref();
  }

  return {
    start() {
      if (running) return;
      running = true;
      abort = new AbortController();
      offStream = stream?.onBlock(onStreamBlock);
      offAnnouncements = options.announcements?.onBlock(onAnnouncement);
      void runOnce().then(schedule, schedule);
    },

    async stop() {
      running = false;
      offStream?.();
      offStream = undefined;
      offAnnouncements?.();
      offAnnouncements = undefined;
      tickAgain = false;
      pending.length = 0;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      abort.abort(new Error("fee market stopped"));
      await inFlight?.catch(() => {});
      // Another replica takes the following over at once rather than after the lease lapses.
      await replica.release();
    },

    refresh: runOnce,

    global,

    forAccounts,

    async forTransaction(wire) {
      const tx = decodeWireTransaction(wire);
      const loaded = await lookupTables.writableOf(tx.message);
      const writable = [...new Set([...staticWritableAccounts(tx.message), ...loaded])];
      const { signatures, candidate } = candidateOfTransaction(wire, writable);
      const result = forCandidate(writable, signatures, candidate);
      if (result.source !== "recentPrioritizationFees") return result;
      // Fallback: ask the node about these accounts too (its floor for slots that locked them).
      let accountLevels: FeeLevels | undefined;
      try {
        accountLevels = (await fetchRecentFeeLevels(rpc, writable))?.levels;
      } catch (error) {
        onError(error, "fallback");
      }
      return withTips(estimateOf(current(), maxLevels(result.priority, accountLevels), writable, signatures, bounds));
    },

    priceFor(level, writable) {
      const priority = forAccounts(writable).priority;
      if (priority === undefined) return undefined;
      switch (level) {
        case "auto":
          return priority.recommended;
        case "low":
          return priority.low;
        case "medium":
          return priority.medium;
        case "high":
          return priority.high;
      }
    },

    watch(signal) {
      // Before the first tick the feed is empty: offer what there is, so that a watch starts at once.
      if (feed.latest() === undefined) feed.offer(global());
      return feed.watch(signal);
    },

    watchers: () => feed.watchers(),

    trackSend(wire) {
      const { tx, candidate } = candidateOfTransaction(wire);
      // "Within k slots" counts from the chain's slot at the send: the tip as last read, not the window's newest block.
      odds.track(tx.signatures[0], computeBudgetOf(tx.message).unitPrice, candidate, followerState().tipSlot);
    },

    waiting(wire) {
      const { tx, candidate } = candidateOfTransaction(wire);
      return odds.waiting(tx.signatures[0], computeBudgetOf(tx.message).unitPrice, candidate);
    },

    odds,

    async oddsForTransaction(wire, withinSlots = odds.withinSlots) {
      const most = Math.min(150, baseWindow.windowSlots - 1);
      if (!Number.isInteger(withinSlots) || withinSlots < 1 || withinSlots > most) {
        throw new SolgateError("INVALID_PARAMETER", `withinSlots must be a whole number from 1 to ${most}`, {
          field: "withinSlots",
        });
      }
      const tx = decodeWireTransaction(wire);
      const loaded = await lookupTables.writableOf(tx.message);
      const writable = [...new Set([...staticWritableAccounts(tx.message), ...loaded])];
      if (!blocksUsable()) return undefined;
      return odds.at(candidateOfTransaction(wire, writable).candidate, withinSlots);
    },

    status: () => ({
      source: current().source,
      follower: followerState(),
      window: window.stats(),
      fallbackAt: fallback.current()?.fetchedAt,
      lookupTables: lookupTables.size(),
    }),
  };
}
