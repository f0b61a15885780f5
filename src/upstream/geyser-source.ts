/**
 * Yellowstone Geyser `Subscribe` as a source of push: one bidi stream at `confirmed` with `blocks_meta` (a new
 * block: the fee market reads it at once) and `transactions_status` (a signature landed in a confirmed block:
 * a send waiting for confirmation looks now). It is a hint, never the truth: what it says makes the
 * gateway poll now, and the answer still comes from getSignatureStatuses / getBlock, so a wrong or
 * corrupt stream can cost a call, never a wrong status.
 *
 * Client: Connect (`@connectrpc/connect-node`, h2c/h2 gRPC) on protobuf-es code that buf generates from the
 * vendored yellowstone-grpc protos into gen/geyser (buf.gen.geyser.yaml): the repository's own stack, typed,
 * with no native addon (the npm `@triton-one/yellowstone-grpc` client is a napi build and only a dev
 * dependency of the localnet package).
 *
 * Health: the source is usable while connected and it heard something (an update, or the pong to the ping it
 * sends every second) in the last `silenceMs` (2 s). When it is not, the PubSub feed and polling carry on
 * (see {@link createFallbackFeed}); each change is logged once through `onHealth` and counted.
 * After a break it reconnects with backoff and `from_slot` = the last block slot seen + 1 (without it when the
 * server says that slot is out of its replay range).
 */
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import bs58 from "bs58";
import {
  CommitmentLevel,
  Geyser,
  SlotStatus,
  type SubscribeRequest,
  SubscribeRequestSchema,
} from "../../gen/geyser/geyser_pb.js";
import { isReplayUnavailable, pingingRequests, resubscribe, silenceAlarm } from "./geyser-stream.ts";
import type { StreamLease } from "./geyser-stream.ts";
import { redactUrl } from "./metrics.ts";
import type { SignatureFeed, SignatureListener } from "./signature-feed.ts";

/** Options of {@link createGeyserSource}. */
export interface GeyserSourceOptions {
  /** The Geyser gRPC endpoint (http: for h2c, https: for TLS). */
  url: string;
  /** Sent as `x-token` when set. */
  token?: string;
  /** Nothing heard for this long: the source counts as down (default 2,000 ms). */
  silenceMs?: number;
  /** Client ping period (default 1,000 ms). */
  pingMs?: number;
  /** Reconnect backoff: first step and cap (default 100 ms, 5 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** More slots than this behind the JSON-RPC's confirmed slot (see `watchTip`): down (default 8). */
  maxLagSlots?: number;
  /** Told once per change of health, for one log line. */
  onHealth?: (healthy: boolean, reason: string) => void;
  /**
   * In a fleet: the lease of the fleet-wide status work (the transaction store's). Only its holder subscribes;
   * the others stay down (polling, PubSub) and hear of the statuses through the shared store. Checked before
   * each subscription and every `leaseCheckMs` (default 1,000 ms) while subscribed.
   */
  lease?: StreamLease;
  leaseCheckMs?: number;
  now?: () => number;
}

/** Counters, for metrics and tests. */
export interface GeyserSourceStats {
  /** Streams opened after the first. */
  reconnects: number;
  /** Streams opened in all (the first included). */
  subscriptions: number;
  /** Times the source went from usable to not (stream ended, silent): the gateway fell back to polling. */
  fallbacks: number;
  /** Followed signatures whose confirmation the stream delivered. */
  delivered: number;
  /** Blocks announced. */
  blocks: number;
  /** The newest block slot seen, and the `from_slot` of the last reconnect. */
  lastSlot: bigint | undefined;
  lastFromSlot: bigint | undefined;
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
  const silenceMs = options.silenceMs ?? 2000;
  const pingMs = options.pingMs ?? 1000;
  const baseDelayMs = options.baseDelayMs ?? 100;
  const maxDelayMs = options.maxDelayMs ?? 5000;
  const onHealth = options.onHealth ?? (() => {});
  const now = options.now ?? Date.now;
  const maxLagSlots = options.maxLagSlots ?? 8;
  let tip: () => bigint | undefined = () => undefined;
  const client = createClient(Geyser, createGrpcTransport({ baseUrl: options.url }));
  const closer = new AbortController();
  const blockListeners = new Set<(slot: bigint) => void>();
  const statusListeners = new Set<(event: GeyserStatusEvent) => void>();
  const tellStatus = (event: GeyserStatusEvent) => {
    for (const listener of statusListeners) listener(event);
  };
  const followers = new Map<string, Set<SignatureListener>>();
  const recent = new Set<string>();
  const stats: GeyserSourceStats = {
    reconnects: 0,
    subscriptions: 0,
    fallbacks: 0,
    delivered: 0,
    blocks: 0,
    lastSlot: undefined,
    lastFromSlot: undefined,
  };
  let connected = false;
  let reported = false;
  const silence = silenceAlarm(silenceMs, now, () => checkHealth(`no update for ${silenceMs} ms`));

  function lagSlots(): number {
    const rpcSlot = tip();
    if (rpcSlot === undefined || stats.lastSlot === undefined || rpcSlot <= stats.lastSlot) return 0;
    return Number(rpcSlot - stats.lastSlot);
  }
  const healthy = () => connected && silence.quietMs() < silenceMs && lagSlots() <= maxLagSlots;

  /** Reports a change of health once, and tells the followers when the stream can no longer notify them. */
  function checkHealth(reason: string): void {
    const ok = healthy();
    if (!ok && connected && silence.quietMs() < silenceMs) reason = `${lagSlots()} slots behind the JSON-RPC`;
    if (ok === reported) return;
    reported = ok;
    if (!ok) {
      stats.fallbacks++;
      for (const listeners of followers.values()) for (const listener of listeners) listener.onFailed?.();
      followers.clear();
    }
    tellStatus({ kind: "health", healthy: ok });
    onHealth(ok, reason);
  }

  function heard(): void {
    silence.heard();
    checkHealth("stream up");
  }

  function signatureSeen(signature: string): void {
    if (recent.size >= RECENT_SIGNATURES) recent.delete(recent.values().next().value as string);
    recent.add(signature);
    const listeners = followers.get(signature);
    if (listeners === undefined) return;
    followers.delete(signature);
    for (const listener of listeners) {
      stats.delivered++;
      listener.onNotified();
    }
  }

  function requestFor(fromSlot: bigint | undefined): SubscribeRequest {
    return create(SubscribeRequestSchema, {
      commitment: STREAM_COMMITMENT_LEVEL,
      blocksMeta: { blocks: {} },
      transactionsStatus: { signatures: { vote: false } },
      // Every slot's processed, confirmed and finalized status: a confirmed transaction's slot finalizing
      // finalizes it.
      slots: { slots: { filterByCommitment: false } },
      ...(fromSlot === undefined ? {} : { fromSlot }),
    });
  }

  async function runOnce(fromSlot: bigint | undefined, signal: AbortSignal): Promise<void> {
    stats.subscriptions++;
    try {
      const updates = client.subscribe(pingingRequests(requestFor(fromSlot), pingMs, signal), {
        signal,
        ...(options.token === undefined ? {} : { headers: { "x-token": options.token } }),
      });
      for await (const update of updates) {
        connected = true;
        heard();
        const { case: kind, value } = update.updateOneof;
        if (kind === "blockMeta") {
          if (stats.lastSlot === undefined || value.slot > stats.lastSlot) stats.lastSlot = value.slot;
          stats.blocks++;
          for (const listener of blockListeners) listener(value.slot);
        } else if (kind === "transactionStatus") {
          // A confirmed-commitment stream sends the status of a transaction in a confirmed block.
          if (value.signature.length !== 64) continue;
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
    } finally {
      connected = false;
    }
  }

  let first = true;
  resubscribe({
    closer: closer.signal,
    ...(options.lease === undefined ? {} : { lease: options.lease }),
    leaseCheckMs: options.leaseCheckMs ?? 1000,
    baseDelayMs,
    maxDelayMs,
    leaseLostReason: "lease lost: another replica subscribes",
    subscribe(signal) {
      const fromSlot = stats.lastSlot === undefined ? undefined : stats.lastSlot + 1n;
      if (!first) {
        stats.reconnects++;
        stats.lastFromSlot = fromSlot;
      }
      first = false;
      return runOnce(fromSlot, signal);
    },
    ended(reason, error) {
      // The server keeps only so many slots (or replays none): start from its tip instead.
      if (isReplayUnavailable(error)) stats.lastSlot = undefined;
      checkHealth(reason);
    },
  });

  return {
    endpoint: redactUrl(options.url),
    healthy,
    watchTip(source) {
      tip = source;
    },
    lagSlots,
    follow(signature, commitment, signal, listener) {
      // Only confirmation is pushed; finality stays with the PubSub feed and polling.
      if (commitment !== "confirmed" || closer.signal.aborted || signal.aborted || !healthy()) return false;
      if (recent.has(signature)) {
        stats.delivered++;
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
    stats: () => ({ ...stats }),
    close() {
      closer.abort();
      silence.stop();
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
