/**
 * Landing odds for fee quotes: the block loads (landing-odds.ts) corrected by the outcomes of tracked sends
 * (odds-calibration.ts), and the recommendation as a stated rule: the cheapest price whose odds reach the
 * target within k slots. The fee market feeds it the same blocks as its window and asks it for quotes.
 */
import type { PricedTransaction } from "./block-transactions.ts";
import type { FeeWindow } from "./fee-window.ts";
import { REFERENCE_CANDIDATE, createBlockLoads } from "./landing-odds.ts";
import type { Candidate, InclusionCurve } from "./landing-odds.ts";
import { createOddsCalibration } from "./odds-calibration.ts";
import type { OddsCalibration, PendingSend } from "./odds-calibration.ts";
import type { FeeLevels } from "./percentile.ts";

/** The odds of each level and of the recommendation, within `withinSlots` slots. */
export interface LandingOddsQuote {
  readonly withinSlots: number;
  readonly low: number;
  readonly medium: number;
  readonly high: number;
  readonly veryHigh: number;
  readonly recommended: number;
}

/** Options of {@link createFeeOdds}. */
export interface FeeOddsOptions {
  windowSlots: number;
  /** k (default 4). */
  withinSlots?: number;
  /** The odds `recommended` must reach (default 0.9). */
  target?: number;
  blockCuLimit?: number;
  accountCuLimit?: number;
  /** Fewest blocks for odds (default 32). */
  minBlocks?: number;
  /**
   * How many standard deviations of its uncertainty the rule's odds must clear the target by (default 1): the
   * rule takes the cheapest price whose calibrated odds, less `confidence` x sqrt(p(1-p)/weight), reach it.
   */
  confidence?: number;
}

/** What a waiting send is told. */
export interface WaitingOdds {
  /** Its odds now, at its own price, of landing within k slots. */
  readonly odds: number;
  /** The price that would land now: the recommendation for its shape and accounts. */
  readonly landingPrice: bigint;
  /** The price it carries. */
  readonly price: bigint;
  readonly withinSlots: number;
}

/** Bounds applied to the rule's price (SOLGATE_FEES_RECOMMENDED_FLOOR / _CEILING). */
export interface PriceBounds {
  readonly floor: bigint;
  readonly ceiling: bigint | undefined;
}

/** One point of a landing curve. */
export interface OddsPoint {
  readonly price: bigint;
  readonly odds: number;
}

/** Odds of one candidate within one k, at any price (EstimateFees' questions, the fee ladder's plan and climb). */
export interface OddsAt {
  readonly withinSlots: number;
  /** Calibrated odds of landing within k slots at `price`. */
  odds(price: bigint): number;
  /**
   * The cheapest price whose odds within k slots reach `goal` (with the rule's confidence margin, as `recommended`
   * is found), and its odds; undefined when no price up to the model's reach does.
   */
  cheapest(goal: number): OddsPoint | undefined;
  /** The cheapest price whose odds are at least `floor` (no margin): the bottom of a useful range. */
  cheapestAbove(floor: number): OddsPoint | undefined;
  /** `points` prices, geometric from the cheapest with any odds to twice the edge's price, each with its odds. */
  curve(points: number): OddsPoint[];
  /**
   * Blocks after `afterSlot`, and those of them that cleared above `price` (the market refusing it, from the blocks
   * rather than the model: the fee ladder's climb).
   */
  refusedSince(afterSlot: bigint, price: bigint): { refused: number; blocks: number };
  /** The cheapest price that cleared `atLeast` (default all) of the newest `blocks` blocks (the market now: the ladder's plan). */
  clearedRecently(blocks: number, atLeast?: number): bigint | undefined;
}

/** The odds side of one fee market. */
export interface FeeOdds {
  readonly withinSlots: number;
  readonly target: number;
  /** A window that also feeds the odds every change it accepts. */
  feeding(window: FeeWindow): FeeWindow;
  /** The recommendation and odds for `levels` and a candidate; undefined while odds cannot be estimated. */
  quote(
    levels: FeeLevels,
    candidate: Candidate,
    bounds: PriceBounds,
  ): { recommended: bigint; odds: LandingOddsQuote } | undefined;
  /**
   * Watches a send: its first signature's bytes, its price, what it is, and the chain's slot when it was sent
   * (default: the newest slot in the window).
   */
  track(signature: Uint8Array, price: bigint, candidate: Candidate, sentSlot?: bigint): void;
  /**
   * For a watched send still unseen: when every block since it was sent was too full for its priority and its
   * price is below the price that lands now, its odds and that price; otherwise undefined.
   */
  waiting(signature: Uint8Array, price: bigint, candidate: Candidate): WaitingOdds | undefined;
  /**
   * Odds at any price within any k (1 to the window's length less one); undefined while odds cannot be estimated.
   * The correction learnt from sends within the market's own k is applied as it is: a stated approximation for
   * other k (docs/landing.md).
   */
  at(candidate: Candidate, withinSlots: number): OddsAt | undefined;
  /** Outcomes the correction holds, and blocks held (status, tests). */
  stats(): { outcomes: number; blocks: number; watching: number };
}

const keyOf = (signature: Uint8Array) =>
  Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength).toString("base64");

/**
 * Creates the odds of a fee market.
 *
 * Long (~220 lines): the rule, the quotes, the waiting sends and the outcomes share the block loads, the two
 * corrections (which also hold the tracked sends) and the memoised reference curve.
 */
export function createFeeOdds(options: FeeOddsOptions): FeeOdds {
  const target = options.target ?? 0.9;
  if (!(target > 0 && target < 1)) throw new RangeError(`target must be between 0 and 1, got ${target}`);
  const confidence = options.confidence ?? 1;
  if (!(confidence >= 0)) throw new RangeError(`confidence must be at least 0, got ${confidence}`);
  const loads = createBlockLoads(options);
  const k = loads.withinSlots;
  // Two corrections: sends that write-lock an account contended in the window (a hot account's market moves
  // apart from the block's), and the others. Each learns from its own sends only. They are also where a send is
  // watched for `waiting`, until seen or its blockhash must have lapsed (a window of slots).
  const corrections = {
    open: createOddsCalibration({ keepSlots: options.windowSlots }),
    contended: createOddsCalibration({ keepSlots: options.windowSlots }),
  };
  const watched = (key: string): PendingSend | undefined =>
    corrections.open.pending(key) ?? corrections.contended.pending(key);
  const correctionOf = (candidate: Candidate) =>
    candidate.writable.length > 0 && loads.contended(candidate.writable) ? corrections.contended : corrections.open;
  let newest: bigint | undefined;

  let memoKey = "";
  let memoCurve: InclusionCurve | undefined;
  function curveOf(candidate: Candidate): InclusionCurve | undefined {
    const reach = correctionOf(candidate).firstReachable(k);
    if (candidate !== REFERENCE_CANDIDATE) return loads.curve(candidate, reach);
    const key = `${loads.version()}:${reach}`;
    if (key !== memoKey) {
      memoKey = key;
      memoCurve = loads.curve(candidate, reach);
    }
    return memoCurve;
  }

  /** Calibrated odds, to four decimals (finer digits would claim a precision ~150 runs do not have). */
  function oddsOf(curve: InclusionCurve, price: bigint, calibration: OddsCalibration): number {
    const { raw, score } = curve.position(price);
    return Math.round(calibration.apply(raw, score) * 10_000) / 10_000;
  }

  /** The odds of a price, less `confidence` standard deviations of their uncertainty; and the odds themselves. */
  function judge(curve: InclusionCurve, price: bigint, calibration: OddsCalibration) {
    const { raw, score } = curve.position(price);
    const { odds, weight } = calibration.estimate(raw, score);
    return { odds, lower: odds - confidence * Math.sqrt((odds * (1 - odds)) / weight) };
  }

  /**
   * The rule: the cheapest price whose calibrated odds reach the target with `confidence` (else the cheapest with
   * the best odds). Prices tried: each step of the raw curve up to the edge, then 1/16 doublings of the priority
   * past the edge up to 2^12 times it; the first that passes is refined by bisection from the one before it.
   */
  function ruleOf(curve: InclusionCurve, calibration: OddsCalibration, goal = target): bigint {
    const runs = curve.runMinima.length;
    const steps: bigint[] = [];
    const push = (price: bigint | undefined) => {
      if (price !== undefined && (steps.length === 0 || price > steps[steps.length - 1])) steps.push(price);
    };
    for (let j = 0; j <= runs; j++) {
      const price = curve.cheapestClearing(j);
      if (price === undefined) break;
      push(price);
    }
    if (curve.edge !== undefined) for (let m = 1; m <= 12 * 16; m++) push(curve.priceAbove(curve.edge * 2 ** (m / 16)));
    let best: { price: bigint; odds: number } | undefined;
    let previous: bigint | undefined;
    for (const price of steps) {
      const { odds, lower } = judge(curve, price, calibration);
      if (lower >= goal) {
        // Bisect between the last price that failed and this one (odds rise with the price between two steps).
        let low = previous ?? price;
        let high = price;
        while (high - low > 1n && previous !== undefined) {
          const mid = (low + high) / 2n;
          if (judge(curve, mid, calibration).lower >= goal) high = mid;
          else low = mid;
        }
        return high;
      }
      if (best === undefined || odds > best.odds + 1e-9) best = { price, odds };
      previous = price;
    }
    return best?.price ?? 0n;
  }

  function observe(slot: bigint, transactions: readonly PricedTransaction[]): void {
    if (!corrections.open.watching() && !corrections.contended.watching()) return;
    for (const tx of transactions) {
      if (tx.signature === undefined) continue;
      const send = watched(keyOf(tx.signature));
      if (send !== undefined && send.landedSlot === undefined) send.landedSlot = slot;
    }
    // Replayed blocks (a fleet replica) carry prices and write locks only: outcomes cannot be told, so none are taken.
    if (transactions.length > 0 && transactions.every((tx) => tx.signatures === undefined)) {
      corrections.open.forgetPending();
      corrections.contended.forgetPending();
    }
  }

  function moved(slot: bigint): void {
    newest = slot;
    corrections.open.settle(slot, k);
    corrections.contended.settle(slot, k);
  }

  return {
    withinSlots: k,
    target,
    feeding(window) {
      return {
        ...window,
        addBlock(slot, transactions) {
          const added = window.addBlock(slot, transactions);
          if (added) {
            loads.addBlock(slot, transactions);
            observe(slot, transactions);
            moved(slot);
          }
          return added;
        },
        advanceTo(slot) {
          const before = window.version();
          window.advanceTo(slot);
          if (window.version() !== before) {
            loads.advanceTo(slot);
            moved(slot);
          }
        },
      };
    },

    quote(levels, candidate, bounds) {
      const curve = curveOf(candidate);
      if (curve === undefined) return undefined;
      const calibration = correctionOf(candidate);
      let recommended = ruleOf(curve, calibration);
      if (recommended < bounds.floor) recommended = bounds.floor;
      if (bounds.ceiling !== undefined && recommended > bounds.ceiling) recommended = bounds.ceiling;
      return {
        recommended,
        odds: {
          withinSlots: k,
          low: oddsOf(curve, levels.low, calibration),
          medium: oddsOf(curve, levels.medium, calibration),
          high: oddsOf(curve, levels.high, calibration),
          veryHigh: oddsOf(curve, levels.veryHigh, calibration),
          recommended: oddsOf(curve, recommended, calibration),
        },
      };
    },

    track(signature, price, candidate, sentSlot) {
      const curve = curveOf(candidate);
      if (curve === undefined || newest === undefined) return;
      const key = keyOf(signature);
      const at = sentSlot !== undefined && sentSlot > newest ? sentSlot : newest;
      const { raw, score } = curve.position(price);
      correctionOf(candidate).track(key, { rawOdds: raw, score, sentSlot: at });
    },

    waiting(signature, price, candidate) {
      const send = watched(keyOf(signature));
      if (send === undefined || send.landedSlot !== undefined) return undefined;
      const curve = curveOf(candidate);
      if (curve === undefined || !curve.waitedSince(send.sentSlot, price)) return undefined;
      const calibration = correctionOf(candidate);
      const landingPrice = ruleOf(curve, calibration);
      if (price >= landingPrice) return undefined;
      return { odds: oddsOf(curve, price, calibration), landingPrice, price, withinSlots: k };
    },

    at(candidate, withinSlots) {
      const calibration = correctionOf(candidate);
      const curve = loads.curve(candidate, calibration.firstReachable(withinSlots), withinSlots);
      if (curve === undefined) return undefined;
      const oddsAt = (price: bigint) => oddsOf(curve, price, calibration);
      return {
        withinSlots,
        odds: oddsAt,
        cheapest(goal) {
          const price = ruleOf(curve, calibration, goal);
          const odds = oddsAt(price);
          return judge(curve, price, calibration).lower >= goal ? { price, odds } : undefined;
        },
        cheapestAbove(floor) {
          // The raw curve's steps are where the odds change below the edge; past it the score rises with the price.
          for (let j = 0; j <= curve.runMinima.length; j++) {
            const price = curve.cheapestClearing(j);
            if (price === undefined) break;
            const odds = oddsAt(price);
            if (odds >= floor) return { price, odds };
          }
          if (curve.edge === undefined) return undefined;
          const price = curve.priceAbove(curve.edge);
          return price === undefined ? undefined : { price, odds: oddsAt(price) };
        },
        curve(points) {
          const low = curve.cheapestClearing(1) ?? 0n;
          const high = curve.edge === undefined ? undefined : curve.priceAbove(curve.edge * 2);
          if (high === undefined) return [];
          const from = Number(low < 1n ? 1n : low);
          const to = Math.max(Number(high), from + points);
          const out: OddsPoint[] = [];
          for (let i = 0; i < points; i++) {
            let price = BigInt(Math.round(from * (to / from) ** (i / (points - 1))));
            // Near 1 the geometric steps round onto each other: step by one then.
            if (out.length > 0 && price <= out[out.length - 1].price) price = out[out.length - 1].price + 1n;
            out.push({ price, odds: oddsAt(price) });
          }
          return out;
        },
        refusedSince: (afterSlot, price) => curve.refusedSince(afterSlot, price),
        clearedRecently: (blocks, atLeast) => curve.clearedRecently(blocks, atLeast),
      };
    },

    stats: () => ({
      outcomes: corrections.open.outcomes() + corrections.contended.outcomes(),
      blocks: loads.blocks(),
      watching: corrections.open.pendingCount() + corrections.contended.pendingCount(),
    }),
  };
}
