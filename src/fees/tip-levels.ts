/**
 * Jito tip levels: percentiles of recently landed tips, in lamports, beside the priority levels of
 * GetFees and EstimateFees, and what PrepareTransaction's tip levels resolve to.
 *
 * Two sources, never mixed:
 * - with a block engine: its tip-floor feed (landed tips p25/p50/p75/p95/p99), read in the background;
 * - without one: top-level transfers to Jito's tip accounts in the blocks the fee market already reads
 *   (block-transactions.ts finds them), over the fee market's window of slots.
 * Absent while unknown: before the first good read, after `maxAgeMs` without one, while the feed says no
 * tip landed (all zeros), or while the window holds no tip. Never guessed.
 */
import type { TipFloor } from "../upstream/block-engine.ts";
import type { FeeEstimate } from "./fee-estimate.ts";
import type { FeeWindow } from "./fee-window.ts";
import { percentileOfSorted } from "./percentile.ts";

/** The named tip levels a client may pick (percentiles of landed tips); the one list of them. */
export const TIP_LEVELS = ["p25", "p50", "p75", "p95", "p99"] as const;

/** A named tip level. */
export type TipLevelName = (typeof TIP_LEVELS)[number];

const PERCENTILE: Record<TipLevelName, number> = { p25: 25, p50: 50, p75: 75, p95: 95, p99: 99 };

/** Where tip levels come from. */
export type TipSource = "blockEngine" | "blocks";

/** Landed-tip levels in lamports. */
export interface TipLevels extends Readonly<Record<TipLevelName, bigint>> {
  readonly source: TipSource;
  /** Landed tips the levels come from (0 when the source does not say: the block engine's feed). */
  readonly sampleSize: number;
  /** When they were read (block engine) or last moved (blocks). */
  readonly updatedAt: Date;
}

/** Something that knows the current tip levels. */
export interface TipLevelSource {
  /** The levels now; undefined while unknown. Answered from memory. */
  current(): TipLevels | undefined;
  start(): void;
  stop(): void;
}

/** Options of {@link createEngineTipLevels}. */
export interface EngineTipLevelsOptions {
  readonly engine: { tipFloor(): Promise<TipFloor> };
  /** How often the feed is read (default 10 s; Jito's feed moves about once a minute). */
  readonly refreshMs?: number;
  /** After how long without a good read the levels count as unknown (default 2 min). */
  readonly maxAgeMs?: number;
  readonly onError?: (error: unknown) => void;
  readonly now?: () => number;
}

/** Tip levels read from a block engine's tip floor, in the background. */
export function createEngineTipLevels(options: EngineTipLevelsOptions): TipLevelSource & { refresh(): Promise<void> } {
  const refreshMs = options.refreshMs ?? 10_000;
  const maxAgeMs = options.maxAgeMs ?? 120_000;
  const now = options.now ?? Date.now;
  let latest: { levels: TipLevels | undefined; at: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;

  function refresh(): Promise<void> {
    inFlight ??= options.engine
      .tipFloor()
      .then(
        (floor) => {
          const at = now();
          // All zeros: the feed saw no tip land, which says nothing about what would land.
          const known = TIP_LEVELS.some((level) => floor[level] > 0n);
          latest = {
            at,
            levels: known
              ? { ...pick(floor), source: "blockEngine", sampleSize: 0, updatedAt: floor.time ?? new Date(at) }
              : undefined,
          };
        },
        (error: unknown) => options.onError?.(error),
      )
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  }

  return {
    current() {
      if (latest === undefined || now() - latest.at > maxAgeMs) return undefined;
      return latest.levels;
    },
    refresh,
    start() {
      if (timer !== undefined) return;
      void refresh();
      timer = setInterval(() => void refresh(), refreshMs);
      timer.unref();
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}

function pick(values: Record<TipLevelName, bigint>): Record<TipLevelName, bigint> {
  return { p25: values.p25, p50: values.p50, p75: values.p75, p95: values.p95, p99: values.p99 };
}

/** Tip levels observed in blocks; `feeding` wraps the fee market's window so that every block it takes is seen. */
export interface ObservedTipLevels extends TipLevelSource {
  feeding(window: FeeWindow): FeeWindow;
}

/** Options of {@link createObservedTipLevels}. */
export interface ObservedTipLevelsOptions {
  /** How many slots of tips are kept (default 150, the fee window's default). */
  readonly windowSlots?: number;
  readonly now?: () => number;
}

/** Tip levels from the tips in the blocks the fee market reads (no block engine configured). */
export function createObservedTipLevels(options: ObservedTipLevelsOptions = {}): ObservedTipLevels {
  const windowSlots = BigInt(options.windowSlots ?? 150);
  const now = options.now ?? Date.now;
  // Slot -> the tips landed in it; only slots that held tips.
  const bySlot = new Map<bigint, bigint[]>();
  let newest: bigint | undefined;
  let movedAt = 0;
  let cached: TipLevels | undefined;
  let stale = true;

  function slide(slot: bigint): void {
    if (newest !== undefined && slot <= newest) return;
    newest = slot;
    for (const held of bySlot.keys()) {
      if (held <= slot - windowSlots) {
        bySlot.delete(held);
        stale = true;
      }
    }
  }

  return {
    feeding(window) {
      return {
        ...window,
        addBlock(slot, transactions) {
          const added = window.addBlock(slot, transactions);
          if (added) {
            const tips = transactions.flatMap((tx) => (tx.tip === undefined ? [] : [tx.tip]));
            slide(slot);
            if (tips.length > 0) {
              bySlot.set(slot, tips);
              movedAt = now();
              stale = true;
            }
          }
          return added;
        },
        advanceTo(slot) {
          window.advanceTo(slot);
          slide(slot);
        },
      };
    },
    current() {
      if (stale) {
        stale = false;
        const sorted = BigUint64Array.from([...bySlot.values()].flat());
        sorted.sort();
        cached =
          sorted.length === 0
            ? undefined
            : {
                ...(Object.fromEntries(
                  TIP_LEVELS.map((level) => [level, percentileOfSorted(sorted, PERCENTILE[level])!]),
                ) as Record<TipLevelName, bigint>),
                source: "blocks",
                sampleSize: sorted.length,
                updatedAt: new Date(movedAt),
              };
      }
      return cached;
    },
    start() {},
    stop() {},
  };
}

/**
 * Adds the current tip levels to estimates (the fee market's `tips` option). The same estimate with the same
 * levels gives the same object, so that GetFees' converted-once response cache keeps working and the fee
 * feed sees no change where there is none.
 */
export function tipLevelsAdder(tips: Pick<TipLevelSource, "current">): (estimate: FeeEstimate) => FeeEstimate {
  const added = new WeakMap<FeeEstimate, { tips: TipLevels | undefined; estimate: FeeEstimate }>();
  return (estimate) => {
    const levels = tips.current();
    const known = added.get(estimate);
    if (known !== undefined && known.tips === levels) return known.estimate;
    const withTips: FeeEstimate = levels === undefined ? estimate : { ...estimate, tips: levels };
    added.set(estimate, { tips: levels, estimate: withTips });
    return withTips;
  };
}
