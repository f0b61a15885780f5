/**
 * Pushed word that a signature reached a commitment: `signatureSubscribe` on the node's PubSub
 * WebSocket, through kit's subscriptions client. Polling stays the source of truth; a notification
 * only says "look now", so a send waiting for confirmation hears of it as soon as the node does,
 * instead of at the next poll. Given several URLs, the feed moves to the next one after a failed
 * connection or subscription; once every one has failed in a row it stands down for a while and the
 * waits fall back to polling alone.
 */
import type { Signature } from "@solana/kit";
import { redactUrl } from "./metrics.ts";
import { createCappedRpcSubscriptions, DEFAULT_MAX_WS_MESSAGE_BYTES } from "./capped-websocket.ts";
import { checkResult, NOTIFICATION_SCHEMAS } from "./response-schemas.ts";

/** Options of {@link createSignatureFeed}. */
export interface SignatureFeedOptions {
  /** The node's PubSub endpoint (ws: or wss:), or several in order of preference. */
  url: string | readonly string[];
  /** Subscriptions open at once; signatures past it are polled only (default 1,000). */
  maxSubscriptions?: number;
  /** How long the feed stands down once a subscription has failed on every URL in a row (default 30 s). */
  retryAfterMs?: number;
  /** Receives subscription failures, for logs. */
  onError?: (error: unknown) => void;
  /** The largest PubSub message taken (default 1 MiB); a larger one drops the connection at once. */
  maxMessageBytes?: number;
  now?: () => number;
}

/** What a followed signature hears. */
export interface SignatureListener {
  /** The node has acknowledged the subscription: from here on a notification will come. */
  onSubscribed?(): void;
  /** The node says the signature reached the commitment (called at most once). */
  onNotified(): void;
  /** The subscription failed (a dropped connection, a node without PubSub): no notification will come. */
  onFailed?(): void;
}

/** Notifications of signatures reaching a commitment. */
export interface SignatureFeed {
  /** The endpoint in use, redacted. */
  readonly endpoint: string;
  /**
   * Tells `listener` when the node says `signature` reached `commitment`, until `signal` aborts.
   * Returns false, doing nothing, when the feed is standing down or full.
   */
  follow(
    signature: string,
    commitment: "confirmed" | "finalized",
    signal: AbortSignal,
    listener: SignatureListener,
  ): boolean;
  /** Subscriptions open now. */
  size(): number;
  /** Ends every subscription. */
  close(): void;
}

/**
 * The WebSocket URL that goes with a JSON-RPC URL: the same address over ws(s), as hosted providers
 * serve it, except agave's default RPC port 8899, whose PubSub listens on 8900.
 */
export function webSocketUrlFor(rpcUrl: string): string {
  const url = new URL(rpcUrl);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  if (url.port === "8899") url.port = "8900";
  return url.toString();
}

/** Creates a feed; nothing connects until the first `follow`. */
export function createSignatureFeed(options: SignatureFeedOptions): SignatureFeed {
  const maxSubscriptions = options.maxSubscriptions ?? 1000;
  const retryAfterMs = options.retryAfterMs ?? 30_000;
  const onError = options.onError ?? (() => {});
  const now = options.now ?? Date.now;
  const urls = typeof options.url === "string" ? [options.url] : [...options.url];
  if (urls.length === 0) throw new RangeError("at least one WebSocket URL is required");
  // Kit's client per URL, made when the feed first moves to it.
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_WS_MESSAGE_BYTES;
  const clients = new Map<number, ReturnType<typeof createCappedRpcSubscriptions>>();
  const clientOf = (index: number) => {
    let client = clients.get(index);
    if (client === undefined) {
      client = createCappedRpcSubscriptions(urls[index], maxMessageBytes);
      clients.set(index, client);
    }
    return client;
  };
  const closer = new AbortController();
  let open = 0;
  let downUntil = 0;
  let current = 0;
  // URLs that failed in a row since the last subscription that worked.
  let failedInRow = 0;

  /** A subscription on URL `index` failed: move on to the next URL, or stand down once all have failed. */
  function onFailure(index: number): void {
    if (index !== current) return; // the feed has moved on already
    current = (current + 1) % urls.length;
    failedInRow++;
    if (failedInRow >= urls.length) {
      failedInRow = 0;
      downUntil = now() + retryAfterMs;
    }
  }

  return {
    get endpoint() {
      return redactUrl(urls[current]);
    },
    follow(signature, commitment, signal, listener) {
      if (closer.signal.aborted || signal.aborted || open >= maxSubscriptions || now() < downUntil) return false;
      open++;
      const abortSignal = AbortSignal.any([signal, closer.signal]);
      const index = current;
      void (async () => {
        try {
          const notifications = await clientOf(index)
            .signatureNotifications(signature as Signature, { commitment })
            .subscribe({ abortSignal });
          if (index === current) failedInRow = 0;
          listener.onSubscribed?.();
          for await (const notification of notifications) {
            // A notification of the wrong shape says nothing to trust: the URL is failing, polling carries on.
            const mismatch = checkResult(NOTIFICATION_SCHEMAS, "signatureNotification", notification);
            if (mismatch !== undefined)
              throw new Error(`a signature notification that does not fit (${mismatch.path})`);
            listener.onNotified();
            return;
          }
        } catch (error) {
          if (abortSignal.aborted) return;
          // A node without PubSub, or a dropped connection: the next URL, or polling alone for a while.
          onFailure(index);
          onError(error);
          listener.onFailed?.();
        } finally {
          open--;
        }
      })();
      return true;
    },
    size: () => open,
    close: () => closer.abort(),
  };
}
