/**
 * The Geyser server's edges: the x-token check, the server's pings, and a client that stops reading
 * cut off as the plugin cuts it ("lagged to send an update", Internal) once its queue is full.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import http2 from "node:http2";
import { afterAll, expect, it, vi } from "vitest";
import { SubscribeRequestSchema } from "../../gen/geyser_pb.js";
import { startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";
import { connectClient, openStream, request } from "./geyser-client.ts";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

const nets: TestLocalnet[] = [];
afterAll(async () => {
  await Promise.all(nets.map((n) => n.stop()));
});

it("asks for the x-token when one is set, and pings every stream", async () => {
  const net = await startTestLocalnet({ slotMs: 50, geyser: { token: "sesame", pingMs: 100 } });
  nets.push(net);
  const stranger = await connectClient(net.handle.geyserUrl!);
  const cause = (e: Error) => String(e.cause ?? e);
  expect(await stranger.getSlot().catch(cause)).toMatch(/No valid auth token/);
  const wrong = await connectClient(net.handle.geyserUrl!, "open");
  expect(await wrong.ping(1).catch(cause)).toMatch(/No valid auth token/);

  const client = await connectClient(net.handle.geyserUrl!, "sesame");
  expect((await client.ping(5)).count).toBe(5);
  const stream = await openStream(client, request({}));
  // No filters: only pings, the first at once, then one per pingMs.
  await stream.next(() => stream.received.filter((u) => u.ping).length >= 4, 10_000, "four pings");
  expect(stream.received.every((u) => u.ping !== undefined && u.filters.length === 0)).toBe(true);
  stream.close();
});

/** Subscribe over a bare HTTP/2 client with a small window, not reading until told. */
function rawSubscribe(url: string): {
  resume(): void;
  done: Promise<{ status?: string; message?: string; frames: number }>;
} {
  const session = http2.connect(url, { settings: { initialWindowSize: 1024 } });
  const stream = session.request({
    ":method": "POST",
    ":path": "/geyser.Geyser/Subscribe",
    "content-type": "application/grpc",
    te: "trailers",
  });
  const body = toBinary(
    SubscribeRequestSchema,
    create(SubscribeRequestSchema, {
      slots: { s: { interslotUpdates: true } },
      blocksMeta: { m: {} },
      blocks: { b: {} },
    }),
  );
  const frame = Buffer.alloc(5 + body.length);
  frame.writeUInt32BE(body.length, 1);
  frame.set(body, 5);
  stream.write(frame); // and keep the request side open, as a subscriber does
  stream.pause();
  let bytes = 0;
  const done = new Promise<{ status?: string; message?: string; frames: number }>((resolve, reject) => {
    stream.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    stream.on("trailers", (trailers) => {
      resolve({
        status: trailers["grpc-status"] as string | undefined,
        message: decodeURIComponent(String(trailers["grpc-message"])),
        frames: bytes,
      });
      session.close();
    });
    stream.on("error", reject);
  });
  return { resume: () => stream.resume(), done };
}

it("cuts off a client that stops reading once its queue is full: Internal, lagged to send an update", async () => {
  const net = await startTestLocalnet({ slotMs: 10, geyser: { queueLimit: 20 } });
  nets.push(net);
  const raw = rawSubscribe(net.handle.geyserUrl!);
  // Node buffers 64 kB of a stream before it pushes back; beyond that the queue of 20 fills. Five slot
  // statuses, a block and its meta make ~600 bytes a slot: 400 slots are well past both.
  const start = (await net.call("getSlot", [{ commitment: "processed" }])).result as number;
  await waitFor(
    "400 slots",
    async () => (await net.call("getSlot", [{ commitment: "processed" }])).result >= start + 400,
    25_000,
  );
  raw.resume();
  const end = await raw.done;
  expect(end.status).toBe("13");
  expect(end.message).toBe("lagged to send an update");
  expect(end.frames).toBeGreaterThan(0); // what was queued was delivered first

  // A client that keeps reading is not cut off.
  const client = await connectClient(net.handle.geyserUrl!);
  const stream = await openStream(client, request({ slots: { s: { interslotUpdates: true } }, blocksMeta: { m: {} } }));
  await stream.next(() => stream.received.length > 500, 20_000, "500 updates");
  expect(await Promise.race([stream.failed, new Promise((r) => setTimeout(() => r("running"), 100))])).toBe("running");
  stream.close();
});

it("serves no Geyser when told not to", async () => {
  const net = await startTestLocalnet({ geyser: false });
  nets.push(net);
  expect(net.handle.geyserUrl).toBeUndefined();
  expect((await net.call("getSlot")).result).toBeGreaterThanOrEqual(0);
});
