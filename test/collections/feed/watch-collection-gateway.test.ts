/**
 * WatchCollection through the real gateway (`startGateway` with its embedded localnet and world) over gRPC,
 * and its SSE route with plain fetch: every refusal with its reason code (an address that is no collection,
 * a malformed cursor, a cursor of a log that is gone, by `?cursor=` and by `Last-Event-ID`), and an idle
 * watch that stays open with heartbeats.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "../../../gen/google/rpc/error_details_pb.js";
import { CollectionService } from "../../../gen/solgate/v1/collection_service_pb.js";
import { encodeFeedCursor } from "../../../src/collections/feed/feed-cursor.ts";
import { REST_API_KEY, startRestGateway } from "../../rest/rest-gateway.ts";
import type { RestGateway } from "../../rest/rest-gateway.ts";

let gw: RestGateway;
beforeAll(async () => {
  gw = await startRestGateway();
}, 120_000);
afterAll(async () => {
  await gw?.stop();
});

const headers = () => ({ authorization: `Bearer ${REST_API_KEY}` });
const collection = () => gw.manifest.collections[0]!.mint;

async function watchRefusal(request: { address: string; cursor?: string }): Promise<ConnectError> {
  const client = createClient(CollectionService, createGrpcTransport({ baseUrl: gw.url }));
  try {
    for await (const _ of client.watchCollection({ chain: "localnet", ...request }, { headers: headers() })) break;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("the watch was not refused");
}

describe("WatchCollection over gRPC", () => {
  it("an address that is no collection: NOT_FOUND", async () => {
    const e = await watchRefusal({ address: gw.manifest.spoofs.unverifiedMembers[0]! });
    expect(e.code).toBe(Code.NotFound);
    expect(e.findDetails(ErrorInfoSchema)[0]?.reason).toBe("NOT_FOUND");
  });

  it("a malformed cursor: INVALID_ARGUMENT, COLLECTION_CURSOR_INVALID", async () => {
    const e = await watchRefusal({ address: collection(), cursor: "bm90LWEtY3Vyc29y" });
    expect(e.code).toBe(Code.InvalidArgument);
    expect(e.findDetails(ErrorInfoSchema)[0]?.reason).toBe("COLLECTION_CURSOR_INVALID");
  });

  it("a cursor of a log that is gone: FAILED_PRECONDITION, COLLECTION_CURSOR_EXPIRED", async () => {
    const e = await watchRefusal({ address: collection(), cursor: encodeFeedCursor(collection(), "gone", 5n) });
    expect(e.code).toBe(Code.FailedPrecondition);
    expect(e.findDetails(ErrorInfoSchema)[0]?.reason).toBe("COLLECTION_CURSOR_EXPIRED");
  });
});

describe("WatchCollection opens at once", () => {
  it("the first message on a quiet collection is a heartbeat sent when caught up, long before the 15 s interval", async () => {
    const client = createClient(CollectionService, createGrpcTransport({ baseUrl: gw.url }));
    const ask = async () => {
      const started = performance.now();
      for await (const message of client.watchCollection(
        { chain: "localnet", address: collection() },
        { headers: headers(), timeoutMs: 60_000 },
      ))
        return { message, ms: performance.now() - started };
      throw new Error("the watch ended without a message");
    };
    await ask(); // the first watch follows the collection (reads its members); the second is the one timed
    const { message, ms } = await ask();
    expect(message.message.case).toBe("heartbeat");
    // The interval is 15 s (SOLGATE_FEED_HEARTBEAT_MS is not set): a message within 10 s is the opening one.
    expect(ms).toBeLessThan(10_000);
  }, 90_000);
});

describe("WatchCollection as Server-Sent Events", () => {
  const events = (query = "") => `${gw.base}/collections/${collection()}/events${query}`;

  it("?cursor= malformed: 400 COLLECTION_CURSOR_INVALID; Last-Event-ID of a gone log: 409 COLLECTION_CURSOR_EXPIRED", async () => {
    const bad = await fetch(events("?cursor=nope"), { headers: headers() });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe("collection_cursor_invalid");
    const gone = await fetch(events(), {
      headers: { ...headers(), "last-event-id": encodeFeedCursor(collection(), "gone", 1n) },
    });
    expect(gone.status).toBe(409);
    expect(((await gone.json()) as { code: string }).code).toBe("collection_cursor_expired");
  });

  it("an unknown collection: 404 NOT_FOUND", async () => {
    const response = await fetch(`${gw.base}/collections/${gw.manifest.spoofs.unverifiedMembers[0]}/events`, {
      headers: headers(),
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { code: string }).code).toBe("not_found");
  });
});

describe("WebhookService over REST", () => {
  it("a URL to a loopback address: 400 WEBHOOK_URL_REFUSED; an unknown webhook id: 404 WEBHOOK_NOT_FOUND", async () => {
    const created = await fetch(`${gw.base}/webhooks`, {
      method: "POST",
      headers: { ...headers(), "content-type": "application/json" },
      body: JSON.stringify({ url: "https://127.0.0.1/hook", collections: [collection()] }),
    });
    expect(created.status).toBe(400);
    expect(((await created.json()) as { code: string }).code).toBe("webhook_url_refused");
    const gone = await fetch(`${gw.base}/webhooks/wh_none`, { method: "DELETE", headers: headers() });
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { code: string }).code).toBe("webhook_not_found");
    const listed = await fetch(`${gw.base}/webhooks`, { headers: headers() });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual({ webhooks: [] });
  });
});
