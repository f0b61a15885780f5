/**
 * The correction of raw landing odds by what happened to the sends Solgate itself tracked.
 *
 * Each tracked send is remembered with the raw odds its price had when it was sent and the slot it was
 * sent at; the block follower then sees whether its signature appears in a block within k slots. Once k
 * slots have passed, the outcome (landed within k, or not) joins the last `maxOutcomes` outcomes.
 *
 * The correction maps a price's *score* to calibrated odds g(score). The score says where the price stands in
 * the model (landing-odds.ts): below the model's edge (the priority past which every run of slots cleared) it is
 * the raw odds r in [0, 1); at or above the edge it is 1 + log2(priority / edge priority), so that it keeps
 * rising with the fee where the raw odds are flat. The correction is therefore fee-dependent: it can learn that
 * sends just above the edge land less often than sends far above it, and so raise the recommended price.
 *
 * The outcomes are put in twenty bins of the score (exactly 0, ten tenths of (0, 1), exactly 1, then margins above the
 * edge of quarters of a doubling of the priority up to 1, halves up to 2, then 2-3 and 3+ doublings: a hot
 * account's landing share can climb from a few percent to all within one doubling); each bin's landed share is shrunk toward
 * the bin's mean raw odds by a Beta prior of strength `priorWeight` (posterior mean (landed + a*r) / (n + a)),
 * so that a bin with few sends stays near the model and a bin with none stands at the model's value at its
 * centre (with a tenth of the prior's weight); the bin values are made non-decreasing by pool-adjacent-violators (isotonic regression weighted by
 * n + a), and g interpolates linearly between the bins' mean scores (not across the edge: below it, exactly at
 * it, and past it each take their own side's value). With no outcomes g is the raw odds.
 * Each calibrated value carries its weight (the pooled n + a), so a caller can take its uncertainty into account.
 * Outcomes count less as they age: an outcome's weight halves every `halfLifeSlots` slots (150) since its send, so
 * n is a weighted count and the correction follows a market that drifts.
 */

import { BoundedMap } from "../bounded-map.ts";

/** Options of {@link createOddsCalibration}. */
export interface OddsCalibrationOptions {
  /** Outcomes kept (default 4,000): the newest count. */
  maxOutcomes?: number;
  /** Strength of each bin's Beta prior, in sends (default 30). */
  priorWeight?: number;
  /** Sends watched at once (default 20,000); the oldest are forgotten past it. */
  maxPending?: number;
  /**
   * How long a send stays watched once its outcome is taken, while it is not seen: this many slots past its send
   * (default 0). The fee odds keep a window's worth, to tell a send that still waits why (fee-odds.ts `waiting`).
   */
  keepSlots?: number;
  /**
   * Half-life of an outcome's weight, in slots since its send (default 150, the fee window): the correction
   * follows a market that drifts. Infinity weighs every kept outcome alike.
   */
  halfLifeSlots?: number;
}

/** A send being watched. */
export interface PendingSend {
  /** Raw odds of its price when sent. */
  readonly rawOdds: number;
  /** The score of its price when sent (see above; default: its raw odds). */
  readonly score?: number;
  /** The newest slot known when it was sent. */
  readonly sentSlot: bigint;
  /** Slot it was seen in, once seen. */
  landedSlot?: bigint;
  /** Whether its outcome was taken (or given up on); it stays watched until seen or `keepSlots` past. */
  settled?: boolean;
}

/** The correction. */
export interface OddsCalibration {
  /** Watches a send (its first signature, base64 of the 64 bytes). */
  track(signatureKey: string, send: PendingSend): void;
  /** The watched send with this signature, if any. */
  pending(signatureKey: string): PendingSend | undefined;
  /** Whether any send is watched (so that blocks need not be scanned for signatures otherwise). */
  watching(): boolean;
  /** Sends watched now. */
  pendingCount(): number;
  /**
   * Settles every watched send whose k slots have passed by `newestSlot`, and stops watching those seen or
   * `keepSlots` past their send.
   */
  settle(newestSlot: bigint, withinSlots: number): void;
  /** Takes no outcome from the sends watched now (after blocks whose signatures could not be read). */
  forgetPending(): void;
  /** A price's raw odds and score to calibrated odds (non-decreasing in the score). */
  apply(rawOdds: number, score?: number): number;
  /** The calibrated odds with their weight in sends (the pooled n + prior; the prior's alone without outcomes). */
  estimate(rawOdds: number, score?: number): { odds: number; weight: number };
  /**
   * The first slot after its send that a send typically lands in (the 10th percentile of the landing delays of
   * the last 1,000 sends that landed within k; 1 until 20 have): slots before it are out of a new send's reach
   * (the time a send takes to reach the leader, and the lag of the slot it was sent at).
   */
  firstReachable(withinSlots: number): number;
  /** Outcomes held. */
  outcomes(): number;
}

const BINS = 10;
/** Which side of the edge a score is on: below (raw odds), at (exactly 1), past. */
const sideOf = (score: number) => (score < 1 ? 0 : score === 1 ? 1 : 2);
/** Upper ends of the bins above the model's edge, in score (1 + doublings of the priority past the edge). */
const ABOVE = [1.25, 1.5, 1.75, 2, 2.5, 3, 4, Number.POSITIVE_INFINITY];
/** A score in an empty bin above the edge: its middle (the last one's: 4.5). */
const ABOVE_CENTERS = [1.125, 1.375, 1.625, 1.875, 2.25, 2.75, 3.5, 4.5];
/** Bins: exactly 0, the ten tenths, exactly 1 (a zero price at an edge that is its own priority), then ABOVE. */
const ALL_BINS = BINS + 2 + ABOVE.length;

/**
 * Creates a correction with no outcomes (the identity).
 *
 * Just over ~150 lines: the outcome ring, the binned fit and the watched sends share one memory.
 */
export function createOddsCalibration(options: OddsCalibrationOptions = {}): OddsCalibration {
  const maxOutcomes = options.maxOutcomes ?? 4000;
  const priorWeight = options.priorWeight ?? 30;
  const maxPending = options.maxPending ?? 20_000;
  const keepSlots = BigInt(options.keepSlots ?? 0);
  const halfLife = options.halfLifeSlots ?? 150;
  if (!(halfLife > 0)) throw new RangeError(`halfLifeSlots must be above 0, got ${halfLife}`);
  const sentAt = new Float64Array(maxOutcomes);
  let newestSettled = 0;
  const pending = new BoundedMap<string, PendingSend>(maxPending);
  const raw = new Float64Array(maxOutcomes);
  const scores = new Float64Array(maxOutcomes);
  const landed = new Uint8Array(maxOutcomes);
  let count = 0;
  let next = 0;
  let points: { x: number; y: number; w: number }[] | undefined;
  const DELAYS = 1000;
  const delays = new Uint16Array(DELAYS);
  let delayCount = 0;
  let delayNext = 0;

  function record(rawOdds: number, score: number, sentSlot: bigint, ok: boolean): void {
    sentAt[next] = Number(sentSlot);
    raw[next] = rawOdds;
    scores[next] = score;
    landed[next] = ok ? 1 : 0;
    next = (next + 1) % maxOutcomes;
    count = Math.min(count + 1, maxOutcomes);
    points = undefined;
  }

  function binOf(score: number): number {
    if (score <= 0) return 0;
    if (score < 1) return 1 + Math.min(BINS - 1, Math.floor(score * BINS));
    if (score === 1) return BINS + 1;
    let b = 0;
    while (score >= ABOVE[b]) b++;
    return BINS + 2 + b;
  }

  function mapping(): { x: number; y: number; w: number }[] {
    if (points !== undefined) return points;
    const n = new Float64Array(ALL_BINS);
    const hits = new Float64Array(ALL_BINS);
    const sumRaw = new Float64Array(ALL_BINS);
    const sumScore = new Float64Array(ALL_BINS);
    for (let i = 0; i < count; i++) {
      const b = binOf(scores[i]);
      const w = Number.isFinite(halfLife) ? 2 ** (-Math.max(0, newestSettled - sentAt[i]) / halfLife) : 1;
      n[b] += w;
      hits[b] += w * landed[i];
      sumRaw[b] += w * raw[i];
      sumScore[b] += w * scores[i];
    }
    // Pooled blocks of bins: value, weight, and the x (mean score) of their members.
    const blocks: { y: number; w: number; xs: number[] }[] = [];
    for (let b = 0; b < ALL_BINS; b++) {
      // A bin without outcomes stands at the model's own value at its centre, with the prior's weight.
      const above = b > BINS;
      const center = b === 0 ? 0 : b === BINS + 1 ? 1 : above ? ABOVE_CENTERS[b - BINS - 2] : (b - 0.5) / BINS;
      const empty = n[b] < 1e-6;
      if (empty && b === BINS + 1) continue; // exactly 1 stands for itself only when sends were made there
      const meanRaw = empty ? Math.min(1, center) : sumRaw[b] / n[b];
      const x = empty ? center : sumScore[b] / n[b];
      // An empty bin's prior weighs a tenth: enough to keep the fit's shape where nothing was sent, too little
      // to pull a neighbour's outcomes toward the model.
      const prior = empty ? priorWeight / 10 : priorWeight;
      const w = n[b] + prior;
      blocks.push({ y: (hits[b] + prior * meanRaw) / w, w, xs: [x] });
      while (blocks.length > 1 && blocks[blocks.length - 2].y > blocks[blocks.length - 1].y) {
        const last = blocks.pop()!;
        const prev = blocks.pop()!;
        const w2 = prev.w + last.w;
        blocks.push({ y: (prev.y * prev.w + last.y * last.w) / w2, w: w2, xs: [...prev.xs, ...last.xs] });
      }
    }
    points = blocks.flatMap((block) => block.xs.map((x) => ({ x, y: block.y, w: block.w })));
    return points;
  }

  function estimate(rawOdds: number, score: number = rawOdds): { odds: number; weight: number } {
    if (count === 0) return { odds: rawOdds, weight: priorWeight };
    const p = mapping();
    if (score <= p[0].x) return { odds: p[0].y, weight: p[0].w };
    for (let i = 1; i < p.length; i++) {
      if (score <= p[i].x) {
        // The edge is a seam: below it the score is raw odds, past it doublings of the priority, and exactly 1 is
        // a zero price at an edge that is its own priority (blocks with room: it ties with the unpriced traffic,
        // which any positive price outbids). Interpolating across the seam would make a price of 1 look like a
        // zero price, or a zero price like the bin below; each side takes its own side's value instead.
        if (sideOf(p[i - 1].x) !== sideOf(p[i].x)) {
          const side = sideOf(score);
          // Exactly at the edge with no sends made there: the value past it, as for any price that clears every run,
          // but no more than its raw odds (a price that ties with the edge's transaction may lose the tie; its raw
          // odds count every such run as lost, and only sends made at the edge can say better).
          const own = side === sideOf(p[i].x) || (side === 1 && sideOf(p[i].x) === 2) ? p[i] : p[i - 1];
          if (side === 1 && sideOf(own.x) === 2 && rawOdds < own.y) return { odds: rawOdds, weight: priorWeight };
          return { odds: own.y, weight: own.w };
        }
        const span = p[i].x - p[i - 1].x;
        const t = span === 0 ? 1 : (score - p[i - 1].x) / span;
        return { odds: p[i - 1].y + t * (p[i].y - p[i - 1].y), weight: p[i - 1].w + t * (p[i].w - p[i - 1].w) };
      }
    }
    const last = p[p.length - 1];
    return { odds: last.y, weight: last.w };
  }

  return {
    track(signatureKey, send) {
      pending.set(signatureKey, send);
    },
    pending: (key) => pending.get(key),
    watching: () => pending.size > 0,
    pendingCount: () => pending.size,
    settle(newestSlot, k) {
      if (Number(newestSlot) > newestSettled) {
        newestSettled = Number(newestSlot);
        if (Number.isFinite(halfLife)) points = undefined; // the weights aged
      }
      const lapsed = newestSlot - keepSlots;
      for (const [key, send] of pending) {
        const horizon = send.sentSlot + BigInt(k);
        if (send.settled === true) {
          // Its outcome taken already: only watched for its sighting.
        } else if (send.landedSlot !== undefined && send.landedSlot <= horizon) {
          record(send.rawOdds, send.score ?? send.rawOdds, send.sentSlot, true);
          delays[delayNext] = Math.max(0, Math.min(65535, Number(send.landedSlot - send.sentSlot)));
          delayNext = (delayNext + 1) % DELAYS;
          delayCount = Math.min(delayCount + 1, DELAYS);
          send.settled = true;
        } else if (newestSlot >= horizon) {
          record(send.rawOdds, send.score ?? send.rawOdds, send.sentSlot, false);
          send.settled = true;
        }
        if (send.settled === true && (send.landedSlot !== undefined || send.sentSlot < lapsed)) pending.delete(key);
      }
    },
    forgetPending() {
      for (const send of pending.values()) send.settled = true;
    },
    apply: (rawOdds, score) => estimate(rawOdds, score).odds,
    estimate,
    firstReachable(k) {
      if (delayCount < 20) return 1;
      const sorted = delays.slice(0, delayCount).sort();
      const d = sorted[Math.floor(delayCount / 10)];
      return Math.max(1, Math.min(k, d));
    },
    outcomes: () => count,
  };
}
