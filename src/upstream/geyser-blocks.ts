/**
 * Blocks from a Yellowstone Geyser `Subscribe` stream, with their transactions, for the fee market: one bidi
 * stream at `processed` with a `blocks` filter (transactions, no accounts, no entries). Processed is what
 * makes a block's levels reach clients in its own slot; at confirmed they would come a slot or more later.
 * The cost: a processed block may sit on a fork that dies, and its prices then stay in the window (see
 * docs/calls.md, "Blocks from the Geyser stream"); the JSON-RPC follower, which reads confirmed blocks, stays
 * the fallback.
 *
 * It is its own stream, beside the confirmed one of geyser-source.ts (block metas and transaction statuses):
 * a Subscribe carries one commitment. It opens its own connection unless given a `transport` to share.
 *
 * Health: usable while connected and a block came in the last `silenceMs` (2 s; pongs to the pings it
 * sends keep the connection alive but do not count: a stream that pings without blocks is stuck). After a
 * break it reconnects with backoff and `from_slot` = the last block seen + 1, so the server replays what
 * was missed; when that slot is out of its replay range it starts from the tip, and the follower fills the
 * gap over JSON-RPC (its parent links show it).
 */
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  CommitmentLevel,
  Geyser,
  type SubscribeRequest,
  SubscribeRequestSchema,
  type SubscribeUpdateBlock,
} from "../../gen/geyser/geyser_pb.js";
import { isReplayUnavailable, pingingRequests, resubscribe, silenceAlarm } from "./geyser-stream.ts";
import type { StreamLease } from "./geyser-stream.ts";

/** Options of {@link createGeyserBlocks}. */
export interface GeyserBlocksOptions {
  /** The Geyser gRPC endpoint (http: for h2c, https: for TLS). */
  url: string;
  /** Sent as `x-token` when set. */
  token?: string;
  /** A transport to share (default: a new one for `url`). */
  transport?: Transport;
  /** No block for this long: the stream counts as down (default 2,000 ms). */
  silenceMs?: number;
  /** Client ping period (default 1,000 ms). */
  pingMs?: number;
  /** Reconnect backoff: first step and cap (default 100 ms, 5 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Told once per change of health, for one log line. */
  onHealth?: (healthy: boolean, reason: string) => void;
  /**
   * In a fleet: the fee lease. Only its holder (the replica whose blocks feed every replica's window through
   * the Redis log) subscribes; checked before each subscription and every `leaseCheckMs` (default 1,000 ms)
   * while subscribed.
   */
  lease?: StreamLease;
  leaseCheckMs?: number;
  now?: () => number;
}

/** Counters, for metrics and tests. */
export interface GeyserBlocksStats {
  /** Streams opened after the first. */
  reconnects: number;
  /** Times the stream went from usable to not. */
  fallbacks: number;
  /** Blocks delivered to the listeners. */
  blocks: number;
  /** The newest block slot seen, and the `from_slot` of the last reconnect. */
  lastSlot: bigint | undefined;
  lastFromSlot: bigint | undefined;
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
  const silenceMs = options.silenceMs ?? 2000;
  const pingMs = options.pingMs ?? 1000;
  const baseDelayMs = options.baseDelayMs ?? 100;
  const maxDelayMs = options.maxDelayMs ?? 5000;
  const onHealth = options.onHealth ?? (() => {});
  const now = options.now ?? Date.now;
  const client = createClient(Geyser, options.transport ?? createGrpcTransport({ baseUrl: options.url }));
  const closer = new AbortController();
  const listeners = new Set<(block: SubscribeUpdateBlock) => void>();
  const stats: GeyserBlocksStats = {
    reconnects: 0,
    fallbacks: 0,
    blocks: 0,
    lastSlot: undefined,
    lastFromSlot: undefined,
  };
  let connected = false;
  let reported = false;
  const silence = silenceAlarm(silenceMs, now, () => checkHealth(`no block for ${silenceMs} ms`));

  const healthy = () => connected && silence.quietMs() < silenceMs;

  function checkHealth(reason: string): void {
    const ok = healthy();
    if (ok === reported) return;
    reported = ok;
    if (!ok) stats.fallbacks++;
    onHealth(ok, reason);
  }

  function blockCame(): void {
    silence.heard();
    checkHealth("blocks flowing");
  }

  function requestFor(fromSlot: bigint | undefined): SubscribeRequest {
    return create(SubscribeRequestSchema, {
      commitment: CommitmentLevel.PROCESSED,
      blocks: { fees: { includeTransactions: true, includeAccounts: false, includeEntries: false } },
      ...(fromSlot === undefined ? {} : { fromSlot }),
    });
  }

  async function runOnce(fromSlot: bigint | undefined, signal: AbortSignal): Promise<void> {
    try {
      const updates = client.subscribe(pingingRequests(requestFor(fromSlot), pingMs, signal), {
        signal,
        ...(options.token === undefined ? {} : { headers: { "x-token": options.token } }),
      });
      for await (const update of updates) {
        connected = true;
        if (update.updateOneof.case !== "block") continue;
        const block = update.updateOneof.value;
        // Replays and reconnects may repeat a slot: each is handed on once, in rising order.
        if (stats.lastSlot !== undefined && block.slot <= stats.lastSlot) continue;
        stats.lastSlot = block.slot;
        stats.blocks++;
        blockCame();
        for (const listener of listeners) listener(block);
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
    leaseLostReason: "fee lease lost: another replica subscribes",
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
      // The server keeps only so many slots (or replays none): start from its tip instead.(the follower fills the gap).
      if (isReplayUnavailable(error)) stats.lastSlot = undefined;
      checkHealth(reason);
    },
  });

  return {
    healthy,
    onBlock(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stats: () => ({ ...stats }),
    close() {
      closer.abort();
      silence.stop();
    },
  };
}
