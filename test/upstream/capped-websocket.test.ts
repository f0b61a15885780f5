/**
 * The signature feed in front of a hostile PubSub server (a real `ws` server): a message past the cap
 * drops the connection at once (close 1009) and the subscription fails; a notification of the wrong
 * shape fails it too; neither is taken as "the signature landed".
 */
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { createSignatureFeed } from "../../src/upstream/signature-feed.ts";

const SIGNATURE = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";
const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    for (const c of s.clients) c.terminate();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

/** A PubSub server that acknowledges the subscription, then sends `notification()`; records close codes. */
async function pubsub(notification: () => string): Promise<{ url: string; closes: number[] }> {
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  servers.push(server);
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const closes: number[] = [];
  server.on("connection", (socket) => {
    socket.on("close", (code) => closes.push(code));
    socket.on("message", (m) => {
      const { id } = JSON.parse(m.toString()) as { id: number };
      socket.send(JSON.stringify({ jsonrpc: "2.0", id, result: 7 }));
      // As a node does: the notification comes once the subscription is in place, not in the same breath.
      setTimeout(() => socket.send(notification()), 50);
    });
  });
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, closes };
}

async function follow(url: string, maxMessageBytes: number) {
  const errors: unknown[] = [];
  const feed = createSignatureFeed({ url, maxMessageBytes, onError: (e) => errors.push(e) });
  const heard = { subscribed: false, notified: false, failed: false };
  const abort = new AbortController();
  feed.follow(SIGNATURE, "confirmed", abort.signal, {
    onSubscribed: () => (heard.subscribed = true),
    onNotified: () => (heard.notified = true),
    onFailed: () => (heard.failed = true),
  });
  const deadline = Date.now() + 5000;
  while (!heard.notified && !heard.failed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  abort.abort();
  feed.close();
  return { heard, errors };
}

const notification = (value: unknown) =>
  JSON.stringify({
    jsonrpc: "2.0",
    method: "signatureNotification",
    params: { subscription: 7, result: { context: { slot: 5 }, value } },
  });

describe("the signature feed's WebSocket", () => {
  it("hears a well-formed notification under the cap", async () => {
    const { url } = await pubsub(() => notification({ err: null }));
    const { heard } = await follow(url, 1024 * 1024);
    expect(heard).toMatchObject({ notified: true, failed: false });
  });

  it("drops the connection on a message past the cap (1009) and fails the subscription", async () => {
    const { url, closes } = await pubsub(() => notification({ err: null, padding: "A".repeat(2 * 1024 * 1024) }));
    const { heard } = await follow(url, 1024 * 1024);
    expect(heard).toMatchObject({ notified: false, failed: true });
    await new Promise((r) => setTimeout(r, 100));
    expect(closes).toContain(1009);
  });

  it("fails the subscription on a notification of the wrong shape", async () => {
    const { url } = await pubsub(() => notification("a string instead"));
    const { heard, errors } = await follow(url, 1024 * 1024);
    expect(heard).toMatchObject({ notified: false, failed: true });
    expect(String(errors[0])).toContain("result.value");
  });
});
