/**
 * Blocks from a Yellowstone Geyser `Subscribe` stream, with their transactions, for the fee market: one bidi
 * stream at `processed` with a `blocks` filter (transactions, no accounts, no entries). Processed is what
 * makes a block's levels reach clients in its own slot; at confirmed they would come a slot or more later.
 * The cost: a processed block may sit on a fork that dies, and its prices then stay in the window (see
 * docs/calls.md, "Blocks from the Geyser stream"); the JSON-RPC follower, which reads confirmed blocks, stays
 * the fallback.
 *
 * It is its own stream, beside the confirmed one of geyser-source.ts (block metas and transaction statuses):
 * a Subscribe carries one commitment. It opens its own connection unless given a `transport` to share. The
 * connection, health, resume cursor, backoff and lease are geyser-subscription.ts's; this module supplies the
 * filter and the update handler.
 *
 * Health: usable while connected and a block came in the last `silenceMs` (2 s; pongs to the pings it
 * sends keep the connection alive but do not count: a stream that pings without blocks is stuck). After a
 * break it reconnects with backoff and `from_slot` = the last block seen + 1, so the server replays what
 * was missed; when that slot is out of its replay range it starts from the tip, and the follower fills the
 * gap over JSON-RPC (its parent links show it).
 */
import { CommitmentLevel, type SubscribeUpdate, type SubscribeUpdateBlock } from "../../gen/geyser/geyser_pb.js";
import {
  createGeyserSubscription,
  type GeyserSubscriptionOptions,
  type GeyserSubscriptionStats,
} from "./geyser-subscription.ts";

/**
 * Options of {@link createGeyserBlocks}. `silenceMs`: no block for this long, the stream counts as down.
 * `lease`, in a fleet: the fee lease; only its holder (the replica whose blocks feed every replica's window
 * through the Redis log) subscribes.
 */
export type GeyserBlocksOptions = GeyserSubscriptionOptions;

/** Counters, for metrics and tests (`lastSlot`: the newest block handed on). */
export interface GeyserBlocksStats extends GeyserSubscriptionStats {
  /** Blocks delivered to the listeners. */
  blocks: number;
}

/** A stream of processed blocks. */
export interface GeyserBlocks {
  /** Whether blocks are flowing now (connected, one within `silenceMs`). */
  healthy(): boolean;
  /** Calls `listener` with each block, in the order the stream sends them; returns the unsubscribe. */
  onBlock(listener: (block: SubscribeUpdateBlock) => void): () => void;
  stats(): GeyserBlocksStats;
  close(): void;
}

/** Starts the stream at once; it runs until `close`. */
export function createGeyserBlocks(options: GeyserBlocksOptions): GeyserBlocks {
  const listeners = new Set<(block: SubscribeUpdateBlock) => void>();
  let blocks = 0;

  function onUpdate(update: SubscribeUpdate): void {
    if (update.updateOneof.case !== "block") return;
    const block = update.updateOneof.value;
    // Replays and reconnects may repeat a slot: each is handed on once, in rising order.
    if (!subscription.advance(block.slot)) return;
    blocks++;
    // Only a block counts as life: pongs keep the connection open, and a stream that pings without blocks is stuck.
    subscription.heard();
    for (const listener of listeners) listener(block);
  }

  const subscription = createGeyserSubscription(options, {
    filters: {
      commitment: CommitmentLevel.PROCESSED,
      blocks: { fees: { includeTransactions: true, includeAccounts: false, includeEntries: false } },
    },
    onUpdate,
    silentReason: `no block for ${options.silenceMs ?? 2000} ms`,
    heardReason: "blocks flowing",
    leaseLostReason: "fee lease lost: another replica subscribes",
  });

  return {
    healthy: subscription.healthy,
    onBlock(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stats: () => ({ ...subscription.stats(), blocks }),
    close: () => subscription.close(),
  };
}
