/**
 * The Solana PubSub API over WebSocket (the `ws` library) on the JSON-RPC port: the subscribe and
 * unsubscribe methods of agave's `rpc_pubsub.rs` (account, program, logs, signature, slot,
 * slotsUpdates, block, root, and vote when enabled, as agave's `--rpc-pubsub-enable-vote-subscription`
 * does). Each family lives in
 * `src/pubsub/`; this file owns the sockets, the subscription ids and the per-block tick that tells
 * each family which slots became visible at each commitment level.
 */
import type http from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { checkArity, decodeParams } from "../accounts/params.ts";
import type { MintLookup } from "../accounts/encode-account.ts";
import type { Chain } from "../chain/chain.ts";
import { createAccountFeed } from "../pubsub/account-feed.ts";
import { createBlockFeed } from "../pubsub/block-feed.ts";
import type { Feed, Socket, Tick, VisibleRange } from "../pubsub/feed.ts";
import { createLogsFeed } from "../pubsub/logs-feed.ts";
import { subscriptionIdParam } from "../pubsub/pubsub-params.ts";
import { createSignatureFeed } from "../pubsub/signature-feed.ts";
import { createSlotFeed } from "../pubsub/slot-feed.ts";
import { createVoteFeed } from "../pubsub/vote-feed.ts";
import { JsonRpcError, RpcErrorCode, invalidParams, type Commitment } from "./protocol.ts";
import { parseJson, stringifyJson } from "./json.ts";

const MAX_MESSAGE_BYTES = 1 << 20;
/** Unsent bytes a connection may hold before it is dropped. */
const MAX_BUFFERED_BYTES = 64 << 20;
const COMMITMENTS: readonly Commitment[] = ["processed", "confirmed", "finalized"];
const UNSUBSCRIBE_METHODS = new Set([
  "accountUnsubscribe",
  "programUnsubscribe",
  "logsUnsubscribe",
  "signatureUnsubscribe",
  "slotUnsubscribe",
  "slotsUpdatesUnsubscribe",
  "blockUnsubscribe",
  "rootUnsubscribe",
  // Registered whether or not vote subscriptions are enabled, as in agave (which then answers
  // "Method not found" once its params have parsed).
  "voteUnsubscribe",
]);

/** The PubSub endpoint: attach `handleUpgrade` to the HTTP server's `upgrade` event. */
export interface PubSub {
  handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void;
}

/** What the PubSub endpoint reads: the chain, and mint decimals for jsonParsed token accounts. */
export interface PubSubDeps {
  chain: Chain;
  mints: MintLookup;
  /** Serve voteSubscribe (agave: `--rpc-pubsub-enable-vote-subscription`, off by default). */
  voteSubscription?: boolean;
  /** Told of an unexpected error in a subscription family. */
  onInternalError?: (err: unknown) => void;
}

/** Creates the PubSub endpoint over a chain. */
export function createPubSub({ chain, mints, voteSubscription = false, onInternalError }: PubSubDeps): PubSub {
  /** Live subscription ids: their socket and the family holding them. */
  const owners = new Map<number, { socket: Socket; feed: Feed }>();
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  let nextId = 0;

  const feeds: Feed[] = [
    createSlotFeed({ chain }),
    createSignatureFeed({ chain, ended: (id) => owners.delete(id) }),
    createAccountFeed({ chain, mints }),
    createLogsFeed({ chain }),
    createBlockFeed({ chain }),
    ...(voteSubscription ? [createVoteFeed({ chain })] : []),
  ];
  const subscribeMethods = new Map<string, { feed: Feed; subscribe: Feed["subscribe"][string] }>();
  for (const feed of feeds)
    for (const [method, subscribe] of Object.entries(feed.subscribe)) subscribeMethods.set(method, { feed, subscribe });

  const seen = {} as Record<Commitment, bigint>;
  for (const c of COMMITMENTS) seen[c] = chain.slotAt(c);

  const unsubscribeBlock = chain.onBlock((block) => {
    const visible = {} as Record<Commitment, VisibleRange>;
    for (const c of COMMITMENTS) {
      const upTo = chain.slotAt(c);
      visible[c] = { after: seen[c] < upTo ? seen[c] : upTo, upTo };
      seen[c] = upTo;
    }
    const tick: Tick = { block, visible };
    for (const feed of feeds) {
      try {
        feed.onTick(tick);
      } catch (err) {
        onInternalError?.(err); // one family's failure must not silence the others
      }
    }
  });

  function call(socket: Socket, method: string, params: unknown[]): unknown {
    const entry = subscribeMethods.get(method);
    if (entry !== undefined) {
      const id = nextId++;
      entry.subscribe({ id, socket }, params);
      owners.set(id, { socket, feed: entry.feed });
      return id;
    }
    if (UNSUBSCRIBE_METHODS.has(method)) {
      // agave's unsubscribe ends any of the connection's subscriptions, whatever its family.
      const id = decodeParams(() => {
        checkArity(params, 1, 1);
        return subscriptionIdParam(params[0]);
      });
      if (method === "voteUnsubscribe" && !voteSubscription) {
        throw new JsonRpcError(RpcErrorCode.METHOD_NOT_FOUND, "Method not found");
      }
      const owner = owners.get(id);
      if (owner === undefined || owner.socket !== socket) throw invalidParams("Invalid subscription id.");
      owners.delete(id);
      owner.feed.remove(id);
      return true;
    }
    throw new JsonRpcError(RpcErrorCode.METHOD_NOT_FOUND, "Method not found");
  }

  function onMessage(socket: Socket, text: string) {
    let request: { id?: unknown; method?: unknown; params?: unknown };
    try {
      request = parseJson(text) as typeof request;
    } catch {
      socket.send(
        stringifyJson({ jsonrpc: "2.0", error: { code: RpcErrorCode.PARSE_ERROR, message: "Parse error" }, id: null }),
      );
      return;
    }
    const id = request?.id ?? null;
    if (request === null || typeof request !== "object" || typeof request.method !== "string") {
      socket.send(
        stringifyJson({
          jsonrpc: "2.0",
          error: { code: RpcErrorCode.INVALID_REQUEST, message: "Invalid request" },
          id: null,
        }),
      );
      return;
    }
    try {
      const params = request.params === undefined ? [] : request.params;
      if (!Array.isArray(params)) throw invalidParams("Invalid params: invalid type: map, expected a tuple.");
      const result = call(socket, request.method, params);
      socket.send(stringifyJson({ jsonrpc: "2.0", result, id }));
    } catch (err) {
      const e = err instanceof JsonRpcError ? err : new JsonRpcError(RpcErrorCode.INTERNAL_ERROR, "Internal error");
      socket.send(stringifyJson({ jsonrpc: "2.0", error: { code: e.code, message: e.message }, id }));
    }
  }

  function onConnection(ws: WebSocket) {
    const socket: Socket = {
      send(text) {
        if (ws.readyState !== ws.OPEN) return;
        // A client that stops reading is dropped, as agave drops a connection whose queue is full.
        if (ws.bufferedAmount > MAX_BUFFERED_BYTES) return ws.terminate();
        ws.send(text);
      },
      close() {
        ws.close();
      },
    };
    const cleanup = () => {
      for (const [id, owner] of owners) {
        if (owner.socket !== socket) continue;
        owners.delete(id);
        owner.feed.remove(id);
      }
    };
    ws.on("close", cleanup);
    ws.on("error", cleanup);
    ws.on("message", (data, isBinary) => {
      if (isBinary) return ws.close(1003, "text frames only");
      onMessage(
        socket,
        Buffer.isBuffer(data) ? data.toString("utf8") : Buffer.concat(data as Buffer[]).toString("utf8"),
      );
    });
  }

  function handleUpgrade(req: http.IncomingMessage, raw: Duplex, head: Buffer) {
    server.handleUpgrade(req, raw, head, onConnection);
  }

  return {
    handleUpgrade,
    close() {
      unsubscribeBlock();
      for (const feed of feeds) feed.close?.();
      for (const ws of server.clients) ws.terminate();
      server.close();
      for (const [id, owner] of owners) owner.feed.remove(id);
      owners.clear();
    },
  };
}
