/**
 * A raw PubSub client for tests (the `ws` package): requests answered by id, notifications kept
 * per subscription id, waits with deadlines.
 */
import WebSocket from "ws";
import { parseJson, stringifyJson } from "../../src/rpc/json.ts";

export interface Notification {
  method: string;
  params: { result: any; subscription: number };
}

export interface WsClient {
  /** Sends one request; resolves to the whole response (result or error). */
  request(method: string, params?: unknown[]): Promise<any>;
  /** Subscribes; throws on an error response; resolves to the subscription id. */
  subscribe(method: string, params?: unknown[]): Promise<number>;
  /** Notifications received so far for a subscription. */
  received(subscription: number): Notification[];
  /** Every notification received so far, in arrival order. */
  readonly log: Notification[];
  /** Waits until a notification for `subscription` satisfies `match`; returns it. */
  next(subscription: number, match?: (n: Notification) => boolean, timeoutMs?: number): Promise<Notification>;
  close(): void;
}

export async function connect(url: string): Promise<WsClient> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const pending = new Map<number, (response: any) => void>();
  const notifications = new Map<number, Notification[]>();
  const waiters = new Set<() => void>();
  const log: Notification[] = [];
  let nextId = 1;
  ws.on("message", (data) => {
    const message = parseJson(data.toString()) as any;
    if (message.method !== undefined) {
      const list = notifications.get(message.params.subscription) ?? [];
      list.push(message);
      log.push(message);
      notifications.set(message.params.subscription, list);
      for (const wake of waiters) wake();
      return;
    }
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const client: WsClient = {
    request(method, params = []) {
      const id = nextId++;
      return new Promise((resolve) => {
        pending.set(id, resolve);
        ws.send(stringifyJson({ jsonrpc: "2.0", id, method, params }));
      });
    },
    async subscribe(method, params = []) {
      const response = await client.request(method, params);
      if (response.error) throw new Error(`${method}: ${response.error.message}`);
      return response.result as number;
    },
    received: (subscription) => notifications.get(subscription) ?? [],
    log,
    next(subscription, match = () => true, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = (notifications.get(subscription) ?? []).find(match);
          if (found === undefined) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching notification for subscription ${subscription} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => ws.close(),
  };
  return client;
}

/** The newest slot a slotSubscribe subscription had announced when `note` arrived. */
export function tipWhen(client: WsClient, slotSubscription: number, note: Notification): number {
  return Math.max(
    ...client.log
      .slice(0, client.log.indexOf(note))
      .filter((n) => n.params.subscription === slotSubscription)
      .map((n) => Number(n.params.result.slot)),
  );
}

/** Sleeps. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
