/**
 * Follows the chain block by block into a fee window: each tick asks for the confirmed slot, then reads
 * every slot since the last one read with `getBlock` (confirmed, base64, no rewards), a few at a time,
 * feeding them to the window in slot order.
 *
 * - Skipped slots (a `slot-skipped` node error: skipped, or a block cleaned up) slide the window without a block.
 * - A slot whose block is not available yet (`block-not-available`, or a null result) is retried on the next ticks,
 *   then treated as skipped, so one missing block never stalls the window.
 * - After a gap (startup, an outage, a slow upstream) it reads at most `maxCatchUpSlots` of the newest
 *   slots and drops the rest: recent blocks matter more than complete ones, and catching up must be bounded.
 * - Any other failure (a provider refusing getBlock, a network error) stops the tick where it is, so the
 *   next tick resumes at the same slot; the caller sees the count of consecutive failures.
 */
import type { GetBlockApi, GetSlotApi, Rpc } from "@solana/kit";
import { nodeErrorOf } from "../upstream/node-errors.ts";
import { pricesOfBlock } from "./block-transactions.ts";
import type { FeeWindow } from "./fee-window.ts";
import type { StreamBlock } from "./geyser-block.ts";

/** Options of {@link createBlockFollower}. */
export interface BlockFollowerOptions {
  rpc: Rpc<GetSlotApi & GetBlockApi>;
  /** Where blocks go: the fee window, or any reader that takes blocks in slot order (the collection feed). */
  window: Pick<FeeWindow, "windowSlots" | "addBlock" | "advanceTo">;
  /** The most slots read in one tick (default 20); older unread slots are dropped. */
  maxCatchUpSlots?: number;
  /** Slots read up to the tip on the first tick (default `maxCatchUpSlots`, at most the window). */
  backfillSlots?: number;
  /** getBlock calls in flight at once (default 4). */
  blockConcurrency?: number;
  /** Ticks a "not available" block is waited for before its slot counts as skipped (default 2). */
  notAvailableRetries?: number;
  /**
   * The first slot to read, instead of the tip less the backfill (the collection feed taking over from another
   * replica resumes after the last slot it published); catch-up from it is bounded as after a break.
   */
  startSlot?: bigint;
  now?: () => number;
}

/** What the follower knows about its own progress. */
export interface FollowerState {
  /** The chain's slot as last known: the node's confirmed slot (getSlot), or a newer block from a stream. */
  readonly tipSlot: bigint | undefined;
  /** The next slot to read. */
  readonly nextSlot: bigint | undefined;
  /** Ticks in a row that failed (0 after a good one). */
  readonly consecutiveFailures: number;
  /** Whether the node answered getBlock with "method not found". */
  readonly refused: boolean;
  /** The last failure, for logs and status. */
  readonly lastError: unknown;
  /** When a block last entered the window (ms since epoch). */
  readonly lastBlockAt: number | undefined;
  /** The slot of the newest block read (skipped slots aside). */
  readonly lastBlockSlot: bigint | undefined;
  /** When the window last moved, by a block or a skipped slot (ms since epoch). */
  readonly lastMoveAt: number | undefined;
  /** Slots dropped unread to bound catch-up, since creation. */
  readonly droppedSlots: bigint;
  /** The first slot ever read (for how much of the window is covered). */
  readonly firstSlot: bigint | undefined;
}

/** What {@link BlockFollower.accept} did with a stream block. */
export type AcceptOutcome = "added" | "stale" | "gap";

/** A follower; `tick` is driven by its owner. */
export interface BlockFollower {
  /** Reads whatever is new. Never throws: failures are counted in the state. */
  tick(abortSignal?: AbortSignal): Promise<void>;
  /**
   * Takes a block pushed by a stream (Geyser), with no call. Not during a tick: the owner serializes them.
   * - `stale`: its slot was already read (or skipped): nothing changes.
   * - `added`: it follows what was read, directly or over slots its parent link shows were skipped on its fork.
   * - `gap`: its parent is a slot not read yet (the stream missed blocks): nothing changes, so that a tick
   *   can read them first; with `force`, the missing slots are counted as dropped and the block is added.
   * Before any tick it starts at this block (no backfill). The tip becomes its slot when that is newer.
   */
  accept(block: StreamBlock, force?: boolean): AcceptOutcome;
  state(): FollowerState;
}

type BlockOutcome =
  | { kind: "block"; block: { transactions?: unknown } }
  | { kind: "skipped" }
  | { kind: "not-available" }
  | { kind: "failed"; error: unknown };

/**
 * Creates a follower that starts at the tip on its first tick.
 *
 * Just over ~150 lines: the tick and its block reads share the follower's progress (tip, next slot, failures).
 */
export function createBlockFollower(options: BlockFollowerOptions): BlockFollower {
  const { rpc, window } = options;
  const maxCatchUp = BigInt(options.maxCatchUpSlots ?? 20);
  const backfill = BigInt(Math.min(options.backfillSlots ?? Number(maxCatchUp), window.windowSlots));
  const concurrency = options.blockConcurrency ?? 4;
  const notAvailableRetries = options.notAvailableRetries ?? 2;
  const now = options.now ?? Date.now;
  if (maxCatchUp < 1n) throw new RangeError("maxCatchUpSlots must be at least 1");

  let tipSlot: bigint | undefined;
  let nextSlot: bigint | undefined = options.startSlot;
  let firstSlot: bigint | undefined;
  let consecutiveFailures = 0;
  let refused = false;
  let lastError: unknown;
  let lastBlockAt: number | undefined;
  let lastBlockSlot: bigint | undefined;
  let lastMoveAt: number | undefined;
  let droppedSlots = 0n;
  const notAvailableSeen = new Map<bigint, number>();

  async function readBlock(slot: bigint, abortSignal?: AbortSignal): Promise<BlockOutcome> {
    try {
      const block = await rpc
        .getBlock(slot, {
          commitment: "confirmed",
          encoding: "base64",
          transactionDetails: "full",
          rewards: false,
          maxSupportedTransactionVersion: 0,
        })
        .send({ abortSignal });
      return block === null ? { kind: "not-available" } : { kind: "block", block: block as { transactions?: unknown } };
    } catch (error) {
      const kind = nodeErrorOf(error)?.kind;
      if (kind === "slot-skipped") return { kind: "skipped" };
      if (kind === "block-not-available") return { kind: "not-available" };
      return { kind: "failed", error };
    }
  }

  function fail(error: unknown): void {
    consecutiveFailures++;
    lastError = error;
    if (nodeErrorOf(error)?.kind === "method-not-found") refused = true;
  }

  return {
    async tick(abortSignal) {
      let tip: bigint;
      try {
        tip = await rpc.getSlot({ commitment: "confirmed" }).send({ abortSignal });
      } catch (error) {
        fail(error);
        return;
      }
      // A stream may have announced a newer (processed) slot already: the tip only moves forward.
      if (tipSlot === undefined || tip > tipSlot) tipSlot = tip;
      let from = nextSlot ?? (tip - backfill + 1n > 0n ? tip - backfill + 1n : 0n);
      // The first tick reads the backfill, however long; later ones are bounded by the catch-up span.
      if (nextSlot !== undefined && tip - from + 1n > maxCatchUp) {
        droppedSlots += tip - maxCatchUp + 1n - from;
        from = tip - maxCatchUp + 1n;
      }
      if (from > tip) {
        consecutiveFailures = 0;
        return;
      }

      // Fetch up to `concurrency` blocks ahead, but apply them strictly in slot order.
      const pending: Promise<BlockOutcome>[] = [];
      let launched = from;
      const launch = () => {
        while (launched <= tip && pending.length < concurrency) pending.push(readBlock(launched++, abortSignal));
      };
      launch();
      for (let slot = from; slot <= tip; slot++) {
        const outcome = await pending.shift()!;
        if (abortSignal?.aborted) return;
        if (outcome.kind === "failed") {
          fail(outcome.error);
          nextSlot = slot;
          return;
        }
        if (outcome.kind === "not-available") {
          const seen = (notAvailableSeen.get(slot) ?? 0) + 1;
          if (seen <= notAvailableRetries) {
            notAvailableSeen.set(slot, seen);
            nextSlot = slot;
            break;
          }
        }
        notAvailableSeen.delete(slot);
        if (outcome.kind === "block") {
          let transactions;
          try {
            transactions = pricesOfBlock(outcome.block).transactions;
          } catch (error) {
            // A block without a transaction list will not improve on retry: count its slot as empty.
            lastError = error;
          }
          if (transactions !== undefined) {
            window.addBlock(slot, transactions);
            lastBlockAt = now();
            lastBlockSlot = slot;
          } else {
            window.advanceTo(slot);
          }
        } else {
          window.advanceTo(slot);
        }
        firstSlot ??= slot;
        lastMoveAt = now();
        nextSlot = slot + 1n;
        launch();
      }
      // Slots waited for no longer matter once the window has moved past them.
      for (const slot of notAvailableSeen.keys())
        if (nextSlot !== undefined && slot < nextSlot) notAvailableSeen.delete(slot);
      consecutiveFailures = 0;
      refused = false;
    },

    accept(block, force = false) {
      const { slot, parentSlot } = block;
      nextSlot ??= slot;
      if (slot < nextSlot) return "stale";
      if (parentSlot >= nextSlot) {
        if (!force) return "gap";
        droppedSlots += parentSlot - nextSlot + 1n;
      }
      if (slot > nextSlot) window.advanceTo(slot - 1n);
      window.addBlock(slot, block.prices.transactions);
      notAvailableSeen.clear();
      firstSlot ??= slot;
      lastBlockAt = lastMoveAt = now();
      lastBlockSlot = slot;
      nextSlot = slot + 1n;
      if (tipSlot === undefined || slot > tipSlot) tipSlot = slot;
      return "added";
    },

    state: () => ({
      tipSlot,
      nextSlot,
      consecutiveFailures,
      refused,
      lastError,
      lastBlockAt,
      lastBlockSlot,
      lastMoveAt,
      droppedSlots,
      firstSlot,
    }),
  };
}
