/**
 * Yellowstone Geyser `Subscribe` as the status stream: one bidi stream at `confirmed` with `blocks_meta` (a new
 * block: the fee market reads it at once), `transactions_status` (a signature landed in a confirmed block) and
 * every slot's status. Statuses are answered from what it delivers, within what it can vouch for (ADR-0007,
 * docs/adr/0007-statuses-from-the-stream.md): src/transactions/stream-status.ts keeps each signature's status
 * and each slot's progress from {@link GeyserSource.onStatus}, each change of health starts a new epoch in
 * which silence is not trusted until the node was asked once, and the status engine reads from the node only
 * what the stream cannot vouch for. A send waiting for confirmation is also told at once (`follow`).
 *
 * The connection, health, resume cursor, backoff and lease are geyser-subscription.ts's, shared with the block
 * stream; this module supplies the filters and the update handler. Health here: connected, heard something (an
 * update, or the pong to the ping sent every second) in the last `silenceMs` (2 s), and not more than
 * `maxLagSlots` behind JSON-RPC. When it is not, the PubSub feed and polling carry on
 * (see {@link createFallbackFeed}); each change is logged once through `onHealth` and counted.
 */
import bs58 from "bs58";
import { CommitmentLevel, SlotStatus, type SubscribeUpdate } from "../../gen/geyser/geyser_pb.js";
import {
  createGeyserSubscription,
  type GeyserSubscriptionOptions,
  type GeyserSubscriptionStats,
} from "./geyser-subscription.ts";
import { redactUrl } from "./metrics.ts";
import type { SignatureFeed, SignatureListener } from "./signature-feed.ts";
import { BoundedMap } from "../bounded-map.ts";

/** Options of {@link createGeyserSource}. */
export interface GeyserSourceOptions extends GeyserSubscriptionOptions {
  /** More slots than this behind the JSON-RPC's confirmed slot (see `watchTip`): down (default 8). */
  maxLagSlots?: number;
}

/** Counters, for metrics and tests (`lastSlot`: the newest block announced). */
export interface GeyserSourceStats extends GeyserSubscriptionStats {
  /** Followed signatures whose confirmation the stream delivered. */
  delivered: number;
  /** Blocks announced. */
  blocks: number;
}

/**
 * What the stream says of transactions and slots, for the status memory (src/transactions/stream-status.ts):
 * a transaction's status at the commitment the stream delivered it at (its error as agave's bincode bytes),
 * a slot reaching a commitment (or dying), and each change of the stream's health.
 */
export type GeyserStatusEvent =
  | {
      readonly kind: "transaction";
      readonly signature: string;
      readonly slot: bigint;
      /** agave's `TransactionError`, bincode; undefined when the transaction succeeded. */
      readonly err: Uint8Array | undefined;
      readonly commitment: "processed" | "confirmed" | "finalized";
    }
  | { readonly kind: "slot"; readonly slot: bigint; readonly status: "processed" | "confirmed" | "finalized" | "dead" }
  | { readonly kind: "health"; readonly healthy: boolean };

/** A Geyser stream: block and signature notifications. */
export interface GeyserSource extends SignatureFeed {
  /** Whether the stream is usable now (connected, heard within `silenceMs`, not lagging). */
  healthy(): boolean;
  /** Where the JSON-RPC's confirmed slot is read from (the fee follower's last getSlot), for the lag check. */
  watchTip(tip: () => bigint | undefined): void;
  /** Slots the stream is behind the JSON-RPC's confirmed slot (0 when ahead or unknown). */
  lagSlots(): number;
  /** Calls `listener` with each new block's slot; returns the unsubscribe. */
  onBlock(listener: (slot: bigint) => void): () => void;
  /** Calls `listener` with each transaction status, slot status and change of health; returns the unsubscribe. */
  onStatus(listener: (event: GeyserStatusEvent) => void): () => void;
  stats(): GeyserSourceStats;
}

/** The subscription's commitment: the statuses it delivers are as strong as this, no stronger. */
const STREAM_COMMITMENT = "confirmed";
const STREAM_COMMITMENT_LEVEL = CommitmentLevel.CONFIRMED;

const SLOT_STATUSES: Partial<Record<SlotStatus, "processed" | "confirmed" | "finalized" | "dead">> = {
  [SlotStatus.SLOT_PROCESSED]: "processed",
  [SlotStatus.SLOT_CONFIRMED]: "confirmed",
  [SlotStatus.SLOT_FINALIZED]: "finalized",
  [SlotStatus.SLOT_DEAD]: "dead",
};

/** Signatures remembered after they were seen, for a follow that comes just after (a few slots' worth). */
const RECENT_SIGNATURES = 20_000;

/** Starts the stream at once; it runs until `close`. */
export function createGeyserSource(options: GeyserSourceOptions): GeyserSource {
  const maxLagSlots = options.maxLagSlots ?? 8;
  let tip: () => bigint | undefined = () => undefined;
  const blockListeners = new Set<(slot: bigint) => void>();
  const statusListeners = new Set<(event: GeyserStatusEvent) => void>();
  const tellStatus = (event: GeyserStatusEvent) => {
    for (const listener of statusListeners) listener(event);
  };
  const followers = new Map<string, Set<SignatureListener>>();
  // Signatures seen lately (the value says nothing): a follower that comes late hears at once.
  const recent = new BoundedMap<string, true>(RECENT_SIGNATURES);
  let delivered = 0;
  let blocks = 0;
  let closed = false;

  function lagSlots(): number {
    const rpcSlot = tip();
    const lastSlot = subscription.stats().lastSlot;
    if (rpcSlot === undefined || lastSlot === undefined || rpcSlot <= lastSlot) return 0;
    return Number(rpcSlot - lastSlot);
  }

  function signatureSeen(signature: string): void {
    recent.set(signature, true);
    const listeners = followers.get(signature);
    if (listeners === undefined) return;
    followers.delete(signature);
    for (const listener of listeners) {
      delivered++;
      listener.onNotified();
    }
  }

  function onUpdate(update: SubscribeUpdate): void {
    // Any update, a pong included, shows the stream alive.
    subscription.heard();
    const { case: kind, value } = update.updateOneof;
    if (kind === "blockMeta") {
      subscription.advance(value.slot);
      blocks++;
      for (const listener of blockListeners) listener(value.slot);
    } else if (kind === "transactionStatus") {
      // A confirmed-commitment stream sends the status of a transaction in a confirmed block.
      if (value.signature.length !== 64) return;
      const signature = bs58.encode(value.signature);
      if (statusListeners.size > 0) {
        tellStatus({
          kind: "transaction",
          signature,
          slot: value.slot,
          err: value.err?.err,
          commitment: STREAM_COMMITMENT,
        });
      }
      signatureSeen(signature);
    } else if (kind === "slot") {
      const status = SLOT_STATUSES[value.status];
      if (status !== undefined && statusListeners.size > 0) tellStatus({ kind: "slot", slot: value.slot, status });
    }
  }

  const subscription = createGeyserSubscription(options, {
    filters: {
      commitment: STREAM_COMMITMENT_LEVEL,
      blocksMeta: { blocks: {} },
      transactionsStatus: { signatures: { vote: false } },
      // Every slot's processed, confirmed and finalized status: a confirmed transaction's slot finalizing
      // finalizes it.
      slots: { slots: { filterByCommitment: false } },
    },
    onUpdate,
    silentReason: `no update for ${options.silenceMs ?? 2000} ms`,
    heardReason: "stream up",
    leaseLostReason: "lease lost: another replica subscribes",
    lagging: () => (lagSlots() <= maxLagSlots ? undefined : `${lagSlots()} slots behind the JSON-RPC`),
    healthChanged(healthy) {
      // The followers can no longer be notified from here: they go back to PubSub and polling.
      if (!healthy) {
        for (const listeners of followers.values()) for (const listener of listeners) listener.onFailed?.();
        followers.clear();
      }
      tellStatus({ kind: "health", healthy });
    },
  });
  const { healthy } = subscription;

  return {
    endpoint: redactUrl(options.url),
    healthy,
    watchTip(source) {
      tip = source;
    },
    lagSlots,
    follow(signature, commitment, signal, listener) {
      // Only confirmation is pushed; finality stays with the PubSub feed and polling.
      if (commitment !== "confirmed" || closed || signal.aborted || !healthy()) return false;
      if (recent.has(signature)) {
        delivered++;
        queueMicrotask(() => listener.onNotified());
        return true;
      }
      let listeners = followers.get(signature);
      if (listeners === undefined) followers.set(signature, (listeners = new Set()));
      listeners.add(listener);
      signal.addEventListener("abort", () => {
        const set = followers.get(signature);
        set?.delete(listener);
        if (set?.size === 0) followers.delete(signature);
      });
      queueMicrotask(() => listener.onSubscribed?.());
      return true;
    },
    size: () => followers.size,
    onBlock(listener) {
      blockListeners.add(listener);
      return () => blockListeners.delete(listener);
    },
    onStatus(listener) {
      statusListeners.add(listener);
      return () => statusListeners.delete(listener);
    },
    stats: () => ({ ...subscription.stats(), delivered, blocks }),
    close() {
      closed = true;
      subscription.close();
    },
  };
}

/**
 * The Geyser source while it is usable, else `fallback` (the PubSub feed), else nothing (polling alone).
 */
export function createFallbackFeed(geyser: GeyserSource, fallback: SignatureFeed | undefined): SignatureFeed {
  return {
    get endpoint() {
      return geyser.healthy() || fallback === undefined ? geyser.endpoint : fallback.endpoint;
    },
    follow(signature, commitment, signal, listener) {
      if (geyser.follow(signature, commitment, signal, listener)) return true;
      return fallback?.follow(signature, commitment, signal, listener) ?? false;
    },
    size: () => geyser.size() + (fallback?.size() ?? 0),
    close() {
      geyser.close();
      fallback?.close();
    },
  };
}
