/**
 * What every PubSub subscription family shares: the subscriber's socket, the notification envelope
 * (`{"jsonrpc":"2.0","method":...,"params":{"result":...,"subscription":id}}`, as agave's
 * `RpcNotifier` writes it) and the per-block "tick" telling each family which slots just became
 * visible at each commitment level.
 */
import type { Block } from "../chain/block-store.ts";
import type { Commitment } from "../rpc/protocol.ts";
import { settleZstdFrames } from "../accounts/zstd-frame.ts";
import { stringifyJson } from "../rpc/json.ts";

/** One WebSocket connection, as a family sees it. */
export interface Socket {
  send(text: string): void;
  close(): void;
}

/** A live subscription's identity. */
export interface SubscriptionRef {
  readonly id: number;
  readonly socket: Socket;
}

/** Slots `(after, upTo]` that became visible at one commitment with this block (empty when equal). */
export interface VisibleRange {
  readonly after: bigint;
  readonly upTo: bigint;
}

/** What a family hears after each produced block. */
export interface Tick {
  readonly block: Block;
  readonly visible: Readonly<Record<Commitment, VisibleRange>>;
}

/** A subscription family: the subscribe methods it answers and what it does on each block. */
export interface Feed {
  /** `xSubscribe` methods: decode params (throwing -32602) and register the subscription under `ref.id`. */
  readonly subscribe: Readonly<Record<string, (ref: SubscriptionRef, params: unknown[]) => void>>;
  /** Forgets a subscription (unsubscribe or socket closed); true when this family held it. */
  remove(id: number): boolean;
  onTick(tick: Tick): void;
  close?(): void;
}

/** Sends one notification. */
export function notify(ref: SubscriptionRef, method: string, result: unknown): void {
  const message = { jsonrpc: "2.0", method, params: { result, subscription: ref.id } };
  const frames = settleZstdFrames();
  const queued = waiting.get(ref.socket);
  if (frames === null && queued === undefined) {
    ref.socket.send(stringifyJson(message));
    return;
  }
  // A base64+zstd account is compressed asynchronously; the socket's later notifications wait behind it.
  const sent = (queued ?? Promise.resolve())
    .then(() => frames)
    .then(() => ref.socket.send(stringifyJson(message)))
    .catch(() => {})
    .finally(() => {
      if (waiting.get(ref.socket) === sent) waiting.delete(ref.socket);
    });
  waiting.set(ref.socket, sent);
}

/** Per socket, the last notification still waiting for its zstd frames. */
const waiting = new WeakMap<Socket, Promise<void>>();

/** The `RpcResponse` of a notification: context carries only the slot (no apiVersion). */
export function withSlot(slot: bigint, value: unknown): { context: { slot: bigint }; value: unknown } {
  return { context: { slot }, value };
}

/** The slots of a range, ascending. */
export function slotsIn(range: VisibleRange): bigint[] {
  const out: bigint[] = [];
  for (let s = range.after + 1n; s <= range.upTo; s++) out.push(s);
  return out;
}
