/**
 * Kit's PubSub client over a WebSocket whose messages are capped: a message larger than the cap closes
 * the connection at once (ws's `maxPayload`: the frame header gives the length, so nothing past it is
 * buffered) and the subscriptions on it fail, as for any dropped connection. Kit's own channel uses the
 * runtime's WebSocket, which takes no such limit; the rest (bigint JSON, pings, channel pooling,
 * subscription coalescing) is kit's, put together as its default client does.
 */
import WebSocket from "ws";
import {
  createRpcSubscriptionsTransportFromChannelCreator,
  createSolanaRpcSubscriptionsFromTransport,
  getChannelPoolingChannelCreator,
  getRpcSubscriptionsChannelWithAutoping,
  getRpcSubscriptionsChannelWithBigIntJSONSerialization,
  getRpcSubscriptionsTransportWithSubscriptionCoalescing,
  SOLANA_ERROR__RPC_SUBSCRIPTIONS__CHANNEL_CONNECTION_CLOSED,
  SOLANA_ERROR__RPC_SUBSCRIPTIONS__CHANNEL_FAILED_TO_CONNECT,
  SolanaError,
} from "@solana/kit";
import type { RpcSubscriptionsChannel } from "@solana/kit";

/** Default of the message cap: signature notifications are a few hundred bytes. */
export const DEFAULT_MAX_WS_MESSAGE_BYTES = 1024 * 1024;

/** Kit's PubSub client (`signatureNotifications` and the rest) for `url`, with messages capped at `maxMessageBytes`. */
export function createCappedRpcSubscriptions(url: string, maxMessageBytes: number) {
  const createChannel = getChannelPoolingChannelCreator(
    ({ abortSignal }: { abortSignal: AbortSignal }) =>
      openChannel(url, maxMessageBytes, abortSignal)
        .then(getRpcSubscriptionsChannelWithBigIntJSONSerialization)
        .then((channel) => getRpcSubscriptionsChannelWithAutoping({ abortSignal, channel, intervalMs: 5000 })),
    // Kit's defaults: the strictest provider known allows 100 subscriptions a connection.
    { maxSubscriptionsPerChannel: 100, minChannels: 1 },
  );
  const transport = getRpcSubscriptionsTransportWithSubscriptionCoalescing(
    createRpcSubscriptionsTransportFromChannelCreator(createChannel),
  );
  return createSolanaRpcSubscriptionsFromTransport(transport);
}

/** One WebSocket as a kit channel: resolves once open; `error` once it closes other than by our abort. */
function openChannel(
  url: string,
  maxPayload: number,
  signal: AbortSignal,
): Promise<RpcSubscriptionsChannel<string, string>> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const events = new EventTarget();
    const socket = new WebSocket(url, { maxPayload });
    let opened = false;
    const onAbort = () => {
      if (!opened) reject(signal.reason);
      socket.terminate();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    socket.on("open", () => {
      opened = true;
      resolve({
        on(channelName, subscriber, options) {
          const listener = (event: Event) => (subscriber as (data: unknown) => void)((event as CustomEvent).detail);
          events.addEventListener(channelName, listener, options);
          return () => events.removeEventListener(channelName, listener);
        },
        async send(message: string) {
          if (socket.readyState !== WebSocket.OPEN)
            throw new SolanaError(SOLANA_ERROR__RPC_SUBSCRIPTIONS__CHANNEL_CONNECTION_CLOSED);
          socket.send(message);
        },
      });
    });
    socket.on("message", (data: WebSocket.RawData) => {
      if (!signal.aborted) events.dispatchEvent(new CustomEvent("message", { detail: data.toString() }));
    });
    // A message past the cap comes here (ws then closes with 1009), as does a failed connection.
    socket.on("error", (error) => {
      if (signal.aborted || opened) return;
      reject(
        new SolanaError(SOLANA_ERROR__RPC_SUBSCRIPTIONS__CHANNEL_FAILED_TO_CONNECT, { errorEvent: error as never }),
      );
    });
    socket.on("close", (code: number) => {
      signal.removeEventListener("abort", onAbort);
      if (!opened) {
        reject(
          new SolanaError(SOLANA_ERROR__RPC_SUBSCRIPTIONS__CHANNEL_FAILED_TO_CONNECT, { errorEvent: code as never }),
        );
        return;
      }
      if (signal.aborted || code === 1000) return;
      events.dispatchEvent(
        new CustomEvent("error", {
          detail: new SolanaError(SOLANA_ERROR__RPC_SUBSCRIPTIONS__CHANNEL_CONNECTION_CLOSED, { cause: code }),
        }),
      );
    });
  });
}
