/**
 * A Yellowstone server that refuses a replay it no longer holds with INTERNAL instead of OUT_OF_RANGE, as some
 * released versions do ("broadcast from N is not available, last available: M"): both Geyser streams (statuses,
 * geyser-source.ts; blocks, geyser-blocks.ts) must resubscribe from the tip rather than ask for the same
 * `from_slot` for ever. The server is the localnet's real Yellowstone server behind a real HTTP/2 gRPC proxy
 * that passes everything through and only rewrites the status code 11 (OUT_OF_RANGE) to 13 (INTERNAL),
 * message kept, wherever it comes (trailers, or the headers of a trailers-only answer).
 */
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGeyserBlocks } from "../../src/upstream/geyser-blocks.ts";
import { createGeyserSource } from "../../src/upstream/geyser-source.ts";
import { startChainFixture } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";

const OUT_OF_RANGE = "11";
const INTERNAL = "13";

/** The proxy; `port` 0 for a free one, or the port of one that went away. */
async function startInternalReplayProxy(target: string, port = 0) {
  const upstream = http2.connect(target);
  upstream.on("error", () => {});
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  const rewritten: string[] = [];
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  const rewrite = (headers: http2.IncomingHttpHeaders, keep: (name: string) => boolean) => {
    const out: http2.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(headers)) if (keep(k)) out[k] = v;
    if (out["grpc-status"] === OUT_OF_RANGE) {
      out["grpc-status"] = INTERNAL;
      rewritten.push(decodeURIComponent(String(out["grpc-message"] ?? "")));
    }
    return out;
  };
  server.on("stream", (stream, headers) => {
    const forwarded: http2.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(headers))
      if (!k.startsWith(":") || k === ":method" || k === ":path") forwarded[k] = v;
    const up = upstream.request(forwarded);
    up.on("error", () => stream.destroy());
    stream.on("error", () => up.destroy());
    stream.on("close", () => up.destroy());
    stream.pipe(up);
    let trailers: http2.OutgoingHttpHeaders = { "grpc-status": "0" };
    up.on("response", (h) => {
      stream.respond(
        rewrite(h, (k) => !k.startsWith(":") || k === ":status"),
        { waitForTrailers: true },
      );
    });
    up.on("data", (chunk: Buffer) => {
      if (!stream.destroyed && !stream.closed) stream.write(chunk);
    });
    up.on("trailers", (t: http2.IncomingHttpHeaders) => {
      trailers = rewrite(t, (k) => !k.startsWith(":"));
    });
    up.on("end", () => {
      if (!stream.destroyed) stream.end();
    });
    stream.on("wantTrailers", () => stream.sendTrailers(trailers));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const listening = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${listening}`,
    port: listening,
    /** The OUT_OF_RANGE messages sent on as INTERNAL. */
    rewritten,
    kill: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        upstream.destroy();
        server.close(() => resolve());
      }),
  };
}

let chain: ChainFixture;

beforeAll(async () => {
  chain = await startChainFixture({ geyser: {} });
}, 60_000);

afterAll(async () => {
  await chain?.stop();
});

const until = async (condition: () => boolean, what: string, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe("a replay refused as INTERNAL", () => {
  it("both streams resubscribe from the tip after a break longer than the server's replay", async () => {
    let proxy = await startInternalReplayProxy(chain.localnet.geyserUrl!);
    const source = createGeyserSource({ url: proxy.url, baseDelayMs: 50, maxDelayMs: 200 });
    const blocks = createGeyserBlocks({ url: proxy.url, baseDelayMs: 50, maxDelayMs: 200 });
    try {
      await until(() => source.healthy() && source.stats().blocks >= 3, "statuses flowing");
      await until(() => blocks.healthy() && blocks.stats().blocks >= 3, "blocks flowing");
      await proxy.kill();
      await until(() => !source.healthy() && !blocks.healthy(), "both down");
      const last = [source.stats().lastSlot!, blocks.stats().lastSlot!].reduce((a, b) => (a > b ? a : b));
      // 25 ms slots: past the 150 slots the server keeps (and a margin) in about 4.5 s.
      while ((await chain.upstream.rpc.getSlot({ commitment: "processed" }).send()) <= last + 170n) {
        await new Promise((r) => setTimeout(r, 50));
      }
      proxy = await startInternalReplayProxy(chain.localnet.geyserUrl!, proxy.port);
      // Without reading the words, each would ask for the same from_slot again and again and never be up.
      await until(() => source.healthy() && source.stats().lastSlot! > last + 170n, "statuses back from the tip");
      await until(() => blocks.healthy() && blocks.stats().lastSlot! > last + 170n, "blocks back from the tip");
      expect(source.stats().lastFromSlot).toBeUndefined();
      expect(blocks.stats().lastFromSlot).toBeUndefined();
      // The server did refuse the replay, and the streams heard it as INTERNAL.
      expect(proxy.rewritten.some((m) => /^broadcast from \d+ is not available, last available: \d+$/.test(m))).toBe(
        true,
      );
    } finally {
      source.close();
      blocks.close();
      await proxy.kill();
    }
  }, 60_000);
});
