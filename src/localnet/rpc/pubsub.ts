/**
 * The minimal Solana PubSub kit's confirmation strategy needs (slotSubscribe, signatureSubscribe
 * and their unsubscribes) over a small RFC 6455 WebSocket server on the JSON-RPC port.
 *
 * Node has a WebSocket client but no server, and one dependency-free file is smaller than a
 * package: text frames, ping/pong, close, fragmented messages up to 1 MiB. Subscriptions are
 * checked after every block.
 */
import { createHash } from "node:crypto";
import type http from "node:http";
import type { Duplex } from "node:stream";
import bs58 from "bs58";
import type { Chain } from "../chain/chain.ts";
import { base58Signature, commitmentField, configParam, expectArity } from "./params.ts";
import { JsonRpcError, RpcErrorCode, invalidParams, type Commitment } from "./protocol.ts";
import { parseJson, stringifyJson } from "./json.ts";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
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

function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const header = length < 126 ? Buffer.alloc(2) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  header[0] = 0x80 | opcode;
  if (length < 126) header[1] = length;
  else if (length < 65536) {
    header[1] = 126;
    header.writeUInt16BE(length, 2);
  } else {
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  return Buffer.concat([header, payload]);
}

/** Creates the PubSub endpoint over a chain. */
export function createPubSub(chain: Chain): PubSub {
  const subscriptions = new Map<number, Subscription>();
  const sockets = new Set<Duplex>();
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

  function handleUpgrade(req: http.IncomingMessage, raw: Duplex, head: Buffer) {
    const key = req.headers["sec-websocket-key"];
    if (req.headers.upgrade?.toLowerCase() !== "websocket" || typeof key !== "string") {
      raw.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
      return;
    }
    const accept = createHash("sha1").update(key + GUID).digest("base64");
    raw.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`);
    sockets.add(raw);
    let closed = false;
    const socket: Socket = {
      send(text) {
        if (!closed && raw.writable) raw.write(frame(0x1, Buffer.from(text)));
      },
      close() {
        if (closed) return;
        closed = true;
        if (raw.writable) raw.end(frame(0x8, Buffer.alloc(0)));
      },
    };
    const cleanup = () => {
      closed = true;
      sockets.delete(raw);
      for (const [id, sub] of subscriptions) if (sub.socket === socket) subscriptions.delete(id);
    };
    raw.on("close", cleanup);
    raw.on("error", cleanup);

    let buffered: Buffer = head.length > 0 ? Buffer.from(head) : Buffer.alloc(0);
    let fragments: Buffer[] = [];
    let fragmentBytes = 0;
    const consume = () => {
      for (;;) {
        if (buffered.length < 2) return;
        const b0 = buffered[0]!;
        const b1 = buffered[1]!;
        const opcode = b0 & 0x0f;
        const masked = (b1 & 0x80) !== 0;
        let length = b1 & 0x7f;
        let at = 2;
        if (length === 126) {
          if (buffered.length < 4) return;
          length = buffered.readUInt16BE(2);
          at = 4;
        } else if (length === 127) {
          if (buffered.length < 10) return;
          const big = buffered.readBigUInt64BE(2);
          if (big > BigInt(MAX_MESSAGE_BYTES)) return socket.close();
          length = Number(big);
          at = 10;
        }
        if (!masked || length > MAX_MESSAGE_BYTES) return socket.close(); // clients must mask
        if (buffered.length < at + 4 + length) return;
        const mask = buffered.subarray(at, at + 4);
        const payload = Buffer.from(buffered.subarray(at + 4, at + 4 + length));
        for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i & 3]!;
        buffered = buffered.subarray(at + 4 + length);
        if (opcode === 0x8) return socket.close();
        if (opcode === 0x9) {
          if (raw.writable) raw.write(frame(0xa, payload));
          continue;
        }
        if (opcode === 0xa) continue;
        if (opcode === 0x0 || opcode === 0x1 || opcode === 0x2) {
          fragments.push(payload);
          fragmentBytes += payload.length;
          if (fragmentBytes > MAX_MESSAGE_BYTES) return socket.close();
          if (b0 & 0x80) {
            const text = Buffer.concat(fragments).toString("utf8");
            fragments = [];
            fragmentBytes = 0;
            onMessage(socket, text);
          }
          continue;
        }
        return socket.close();
      }
    };
    raw.on("data", (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      consume();
    });
    consume();
  }

  return {
    handleUpgrade,
    close() {
      unsubscribeBlock();
      for (const raw of sockets) raw.destroy();
      sockets.clear();
      subscriptions.clear();
    },
  };
}
