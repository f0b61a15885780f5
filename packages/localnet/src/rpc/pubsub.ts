/**
 * The minimal Solana PubSub kit's confirmation strategy needs (slotSubscribe, signatureSubscribe
 * and their unsubscribes) over WebSocket (the `ws` library) on the JSON-RPC port. Subscriptions are
 * checked after every block.
 */
import type http from "node:http";
import type { Duplex } from "node:stream";
import bs58 from "bs58";
import { WebSocketServer, type WebSocket } from "ws";
import type { Chain } from "../chain/chain.ts";
import { base58Signature, commitmentField, configParam, expectArity } from "./params.ts";
import { JsonRpcError, RpcErrorCode, invalidParams, type Commitment } from "./protocol.ts";
import { parseJson, stringifyJson } from "./json.ts";

const MAX_MESSAGE_BYTES = 1 << 20;

type Subscription =
  | { kind: "slot"; id: number; socket: Socket }
  | { kind: "signature"; id: number; socket: Socket; signature: string; commitment: Commitment };

interface Socket {
  send(text: string): void;
  close(): void;
}

/** The PubSub endpoint: attach `handleUpgrade` to the HTTP server's `upgrade` event. */
export interface PubSub {
  handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void;
}

/** Creates the PubSub endpoint over a chain. */
export function createPubSub(chain: Chain): PubSub {
  const subscriptions = new Map<number, Subscription>();
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  let nextId = 0;

  const notify = (sub: Subscription, method: string, result: unknown) =>
    sub.socket.send(stringifyJson({ jsonrpc: "2.0", method, params: { result, subscription: sub.id } }));

  const checkSignature = (sub: Extract<Subscription, { kind: "signature" }>): boolean => {
    const entry = chain.signatureStatus(sub.signature);
    const visible = chain.slotAt(sub.commitment);
    if (entry === undefined || entry.slot > visible) return false;
    notify(sub, "signatureNotification", { context: { slot: visible }, value: { err: entry.err } });
    subscriptions.delete(sub.id);
    return true;
  };

  const unsubscribeBlock = chain.onBlock((block) => {
    const root = chain.slotAt("finalized");
    for (const sub of [...subscriptions.values()]) {
      if (sub.kind === "slot") notify(sub, "slotNotification", { parent: block.parentSlot, root, slot: block.slot });
      else checkSignature(sub);
    }
  });

  function call(socket: Socket, method: string, params: unknown[]): unknown {
    switch (method) {
      case "slotSubscribe": {
        expectArity(params, 0, 0);
        const id = nextId++;
        subscriptions.set(id, { kind: "slot", id, socket });
        return id;
      }
      case "signatureSubscribe": {
        expectArity(params, 1, 2);
        const signature = base58Signature(params[0], (s) => {
          try {
            return bs58.decode(s);
          } catch {
            return null;
          }
        });
        const commitment = commitmentField(configParam(params[1]));
        const id = nextId++;
        const sub = { kind: "signature" as const, id, socket, signature, commitment };
        subscriptions.set(id, sub);
        // Already at the commitment: notify right after the subscription id is delivered.
        queueMicrotask(() => {
          if (subscriptions.has(id)) checkSignature(sub);
        });
        return id;
      }
      case "slotUnsubscribe":
      case "signatureUnsubscribe": {
        expectArity(params, 1, 1);
        const id = params[0];
        const sub = typeof id === "number" ? subscriptions.get(id) : undefined;
        if (sub === undefined || sub.socket !== socket || `${sub.kind}Unsubscribe` !== method) {
          throw invalidParams("Invalid subscription id.");
        }
        subscriptions.delete(id as number);
        return true;
      }
      default:
        throw new JsonRpcError(RpcErrorCode.METHOD_NOT_FOUND, "Method not found");
    }
  }

  function onMessage(socket: Socket, text: string) {
    let request: { id?: unknown; method?: unknown; params?: unknown };
    try {
      request = parseJson(text) as typeof request;
    } catch {
      socket.send(stringifyJson({ jsonrpc: "2.0", error: { code: RpcErrorCode.PARSE_ERROR, message: "Parse error" }, id: null }));
      return;
    }
    const id = request?.id ?? null;
    if (request === null || typeof request !== "object" || typeof request.method !== "string") {
      socket.send(stringifyJson({ jsonrpc: "2.0", error: { code: RpcErrorCode.INVALID_REQUEST, message: "Invalid request" }, id: null }));
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
        if (ws.readyState === ws.OPEN) ws.send(text);
      },
      close() {
        ws.close();
      },
    };
    const cleanup = () => {
      for (const [id, sub] of subscriptions) if (sub.socket === socket) subscriptions.delete(id);
    };
    ws.on("close", cleanup);
    ws.on("error", cleanup);
    ws.on("message", (data, isBinary) => {
      if (isBinary) return ws.close(1003, "text frames only");
      onMessage(socket, Buffer.isBuffer(data) ? data.toString("utf8") : Buffer.concat(data as Buffer[]).toString("utf8"));
    });
  }

  function handleUpgrade(req: http.IncomingMessage, raw: Duplex, head: Buffer) {
    server.handleUpgrade(req, raw, head, onConnection);
  }

  return {
    handleUpgrade,
    close() {
      unsubscribeBlock();
      for (const ws of server.clients) ws.terminate();
      server.close();
      subscriptions.clear();
    },
  };
}
