/**
 * The fee ladder's core: take checked rungs, submit the cheapest through the single-send path at once, and on every
 * tick follow the ladder: which rung (if any) is in a block, whether the nonce moved, whether the next rung is due
 * (ladder-climb.ts). Safety does not rest on this code but on the nonce: every rung advances the same durable nonce,
 * so whichever lands first makes the others invalid. The code only adds "never submit a rung once one is seen in a
 * block" and "stop rebroadcasting once the ladder is over".
 */
import type { GetBlockApi, GetSignatureStatusesApi, GetSlotApi, Rpc, Signature } from "@solana/kit";
import { SolgateError, isSolgateError } from "../../errors.ts";
import { computeBudgetOf } from "../../solana/compute-budget.ts";
import { decodeWireTransaction, staticWritableAccounts } from "../../solana/wire-transaction.ts";
import type { SendOutcome, SendRequest } from "../send-transaction.ts";
import { describeTransactionError } from "../transaction-error.ts";
import { createEventQueue } from "../watchers.ts";
import { SKIP_MARGIN, nextRung, oddsAfterWaiting, shouldClimb, slotsLeft } from "./ladder-climb.ts";
import { checkLadder } from "./ladder-checks.ts";
import { readOverpay } from "./ladder-overpay.ts";
import { RECENT_LOW_BLOCKS, hasHeadroom, planOffsets } from "./ladder-plan.ts";
import { isFinalLadder, isOpenLadder } from "./ladder-record.ts";
import type { Ladder, LadderState, Rung } from "./ladder-record.ts";
import { createMemoryLadderStore } from "./ladder-store.ts";
import type { LadderStore } from "./ladder-store.ts";
import { checkRange, checkTarget, LADDER_DEFAULTS } from "./prepare-ladder.ts";
import type { LadderOddsSource } from "./prepare-ladder.ts";
import { readNonceAccount } from "./nonce-account.ts";
import type { NonceRpc } from "./nonce-account.ts";

/** A SendLadder request, decoded from the transport. */
export interface SendLadderRequest {
  readonly wires: readonly Uint8Array[];
  readonly deadlineSlots?: number;
  readonly target?: number;
  /** Skip the node's simulation of each submission (default false). */
  readonly skipPreflight?: boolean;
}

/** A watch event. */
export type LadderEvent = { kind: "ladder"; ladder: Ladder } | { kind: "heartbeat"; slot: bigint };

/** What the ladder counts, for metrics. */
export interface LadderStats {
  started: number;
  /** Ladders ended, by final state. */
  ended: Record<string, number>;
  /** Rungs submitted. */
  rungsSubmitted: number;
  /** Sums over landed ladders whose overpay is known: fee paid, and the cheapest fee in the same block. */
  feePaidLamports: bigint;
  cheapestFeeLamports: bigint;
  overpayMeasured: number;
}

/** Options of {@link createLadders}. */
export interface LaddersOptions {
  rpc: NonceRpc & Rpc<GetSignatureStatusesApi & GetSlotApi & GetBlockApi>;
  /** The single-send path (tracked sends: rebroadcast, fee-market tracking) and its way to stop following a rung. */
  sender: { send(request: SendRequest): Promise<SendOutcome>; forget(signature: string): Promise<void> };
  fees?: LadderOddsSource;
  store?: LadderStore;
  /** The default target (SOLGATE_FEES_TARGET; default 0.9). */
  target?: number;
  /** The largest k the odds answer for (default 149). */
  maxOddsSlots?: number;
  /** Tick period (default 200 ms). */
  pollIntervalMs?: number;
  /** Slots after the deadline, with nothing landed and the nonce unchanged, before a ladder is called expired (default 32). */
  graceSlots?: number;
  /** Idle time before a watch gets a heartbeat (default 15 s). */
  heartbeatIntervalMs?: number;
  onError?: (error: unknown) => void;
  now?: () => number;
}

/** The ladders of one chain. */
export interface Ladders {
  /** Checks the rungs and submits the cheapest. @throws SolgateError for every refusal (ladder-checks.ts). */
  send(request: SendLadderRequest): Promise<Ladder>;
  /** @throws SolgateError NOT_FOUND. */
  status(id: string): Promise<Ladder>;
  /** The record at once, then every change until it is final; heartbeats while idle. */
  watch(id: string, signal?: AbortSignal): AsyncGenerator<LadderEvent, void, undefined>;
  /** Stops the climb (and the rebroadcasts); a submitted rung can still land. @throws SolgateError NOT_FOUND. */
  cancel(id: string): Promise<Ladder>;
  /** Runs one tick now (tests). */
  tick(): Promise<void>;
  stats(): LadderStats;
  start(): void;
  stop(): void;
}

/** Slots the nonce must stand moved, with no rung seen, before the ladder is called NONCE_ADVANCED. */
const NONCE_SETTLE_SLOTS = 4n;

const RANK: Record<LadderState, number> = {
  pending: 0,
  cancelled: 1,
  expired: 1,
  nonce_advanced: 2,
  landed: 3,
  failed: 4,
  confirmed: 4,
  finalized: 5,
};

/**
 * Creates the ladders (stopped; call `start()`).
 *
 * Long (~360 lines): every ladder's climb (tick, submit, step, cancel) runs under the per-ladder locks and
 * against the one store; the pure parts are beside it (ladder-plan.ts, ladder-climb.ts, rung-message.ts, ...).
 */
export function createLadders(options: LaddersOptions): Ladders {
  const { rpc, sender, fees } = options;
  const store = options.store ?? createMemoryLadderStore();
  const now = options.now ?? Date.now;
  const pollIntervalMs = options.pollIntervalMs ?? 200;
  const graceSlots = BigInt(options.graceSlots ?? 32);
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 15_000;
  const maxK = options.maxOddsSlots ?? 149;
  const onError = options.onError ?? (() => {});
  const rent: { value?: bigint } = {};
  const stats: LadderStats = {
    started: 0,
    ended: {},
    rungsSubmitted: 0,
    feePaidLamports: 0n,
    cheapestFeeLamports: 0n,
    overpayMeasured: 0,
  };
  let slot = 0n;
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let ticking: Promise<void> | undefined;
  // One change at a time per ladder in this process (the tick, the first submission, a cancel), each on the record
  // as it stands: a step working on a copy read before the first submission was saved would write it back unsent.
  const locks = new Map<string, Promise<unknown>>();
  function withLock<T>(id: string, work: () => Promise<T>): Promise<T> {
    const previous = locks.get(id) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.catch(() => {});
    locks.set(id, tail);
    void tail.then(() => {
      if (locks.get(id) === tail) locks.delete(id);
    });
    return run;
  }

  async function save(before: Ladder, next: Ladder): Promise<Ladder> {
    const stamped = { ...next, updatedAt: new Date(now()) };
    await store.put(stamped);
    if (isFinalLadder(stamped) && !isFinalLadder(before))
      stats.ended[stamped.state] = (stats.ended[stamped.state] ?? 0) + 1;
    store.publish(stamped);
    return stamped;
  }

  async function submit(ladder: Ladder, index: number, skipPreflight: boolean): Promise<Rung> {
    const rung = ladder.rungs[index];
    await sender.send({ wire: rung.wire, confirm: false, durableNonce: true, skipPreflight });
    stats.rungsSubmitted++;
    return { ...rung, state: "submitted", submittedSlot: slot };
  }

  async function readSlot(): Promise<bigint> {
    const read = BigInt(await rpc.getSlot({ commitment: "processed" }).send());
    if (read > slot) slot = read;
    return slot;
  }

  /** Stops rebroadcasting every submitted rung but `keep`. */
  async function forgetRungs(ladder: Ladder, keep?: number): Promise<void> {
    await Promise.all(
      ladder.rungs.map((rung, i) =>
        i === keep || rung.submittedSlot === undefined ? undefined : sender.forget(rung.signature),
      ),
    );
  }

  async function oddsOf(rung: Rung, k: number): Promise<number | undefined> {
    if (fees === undefined) return undefined;
    try {
      return (await fees.oddsForTransaction(rung.wire, Math.max(1, Math.min(maxK, k))))?.odds(rung.price);
    } catch (error) {
      onError(error);
      return undefined;
    }
  }

  /**
   * Blocks since the rung's submission, those of them that cleared above its price, and whether its price cleared
   * one of the newest blocks, as the plan's lifted bottom rung did (ladder-climb.ts `patient`).
   */
  async function refusedOf(rung: Rung): Promise<{ refused: number; blocks: number; patient: boolean } | undefined> {
    if (fees === undefined || rung.submittedSlot === undefined) return undefined;
    try {
      const odds = await fees.oddsForTransaction(rung.wire, 1);
      if (odds === undefined) return undefined;
      const cleared = odds.clearedRecently(RECENT_LOW_BLOCKS, 1);
      return {
        ...odds.refusedSince(rung.submittedSlot, rung.price),
        patient: cleared !== undefined && cleared <= rung.price,
      };
    } catch (error) {
      onError(error);
      return undefined;
    }
  }

  /**
   * The rung to submit next (ladder-climb.ts `nextRung`): past the next one, every rung that all the blocks since the
   * current rung's submission cleared far above.
   */
  async function nextOf(ladder: Ladder, current: number): Promise<number> {
    const rung = ladder.rungs[current];
    if (fees === undefined || rung.submittedSlot === undefined || current + 2 >= ladder.rungs.length)
      return current + 1;
    const since = rung.submittedSlot;
    try {
      const odds = await fees.oddsForTransaction(rung.wire, 1);
      if (odds === undefined) return current + 1;
      const above = ladder.rungs.slice(current + 1, -1).map((r) => odds.refusedSince(since, r.price * SKIP_MARGIN));
      return nextRung(
        current,
        ladder.rungs.length,
        above.map((r) => r.refused),
        above[0]?.blocks ?? 0,
        hasHeadroom(ladder.rungs.map((r) => r.price)),
      );
    } catch (error) {
      onError(error);
      return current + 1;
    }
  }

  /** The rung's odds of landing in the `left` slots to come, given that it has not landed since its submission. */
  async function oddsLeft(rung: Rung, left: number): Promise<number | undefined> {
    const waited =
      rung.submittedSlot === undefined || slot <= rung.submittedSlot ? 0 : Number(slot - rung.submittedSlot);
    if (waited === 0) return oddsOf(rung, left);
    const [before, total] = await Promise.all([oddsOf(rung, waited), oddsOf(rung, waited + left)]);
    return before === undefined || total === undefined ? undefined : oddsAfterWaiting(before, total);
  }

  async function landedStep(
    ladder: Ladder,
    index: number,
    status: { err: unknown; slot: bigint; confirmationStatus?: string | null },
  ) {
    const rung = ladder.rungs[index];
    const failed = status.err !== null && status.err !== undefined;
    const state: LadderState = failed
      ? "failed"
      : status.confirmationStatus === "finalized"
        ? "finalized"
        : status.confirmationStatus === "confirmed"
          ? "confirmed"
          : "landed";
    let next: Ladder = {
      ...ladder,
      state: RANK[state] >= RANK[ladder.state] || ladder.state === "cancelled" ? state : ladder.state,
      landedRung: index,
      slot: status.slot,
      feePaid: rung.fee,
      rungs: ladder.rungs.map((r, i) => (i === index ? { ...r, state: "landed" } : { ...r, state: "dead" })),
      ...(failed ? { error: describeTransactionError(status.err) } : {}),
    };
    if (ladder.landedRung === undefined) await forgetRungs(ladder, index);
    if (next.overpay === undefined && state !== "landed") {
      const budget = computeBudgetOf(decodeWireTransaction(rung.wire).message);
      const overpay = await readOverpay(rpc, {
        slot: status.slot,
        price: rung.price,
        fee: rung.fee,
        baseFee: rung.fee - (rung.price * BigInt(budget.unitLimit) + 999_999n) / 1_000_000n,
        unitLimit: budget.unitLimit,
        writable: ladder.writable,
      }).catch((error: unknown) => {
        onError(error);
        return undefined;
      });
      if (overpay !== undefined) {
        next = { ...next, overpay };
        stats.overpayMeasured++;
        stats.feePaidLamports += rung.fee;
        stats.cheapestFeeLamports += overpay.cheapestFee;
      }
    }
    const changed =
      next.state !== ladder.state || next.landedRung !== ladder.landedRung || next.overpay !== ladder.overpay;
    if (changed) await save(ladder, next);
  }

  async function step(ladder: Ladder): Promise<void> {
    // The nonce first, then the statuses: a rung that advanced the nonce is in a bank the status read then sees.
    const nonce = await readNonceAccount(rpc, ladder.nonceAccount).then(
      (account) => account.nonce,
      (error: unknown) => {
        if (
          isSolgateError(error) &&
          (error.reason === "NONCE_ACCOUNT_NOT_FOUND" || error.reason === "NONCE_ACCOUNT_INVALID")
        )
          return undefined; // closed or re-purposed: the nonce moved for good
        throw error;
      },
    );
    const submitted = ladder.rungs.filter((rung) => rung.submittedSlot !== undefined);
    const moved = nonce !== ladder.nonce;
    // Once the nonce moved, the node's history is searched too: a rung that landed must be found.
    const { value } = await rpc
      .getSignatureStatuses(
        submitted.map((rung) => rung.signature as Signature),
        moved ? { searchTransactionHistory: true } : {},
      )
      .send();
    const hit = value.findIndex((status) => status !== null);
    if (hit >= 0) {
      const index = ladder.rungs.indexOf(submitted[hit]);
      const status = value[hit]!;
      await landedStep(ladder, index, {
        err: status.err,
        slot: BigInt(status.slot),
        confirmationStatus: status.confirmationStatus,
      });
      return;
    }
    if (moved) {
      // NONCE_ADVANCED only once the nonce has stood moved for a few slots with no rung found (history searched):
      // one read must not call a ladder whose rung just landed advanced by someone else. Nothing is submitted meanwhile.
      if (ladder.nonceMovedAt === undefined) {
        await save(ladder, { ...ladder, nonceMovedAt: slot });
        return;
      }
      if (slot < ladder.nonceMovedAt + NONCE_SETTLE_SLOTS) return;
      await forgetRungs(ladder);
      const dead = ladder.rungs.map((rung) => ({ ...rung, state: "dead" as const }));
      await save(ladder, { ...ladder, state: ladder.cancelled ? "cancelled" : "nonce_advanced", rungs: dead });
      return;
    }
    const current = ladder.rungs.reduce((top, rung, i) => (rung.submittedSlot !== undefined ? i : top), 0);
    if (ladder.cancelled || slot >= ladder.deadlineSlot) {
      // Past the deadline (or cancelled): no more rungs, no more rebroadcasts; after the grace, over.
      if (slot >= ladder.deadlineSlot + graceSlots) {
        await forgetRungs(ladder);
        const dead = ladder.rungs.map((rung) => ({ ...rung, state: "dead" as const }));
        await save(ladder, { ...ladder, state: ladder.cancelled ? "cancelled" : "expired", rungs: dead });
      } else if (!ladder.cancelled && slot >= ladder.deadlineSlot) {
        await forgetRungs(ladder);
      }
      return;
    }
    const left = slotsLeft(slot, ladder.deadlineSlot);
    // Headroom on top (ladder-plan.ts): the market's top is the rung under it, and the climb's rules read that one.
    const headroom = hasHeadroom(ladder.rungs.map((rung) => rung.price));
    const top = ladder.rungs[ladder.rungs.length - (headroom ? 2 : 1)];
    const [currentOdds, topOdds, refused] = await Promise.all([
      oddsLeft(ladder.rungs[current], left),
      oddsOf(top, left - 1),
      refusedOf(ladder.rungs[current]),
    ]);
    const due = shouldClimb({
      slot,
      current,
      rungs: ladder.rungs.length,
      firstSlot: ladder.firstSlot,
      deadlineSlot: ladder.deadlineSlot,
      offsets: ladder.offsets,
      target: ladder.target,
      headroom,
      ...(currentOdds === undefined ? {} : { currentOdds }),
      ...(topOdds === undefined ? {} : { topOdds }),
      ...(refused === undefined
        ? {}
        : { refused: refused.refused, waitedBlocks: refused.blocks, patient: refused.patient }),
    });
    if (!due) return;
    // Looked at again right before the submission: a cancel may have come in meanwhile.
    const fresh = (await store.get(ladder.id)) ?? ladder;
    if (fresh.cancelled || !isOpenLadder(fresh)) return;
    const next = await nextOf(fresh, current);
    try {
      const rung = await submit(fresh, next, false);
      await save(fresh, { ...fresh, rungs: fresh.rungs.map((r, i) => (i === next ? rung : r)) });
    } catch (error) {
      // A refusal here is most often the nonce having moved (a rung landed): the next tick tells.
      onError(error);
    }
  }

  async function tick(): Promise<void> {
    // In a fleet one replica climbs every ladder (a climb outlives the replica that took it); the others answer.
    if (!(await store.lease.hold())) return;
    const open = await store.open();
    if (open.length === 0) return;
    await readSlot();
    // Every ladder at once: one after the other, a tick over the ladders still following their landed rung to
    // finalization (~30 slots each) took several slots on a loaded machine, and a climb is only as quick as its tick.
    await Promise.all(
      open.map(({ id }) =>
        withLock(id, async () => {
          const ladder = await store.get(id);
          // Not yet submitted (SendLadder is at its first submission): nothing to follow.
          if (ladder === undefined || isFinalLadder(ladder)) return;
          if (!ladder.rungs.some((rung) => rung.submittedSlot !== undefined)) return;
          await step(ladder);
        }).catch(onError),
      ),
    );
  }

  function runTick(): Promise<void> {
    ticking ??= tick().finally(() => {
      ticking = undefined;
    });
    return ticking;
  }

  function schedule(): void {
    if (!running) return;
    timer = setTimeout(() => {
      void runTick().then(schedule, schedule);
    }, pollIntervalMs);
    timer.unref();
  }

  async function find(id: string): Promise<Ladder> {
    const ladder = await store.get(id);
    if (ladder === undefined) throw new SolgateError("NOT_FOUND", `ladder ${id} is not known here`, { id });
    return ladder;
  }

  async function cancelNow(id: string): Promise<Ladder> {
    const ladder = await find(id);
    if (!isOpenLadder(ladder) || ladder.cancelled) return ladder;
    // Submitted rungs are no longer rebroadcast; they can still land until the client advances the nonce.
    await forgetRungs(ladder);
    const next: Ladder = {
      ...ladder,
      state: ladder.state === "pending" ? "cancelled" : ladder.state,
      cancelled: true,
    };
    return save(ladder, next);
  }

  return {
    async send(request) {
      const deadlineSlots = checkRange("deadlineSlots", request.deadlineSlots, 4, 150, LADDER_DEFAULTS.deadlineSlots);
      const target = checkTarget(request.target, options.target ?? 0.9);
      const checked = await checkLadder(rpc, request.wires, rent);
      const first = await readSlot();
      const message = checked.rungs[0].tx.message;
      const ladder: Ladder = {
        id: checked.rungs[0].tx.signature,
        state: "pending",
        rungs: checked.rungs.map(({ tx, price, fee }) => ({
          signature: tx.signature,
          price,
          wire: tx.wire.slice(),
          state: "waiting",
          fee,
        })),
        nonceAccount: checked.nonce.address,
        nonce: checked.nonce.nonce,
        target,
        firstSlot: first,
        deadlineSlot: first + BigInt(deadlineSlots),
        offsets: planOffsets(deadlineSlots, checked.rungs.length, hasHeadroom(checked.rungs.map((rung) => rung.price))),
        writable: staticWritableAccounts(message),
        cancelled: false,
        updatedAt: new Date(now()),
      };
      return withLock(ladder.id, async () => {
        const existing = await store.insert(ladder);
        if (existing !== undefined) return existing;
        stats.started++;
        let rung: Rung;
        try {
          rung = await submit(ladder, 0, request.skipPreflight ?? false);
        } catch (error) {
          // Nothing was submitted: the ladder never started (the client may fix it and send again).
          await store.delete(ladder.id);
          throw error;
        }
        return save(ladder, { ...ladder, rungs: ladder.rungs.map((r, i) => (i === 0 ? rung : r)) });
      });
    },

    status: find,

    async *watch(id, signal) {
      let ladder = await find(id);
      const queue = createEventQueue<LadderEvent>();
      const off = store.onPublished((next) => {
        if (next.id === id) queue.push({ kind: "ladder", ladder: next });
      });
      const onAbort = () => queue.close();
      signal?.addEventListener("abort", onAbort);
      const beat = setInterval(() => {
        if (queue.isEmpty()) queue.push({ kind: "heartbeat", slot });
      }, heartbeatIntervalMs);
      beat.unref();
      try {
        ladder = (await store.get(id)) ?? ladder;
        yield { kind: "ladder", ladder };
        while (!isFinalLadder(ladder)) {
          const event = await queue.next();
          if (event.done) return;
          if (event.value.kind === "ladder") ladder = event.value.ladder;
          yield event.value;
        }
      } finally {
        off();
        clearInterval(beat);
        signal?.removeEventListener("abort", onAbort);
      }
    },

    cancel(id) {
      return withLock(id, () => cancelNow(id));
    },

    tick: runTick,
    stats: () => ({ ...stats, ended: { ...stats.ended } }),
    start() {
      if (running) return;
      running = true;
      schedule();
    },
    stop() {
      running = false;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      // Another replica takes the climbing over at once rather than after the lease lapses.
      void store.lease.release().catch(onError);
    },
  };
}
