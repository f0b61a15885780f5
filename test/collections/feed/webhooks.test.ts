/**
 * Webhooks over the collection feed of the localnet world, delivering to a real HTTP receiver on loopback
 * (allowed by the explicit setting), whose signatures are checked with the `standardwebhooks` package as a
 * receiver would: delivery, retries in order with backoff, 410 disabling, the URL guard, another key's
 * webhook, and a collection that is none. Blocks are applied to the feed as in collection-feed.test.ts.
 */
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from "@solana/kit";
import type { Address, Blockhash } from "@solana/kit";
import bs58 from "bs58";
import { Webhook } from "standardwebhooks";
import { createCollections } from "../../../src/collections/collections.ts";
import { createCollectionFeed } from "../../../src/collections/feed/collection-feed.ts";
import type { CollectionFeed } from "../../../src/collections/feed/collection-feed.ts";
import { createMemoryEventLog } from "../../../src/collections/feed/event-log.ts";
import { feedBlockOf } from "../../../src/collections/feed/feed-block.ts";
import { createWebhooks } from "../../../src/collections/feed/webhooks.ts";
import type { Webhooks } from "../../../src/collections/feed/webhooks.ts";
import { SolgateError } from "../../../src/errors.ts";
import { createUpstream } from "../../../src/upstream/upstream.ts";
import type { Upstream } from "../../../src/upstream/upstream.ts";
import { startCollectionWorld } from "../collection-world.ts";
import type { CollectionWorld } from "../collection-world.ts";

const TOKEN_METADATA = "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s" as Address;

interface Received {
  headers: Record<string, string>;
  body: string;
}

let world: CollectionWorld;
let upstream: Upstream;
let feed: CollectionFeed;
let webhooks: Webhooks;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** Statuses the receiver answers with, in order; 200 once they run out. */
const answers: number[] = [];

beforeAll(async () => {
  world = await startCollectionWorld(20);
  upstream = createUpstream({ chain: "localnet", rpcUrls: [world.localnet.rpcUrl], maxRetries: 0 });
  feed = createCollectionFeed({
    upstream,
    collections: createCollections({ upstream }),
    log: createMemoryEventLog({ retentionMs: 3_600_000, maxEventsPerCollection: 1000 }),
    heartbeatMs: 200,
    pollMs: 100,
  });
  webhooks = createWebhooks({ feed, allowPrivateUrls: true, firstBackoffMs: 50, maxBackoffMs: 200 });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const status = answers.shift() ?? 200;
      received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
}, 120_000);
afterAll(async () => {
  webhooks?.stop();
  await feed?.stop();
  await upstream?.close();
  await world?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function until<T>(read: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function refusal(promise: Promise<unknown> | (() => unknown)): Promise<SolgateError> {
  let error: unknown;
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(SolgateError);
  return error as SolgateError;
}

const payer = bs58.encode(randomBytes(32)) as Address;
const other = () => bs58.encode(randomBytes(32)) as Address;
let slot = 5_000_000n;

/** A block verifying (30) or unverifying (31) `metadata` in `collection`. */
async function verifyBlock(discriminator: 30 | 31, metadata: string, collection: string): Promise<void> {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(payer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: bs58.encode(randomBytes(32)) as Blockhash, lastValidBlockHeight: 1n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstructions(
        [
          {
            programAddress: TOKEN_METADATA,
            accounts: [metadata, payer, payer, collection, other(), other()].map((address) => ({
              address: address as Address,
              role: AccountRole.WRITABLE,
            })),
            data: Uint8Array.of(discriminator),
          },
        ],
        m,
      ),
  );
  const wire = Buffer.from(getTransactionEncoder().encode(compileTransaction(message)));
  randomBytes(64).copy(wire, 1);
  const entry = {
    transaction: [wire.toString("base64"), "base64"],
    meta: { err: null, innerInstructions: [], preTokenBalances: [], postTokenBalances: [] },
  };
  await feed.applyBlock(feedBlockOf(slot++, { transactions: [entry], blockTime: 1_800_000_000 }));
}

describe("webhooks", () => {
  const collection = () => world.generated.mint;
  const spoof = () => world.metadata.get(world.manifest.spoofs.unverifiedMembers[0]!)!;

  it("delivers each event signed (checked with standardwebhooks), in order, retrying failures with backoff", async () => {
    const { webhook, secret } = await webhooks.create("key-a", {
      url: receiverUrl,
      collections: [collection()],
      kinds: [],
    });
    expect(secret).toMatch(/^whsec_/);
    answers.push(500, 503); // the first event fails twice; the second must wait behind it
    const start = received.length;
    await verifyBlock(30, spoof().address, collection());
    await verifyBlock(31, spoof().address, collection());
    const got = await until(() => (received.length - start >= 4 ? received.slice(start) : undefined));
    const verifier = new Webhook(secret);
    const payloads = got.map((r) => verifier.verify(r.body, r.headers) as { kind: string; sequence: string });
    expect(payloads.map((p) => p.kind)).toEqual(["MEMBER_ADDED", "MEMBER_ADDED", "MEMBER_ADDED", "MEMBER_REMOVED"]);
    // Retries carry the same webhook-id; the next event has its own.
    expect(new Set(got.slice(0, 3).map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(got[3]!.headers["webhook-id"]).not.toBe(got[0]!.headers["webhook-id"]);
    // A forged signature is refused by the receiver's library.
    expect(() =>
      new Webhook(`whsec_${randomBytes(24).toString("base64")}`).verify(got[0]!.body, got[0]!.headers),
    ).toThrow();
    // The receiver has the request before the sender has its answer: wait for the states to settle.
    const deliveries = await until(async () => {
      const page = (await webhooks.deliveries("key-a", webhook.id, 10, "")).deliveries;
      return page.length === 2 && page.every((d) => d.state === "DELIVERED") ? page : undefined;
    });
    expect(deliveries.map((d) => [d.event.kind, d.state, d.attempts])).toEqual([
      ["MEMBER_REMOVED", "DELIVERED", 1],
      ["MEMBER_ADDED", "DELIVERED", 3],
    ]);
    expect(deliveries[1]!.lastStatus).toBe(200);
    await webhooks.remove("key-a", webhook.id);
  });

  it("a receiver that answers 410 disables its webhook", async () => {
    const { webhook } = await webhooks.create("key-a", { url: receiverUrl, collections: [collection()], kinds: [] });
    answers.push(410);
    await verifyBlock(30, spoof().address, collection());
    const disabled = await until(async () => {
      const found = (await webhooks.list("key-a")).find((w) => w.id === webhook.id);
      return found?.enabled === false ? found : undefined;
    });
    expect(disabled.disabledReason).toContain("410");
    expect((await webhooks.deliveries("key-a", webhook.id, 10, "")).deliveries[0]).toMatchObject({
      state: "FAILED",
      lastStatus: 410,
    });
    await verifyBlock(31, spoof().address, collection());
    await webhooks.remove("key-a", webhook.id);
  });

  it("another key's webhook is not found, to list, read or delete", async () => {
    const { webhook } = await webhooks.create("key-a", { url: receiverUrl, collections: [collection()], kinds: [] });
    expect(await webhooks.list("key-b")).toEqual([]);
    expect((await refusal(() => webhooks.remove("key-b", webhook.id))).reason).toBe("WEBHOOK_NOT_FOUND");
    expect((await refusal(() => webhooks.deliveries("key-b", webhook.id, 10, ""))).reason).toBe("WEBHOOK_NOT_FOUND");
    await webhooks.remove("key-a", webhook.id);
    expect((await refusal(() => webhooks.remove("key-a", webhook.id))).reason).toBe("WEBHOOK_NOT_FOUND");
  });

  it("refuses URLs the metadata guard refuses (without the test setting), and a collection that is none", async () => {
    const guarded = createWebhooks({ feed });
    for (const url of [
      "http://example.com/hook",
      "https://127.0.0.1/hook",
      "https://[::1]/hook",
      "https://10.0.0.8/hook",
      "https://169.254.169.254/latest",
      "https://user:pass@example.com/hook",
      "ftp://example.com/",
      "not a url",
    ]) {
      const e = await refusal(guarded.create("key-a", { url, collections: [collection()], kinds: [] }));
      expect(e.reason, url).toBe("WEBHOOK_URL_REFUSED");
    }
    const e = await refusal(
      webhooks.create("key-a", {
        url: receiverUrl,
        collections: [world.manifest.spoofs.unverifiedMembers[0]!],
        kinds: [],
      }),
    );
    expect(e.reason).toBe("NOT_FOUND");
    guarded.stop();
  });
});
