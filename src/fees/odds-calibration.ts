/**
 * The correction of raw landing odds by what happened to the sends Solgate itself tracked.
 *
 * Each tracked send is remembered with the raw odds its price had when it was sent and the slot it was
 * sent at; the block follower then sees whether its signature appears in a block within k slots. Once k
 * slots have passed, the outcome (landed within k, or not) joins the last `maxOutcomes` outcomes.
 *
 * The correction maps raw odds r to calibrated odds g(r): the outcomes are put in twelve bins of r (exactly 0,
 * ten tenths of (0, 1), exactly 1); each bin's landed share is shrunk toward the bin's mean raw odds by a Beta
 * prior of strength `priorWeight` (posterior mean (landed + a*r) / (n + a)), so that a bin with few sends stays
 * near the model and a bin with none stands at its centre; the bin values are made non-decreasing by
 * pool-adjacent-violators (isotonic regression weighted by n + a), and g interpolates linearly between the
 * bins' mean raw odds. With no outcomes g is the identity.
 */

/** Options of {@link createOddsCalibration}. */
export interface OddsCalibrationOptions {
  /** Outcomes kept (default 4,000): the newest count. */
  maxOutcomes?: number;
  /** Strength of each bin's Beta prior, in sends (default 30). */
  priorWeight?: number;
  /** Sends awaiting their outcome (default 20,000); the oldest are forgotten past it. */
  maxPending?: number;
}

/** A send being watched. */
export interface PendingSend {
  /** Raw odds of its price when sent. */
  readonly rawOdds: number;
  /** The newest slot known when it was sent. */
  readonly sentSlot: bigint;
  /** Slot it was seen in, once seen. */
  landedSlot?: bigint;
}

/** The correction. */
export interface OddsCalibration {
  /** Watches a send (its first signature, base64 of the 64 bytes). */
  track(signatureKey: string, send: PendingSend): void;
  /** The watched send with this signature, if any. */
  pending(signatureKey: string): PendingSend | undefined;
  /** Whether any send is watched (so that blocks need not be scanned for signatures otherwise). */
  watching(): boolean;
  /** Settles every watched send whose k slots have passed by `newestSlot`. */
  settle(newestSlot: bigint, withinSlots: number): void;
  /** Forgets every watched send (e.g. after blocks whose signatures could not be read). */
  forgetPending(): void;
  /** Raw odds to calibrated odds (non-decreasing). */
  apply(rawOdds: number): number;
  /**
   * The first slot after its send that a send typically lands in (the 10th percentile of the landing delays of
   * the last 1,000 sends that landed within k; 1 until 20 have): slots before it are out of a new send's reach
   * (the time a send takes to reach the leader, and the lag of the slot it was sent at).
   */
  firstReachable(withinSlots: number): number;
  /** Outcomes held. */
  outcomes(): number;
  /** Increments when the mapping changes. */
  version(): number;
}

const BINS = 10;

/** Creates a correction with no outcomes (the identity). */
export function createOddsCalibration(options: OddsCalibrationOptions = {}): OddsCalibration {
  const maxOutcomes = options.maxOutcomes ?? 4000;
  const priorWeight = options.priorWeight ?? 30;
  const maxPending = options.maxPending ?? 20_000;
  const pending = new Map<string, PendingSend>();
  const raw = new Float64Array(maxOutcomes);
  const landed = new Uint8Array(maxOutcomes);
  let count = 0;
  let next = 0;
  let version = 0;
  let points: { x: number; y: number }[] | undefined;
  const DELAYS = 1000;
  const delays = new Uint16Array(DELAYS);
  let delayCount = 0;
  let delayNext = 0;

  function record(rawOdds: number, ok: boolean): void {
    raw[next] = rawOdds;
    landed[next] = ok ? 1 : 0;
    next = (next + 1) % maxOutcomes;
    count = Math.min(count + 1, maxOutcomes);
    points = undefined;
    version++;
  }

  function binOf(r: number): number {
    if (r <= 0) return 0;
    if (r >= 1) return BINS + 1;
    return 1 + Math.min(BINS - 1, Math.floor(r * BINS));
  }

  function mapping(): { x: number; y: number }[] {
    if (points !== undefined) return points;
    const n = new Float64Array(BINS + 2);
    const hits = new Float64Array(BINS + 2);
    const sumRaw = new Float64Array(BINS + 2);
    for (let i = 0; i < count; i++) {
      const b = binOf(raw[i]);
      n[b]++;
      hits[b] += landed[i];
      sumRaw[b] += raw[i];
    }
    // Pooled blocks of bins: value, weight, and the x of their members.
    const blocks: { y: number; w: number; xs: number[] }[] = [];
    for (let b = 0; b < BINS + 2; b++) {
      // A bin without outcomes stands at the model's own value (its centre), with the prior's weight.
      const center = b === 0 ? 0 : b === BINS + 1 ? 1 : (b - 0.5) / BINS;
      const mean = n[b] === 0 ? center : sumRaw[b] / n[b];
      const w = n[b] + priorWeight;
      blocks.push({ y: (hits[b] + priorWeight * mean) / w, w, xs: [mean] });
      while (blocks.length > 1 && blocks[blocks.length - 2].y > blocks[blocks.length - 1].y) {
        const last = blocks.pop()!;
        const prev = blocks.pop()!;
        const w2 = prev.w + last.w;
        blocks.push({ y: (prev.y * prev.w + last.y * last.w) / w2, w: w2, xs: [...prev.xs, ...last.xs] });
      }
    }
    points = blocks.flatMap((block) => block.xs.map((x) => ({ x, y: block.y })));
    return points;
  }

  return {
    track(signatureKey, send) {
      if (pending.size >= maxPending) pending.delete(pending.keys().next().value!);
      pending.set(signatureKey, send);
    },
    pending: (key) => pending.get(key),
    watching: () => pending.size > 0,
    settle(newestSlot, k) {
      for (const [key, send] of pending) {
        const horizon = send.sentSlot + BigInt(k);
        if (send.landedSlot !== undefined && send.landedSlot <= horizon) {
          record(send.rawOdds, true);
          delays[delayNext] = Math.max(0, Math.min(65535, Number(send.landedSlot - send.sentSlot)));
          delayNext = (delayNext + 1) % DELAYS;
          delayCount = Math.min(delayCount + 1, DELAYS);
          pending.delete(key);
        } else if (newestSlot >= horizon) {
          record(send.rawOdds, false);
          pending.delete(key);
        }
      }
    },
    forgetPending: () => pending.clear(),
    apply(rawOdds) {
      if (count === 0) return rawOdds;
      const p = mapping();
      if (rawOdds <= p[0].x) return p[0].y;
      for (let i = 1; i < p.length; i++) {
        if (rawOdds <= p[i].x) {
          const span = p[i].x - p[i - 1].x;
          const t = span === 0 ? 1 : (rawOdds - p[i - 1].x) / span;
          return p[i - 1].y + t * (p[i].y - p[i - 1].y);
        }
      }
      return p[p.length - 1].y;
    },
    firstReachable(k) {
      if (delayCount < 20) return 1;
      const sorted = delays.slice(0, delayCount).sort();
      const d = sorted[Math.floor(delayCount / 10)];
      return Math.max(1, Math.min(k, d));
    },
    outcomes: () => count,
    version: () => version,
  };
}
