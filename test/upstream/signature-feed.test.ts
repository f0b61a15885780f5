/**
 * The signature feed against a real localnet's PubSub: a notification when a signature is confirmed,
 * clean-up on abort, a cap on open subscriptions, and standing down when the node has no WebSocket.
 */
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Base64EncodedWireTransaction } from "@solana/kit";
import { createSignatureFeed, webSocketUrlFor } from "../../src/upstream/signature-feed.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";

let chain: ChainFixture;

beforeAll(async () => {
  chain = await startChainFixture({ slotMs: 25 });
});

afterAll(async () => {
  await chain?.stop();
});

const until = async (condition: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
};

async function submit(lamports: bigint) {
  const tx = await transferTransaction({
    payer: await chain.funded(1),
    lamports,
    blockhash: await chain.latestBlockhash(),
  });
  return {
    signature: tx.signature,
    send: () =>
      chain.upstream.rpc
        .sendTransaction(Buffer.from(tx.wire).toString("base64") as Base64EncodedWireTransaction, {
          encoding: "base64",
        })
        .send(),
  };
}

describe("webSocketUrlFor", () => {
  it("keeps a provider's address and switches the scheme; agave's 8899 becomes 8900", () => {
    expect(webSocketUrlFor("https://rpc.example.com/v1/key?x=1")).toBe("wss://rpc.example.com/v1/key?x=1");
    expect(webSocketUrlFor("http://127.0.0.1:8899")).toBe("ws://127.0.0.1:8900/");
    expect(webSocketUrlFor("http://127.0.0.1:41234/")).toBe("ws://127.0.0.1:41234/");
  });
});

describe("signature feed on a real localnet", () => {
  it("calls back once when the signature is confirmed, then closes the subscription", async () => {
    const feed = createSignatureFeed({ url: chain.localnet.wsUrl });
    const tx = await submit(1_000_000n);
    let calls = 0;
    let subscribed = false;
    const listener = { onSubscribed: () => (subscribed = true), onNotified: () => calls++ };
    expect(feed.follow(tx.signature, "confirmed", new AbortController().signal, listener)).toBe(true);
    expect(feed.size()).toBe(1);
    await until(() => subscribed);
    await tx.send();
    await until(() => calls > 0);
    await chain.waitConfirmed(tx.signature);
    await until(() => feed.size() === 0);
    expect(calls).toBe(1);
    feed.close();
  });

  it("frees a subscription whose signal aborts, without calling back", async () => {
    const feed = createSignatureFeed({ url: chain.localnet.wsUrl });
    const tx = await submit(1_000_001n);
    const stop = new AbortController();
    let calls = 0;
    feed.follow(tx.signature, "confirmed", stop.signal, { onNotified: () => calls++ });
    stop.abort();
    await until(() => feed.size() === 0);
    await tx.send();
    await chain.waitConfirmed(tx.signature);
    expect(calls).toBe(0);
    feed.close();
  });

  it("refuses past its cap, leaving those signatures to polling", async () => {
    const feed = createSignatureFeed({ url: chain.localnet.wsUrl, maxSubscriptions: 1 });
    const stop = new AbortController();
    const [a, b] = await Promise.all([submit(1_000_002n), submit(1_000_003n)]);
    expect(feed.follow(a.signature, "confirmed", stop.signal, { onNotified() {} })).toBe(true);
    expect(feed.follow(b.signature, "confirmed", stop.signal, { onNotified() {} })).toBe(false);
    stop.abort();
    await until(() => feed.size() === 0);
    expect(feed.follow(b.signature, "confirmed", stop.signal, { onNotified() {} })).toBe(false); // its signal has aborted
    feed.close();
  });

  it("stands down after a node without PubSub refuses, and tries again later", async () => {
    // A port that accepts TCP and closes at once: no WebSocket there.
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    let clock = 1_000;
    const errors: unknown[] = [];
    const feed = createSignatureFeed({
      url: `ws://127.0.0.1:${port}`,
      retryAfterMs: 30_000,
      now: () => clock,
      onError: (e) => errors.push(e),
    });
    const signature = (await submit(1_000_004n)).signature;
    let failed = 0;
    expect(
      feed.follow(signature, "confirmed", new AbortController().signal, { onNotified() {}, onFailed: () => failed++ }),
    ).toBe(true);
    await until(() => errors.length === 1);
    expect(failed).toBe(1);
    await until(() => feed.size() === 0);
    expect(feed.follow(signature, "confirmed", new AbortController().signal, { onNotified() {} })).toBe(false);
    clock += 30_000;
    expect(feed.follow(signature, "confirmed", new AbortController().signal, { onNotified() {} })).toBe(true);
    await until(() => errors.length === 2);
    feed.close();
    server.close();
  });

  it("moves to the next URL after a failed connection, and stands down only when every URL has failed", async () => {
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const dead = `ws://127.0.0.1:${port}`;
    const errors: unknown[] = [];
    const feed = createSignatureFeed({
      url: [dead, chain.localnet.wsUrl],
      retryAfterMs: 30_000,
      onError: (e) => errors.push(e),
    });
    expect(feed.endpoint).toBe(`ws://127.0.0.1:${port}`);
    const first = await submit(1_000_005n);
    let failed = 0;
    expect(
      feed.follow(first.signature, "confirmed", new AbortController().signal, {
        onNotified() {},
        onFailed: () => failed++,
      }),
    ).toBe(true);
    await until(() => failed === 1);
    expect(errors).toHaveLength(1);
    // Not standing down: the next follow goes to the live localnet and hears the confirmation.
    expect(feed.endpoint).toBe(new URL(chain.localnet.wsUrl).origin);
    const second = await submit(1_000_006n);
    let subscribed = false;
    let notified = false;
    expect(
      feed.follow(second.signature, "confirmed", new AbortController().signal, {
        onSubscribed: () => (subscribed = true),
        onNotified: () => (notified = true),
      }),
    ).toBe(true);
    await until(() => subscribed);
    await second.send();
    await until(() => notified);
    expect(errors).toHaveLength(1);
    feed.close();
    server.close();
  });
});
