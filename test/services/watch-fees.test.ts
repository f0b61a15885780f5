/**
 * FeeService.WatchFees end to end: the real gateway on port 0 with its embedded localnet (sending
 * priority-fee traffic), watched with real clients on every protocol (connect-node's gRPC, which takes
 * the lean stream path, gRPC-Web and Connect over HTTP/1.1 and HTTP/2, @grpc/grpc-js) and as Server-Sent
 * Events with fetch: the current estimate at once, then estimates of newer slots as the levels move.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import type { Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { FeeService, WatchFeesRequestSchema, WatchFeesResponseSchema } from "../../gen/solgate/v1/fee_service_pb.js";
import type { WatchFeesRequest, WatchFeesResponse } from "../../gen/solgate/v1/fee_service_pb.js";
import { FeeSource, TipSource } from "../../gen/solgate/v1/fee_pb.js";
import type { FeeEstimate, TipLevels } from "../../gen/solgate/v1/fee_pb.js";
import { address, createSolanaRpc, generateKeyPairSigner } from "@solana/kit";
import type { Address, KeyPairSigner, Signature } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { transferTransaction } from "../transactions/chain-fixture.ts";
import { startRestGateway } from "../rest/rest-gateway.ts";
import type { RestGateway } from "../rest/rest-gateway.ts";
import { expectShape, FEE_ESTIMATE } from "../rest/shapes.ts";

let t: RestGateway;
beforeAll(async () => {
  t = await startRestGateway();
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

/** Estimates a watch must deliver: the first at once, then ones of newer slots as the traffic moves the levels. */
const WANTED = 3;

/** Checks what a watch delivered: estimates from blocks, in strictly newer slots, each a change. */
function expectLiveEstimates(estimates: readonly FeeEstimate[]): void {
  expect(estimates.length).toBe(WANTED);
  for (const e of estimates) {
    expect(e.source).toBe(FeeSource.BLOCKS);
    expect(e.priority).toBeDefined();
    expect(e.priority!.unit).toBe("microLamportsPerComputeUnit");
  }
  for (let i = 1; i < estimates.length; i++) {
    expect(estimates[i].slot).toBeGreaterThan(estimates[i - 1].slot);
    const p = (e: FeeEstimate) => e.priority!;
    const levels = (e: FeeEstimate) => [p(e).low, p(e).medium, p(e).high, p(e).veryHigh, p(e).recommended].join();
    expect(levels(estimates[i])).not.toBe(levels(estimates[i - 1]));
  }
}

async function collect(stream: AsyncIterable<WatchFeesResponse>): Promise<FeeEstimate[]> {
  const estimates: FeeEstimate[] = [];
  for await (const res of stream) {
    if (res.event.case === "estimate") estimates.push(res.event.value);
    if (estimates.length === WANTED) break;
  }
  return estimates;
}

const transports: Record<string, (baseUrl: string) => Transport> = {
  "grpc h2 (lean path)": (baseUrl) => createGrpcTransport({ baseUrl }),
  "grpc-web h1": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
  "grpc-web h2": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "2" }),
  "connect json h1": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
  "connect binary h2": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true }),
};

describe.each(Object.entries(transports))("WatchFees over %s", (_name, makeTransport) => {
  it("streams the current estimate at once, then newer ones as the levels move", async () => {
    const client = createClient(FeeService, makeTransport(t.url));
    const estimates = await collect(client.watchFees({ chain: "localnet" }, { headers: t.auth, timeoutMs: 60_000 }));
    expectLiveEstimates(estimates);
  }, 70_000);

  it("refuses a call without a key, and one for an unknown chain", async () => {
    const client = createClient(FeeService, makeTransport(t.url));
    const failure = async (headers: Record<string, string>, chain: string) => {
      try {
        for await (const _ of client.watchFees({ chain }, { headers })) void _;
      } catch (e) {
        return ConnectError.from(e);
      }
      throw new Error("expected the watch to fail");
    };
    expect((await failure({}, "localnet")).code).toBe(Code.Unauthenticated);
    expect((await failure(t.auth, "nochain")).code).toBe(Code.NotFound);
  });
});

describe("WatchFees over @grpc/grpc-js", () => {
  it("streams estimates to the reference gRPC client", async () => {
    const client = new grpc.Client(t.url.replace("http://", ""), grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set("authorization", t.auth.Authorization);
    const call = client.makeServerStreamRequest<WatchFeesRequest, WatchFeesResponse>(
      "/solgate.v1.FeeService/WatchFees",
      (req) => Buffer.from(toBinary(WatchFeesRequestSchema, req)),
      (bytes) => fromBinary(WatchFeesResponseSchema, bytes),
      { $typeName: "solgate.v1.WatchFeesRequest", chain: "" },
      metadata,
    );
    try {
      expectLiveEstimates(await collect(call));
    } finally {
      call.cancel();
      client.close();
    }
  }, 70_000);
});

describe("GET /v1/{chain}/network/fees/stream (SSE)", () => {
  it("streams `event: fees` with the estimate in the REST form of GET /network/fees", async () => {
    const abort = new AbortController();
    const res = await fetch(`${t.base}/network/fees/stream`, { headers: t.auth, signal: abort.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const polled = (await (await fetch(`${t.base}/network/fees`, { headers: t.auth })).json()) as Record<
      string,
      unknown
    >;
    const estimates: Record<string, unknown>[] = [];
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (block.startsWith(":")) continue;
        const lines = block.split("\n");
        expect(lines[0]).toBe("event: fees");
        estimates.push(JSON.parse(lines[1].slice("data: ".length)) as Record<string, unknown>);
      }
      if (estimates.length === WANTED) break;
    }
    abort.abort();
    expectShape(polled, FEE_ESTIMATE);
    for (const estimate of estimates) expectShape(estimate, FEE_ESTIMATE);
    expectLiveEstimates(estimates.map((e) => fromJsonEstimate(e)));
  }, 70_000);

  it("answers a missing key with a plain JSON 401 and POST with 405", async () => {
    const unauthenticated = await fetch(`${t.base}/network/fees/stream`);
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get("content-type")).toMatch(/^application\/json/);
    const post = await fetch(`${t.base}/network/fees/stream`, { method: "POST", headers: t.auth });
    expect(post.status).toBe(405);
  });
});

describe("tip levels (the localnet's block engine)", () => {
  /** What every landed bundle tips: the engine's tip floor is this at every percentile while only these land. */
  const TIP = 7_000n;
  let stopTipping: (() => Promise<void>) | undefined;
  let tippingError: unknown;

  /** Lands a tipped one-transaction bundle through the engine every 250 ms (its floor covers 150 slots, 7.5 s here). */
  beforeAll(async () => {
    const localnetUrl = t.gateway.localnetUrl as string;
    const rpc = createSolanaRpc(localnetUrl);
    const engine = async (method: string, params: unknown[]) => {
      const res = await fetch(`${localnetUrl}/api/v1/bundles`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      const body = (await res.json()) as { result?: unknown; error?: { message: string } };
      if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`);
      return body.result;
    };
    const tipAccount = address(((await engine("getTipAccounts", [])) as string[])[0]);
    const payer: KeyPairSigner = await generateKeyPairSigner();
    const airdrop = await rpc.requestAirdrop(payer.address, 20_000_000_000n as never).send();
    for (let i = 0; ; i++) {
      const { value } = await rpc.getSignatureStatuses([airdrop as Signature]).send();
      if (value[0]?.confirmationStatus === "confirmed" || value[0]?.confirmationStatus === "finalized") break;
      if (i > 400) throw new Error("airdrop not confirmed");
      await new Promise((r) => setTimeout(r, 50));
    }
    let running = true;
    const loop = (async () => {
      while (running) {
        try {
          const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
          const { wire } = await transferTransaction({
            payer,
            blockhash,
            extra: [getTransferSolInstruction({ source: payer, destination: tipAccount as Address, amount: TIP })],
          });
          await engine("sendBundle", [[Buffer.from(wire).toString("base64")], { encoding: "base64" }]);
        } catch (error) {
          tippingError ??= error;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    stopTipping = async () => {
      running = false;
      await loop;
    };
  }, 60_000);

  afterAll(async () => {
    await stopTipping?.();
  });

  /** The GetFees tip levels, once the gateway has read them from the engine's tip floor (every 10 s). */
  async function polledTips(client: ReturnType<typeof createClient<typeof FeeService>>): Promise<TipLevels> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const tips = (await client.getFees({ chain: "localnet" }, { headers: t.auth })).estimate?.tips;
      if (tips !== undefined) return tips;
      if (Date.now() > deadline) throw new Error(`GetFees has no tips after 30 s (tipping: ${String(tippingError)})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const levels = (tips: TipLevels | undefined) =>
    tips && { p25: tips.p25, p50: tips.p50, p75: tips.p75, p95: tips.p95, p99: tips.p99, source: tips.source };

  it("a WatchFees estimate carries the tip levels GetFees answers", async () => {
    const client = createClient(FeeService, createGrpcTransport({ baseUrl: t.url }));
    const polled = await polledTips(client);
    expect(levels(polled)).toEqual({
      p25: TIP,
      p50: TIP,
      p75: TIP,
      p95: TIP,
      p99: TIP,
      source: TipSource.BLOCK_ENGINE,
    });
    // The estimates of the next 2 s (the slots move every 50 ms): the newest must carry the same tips.
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 2_000);
    const estimates: FeeEstimate[] = [];
    try {
      for await (const res of client.watchFees({ chain: "localnet" }, { headers: t.auth, signal: abort.signal }))
        if (res.event.case === "estimate") estimates.push(res.event.value);
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    } finally {
      clearTimeout(timer);
    }
    expect(estimates.length).toBeGreaterThan(0);
    const newest = estimates.at(-1)!;
    expect(levels(newest.tips)).toEqual(levels(await polledTips(client)));
  }, 60_000);

  it("the SSE form carries them as GET /network/fees does", async () => {
    await polledTips(createClient(FeeService, createGrpcTransport({ baseUrl: t.url })));
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 2_000);
    const res = await fetch(`${t.base}/network/fees/stream`, { headers: t.auth, signal: abort.signal });
    const events: Record<string, unknown>[] = [];
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.startsWith("event: fees\n"))
            events.push(JSON.parse(block.split("\n")[1].slice(6)) as Record<string, unknown>);
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    } finally {
      clearTimeout(timer);
    }
    const polled = (await (await fetch(`${t.base}/network/fees`, { headers: t.auth })).json()) as {
      tips: Record<string, unknown> | null;
    };
    const { updatedAt: _polledAt, ...restTips } = polled.tips ?? {};
    expect(restTips).toMatchObject({ p50: Number(TIP), source: "block-engine" });
    expect(events.length).toBeGreaterThan(0);
    const streamed = events.at(-1)!.tips as Record<string, unknown> | null;
    const { updatedAt: _streamedAt, ...streamedTips } = streamed ?? {};
    expect(streamedTips).toEqual(restTips);
  }, 60_000);
});

function fromJsonEstimate(json: Record<string, unknown>): FeeEstimate {
  const priority = json.priority as { levels: Record<string, number>; recommended: number; unit: string } | null;
  return {
    source: json.source === "blocks" ? FeeSource.BLOCKS : FeeSource.UNSPECIFIED,
    slot: BigInt(json.slot as number),
    priority: priority && {
      low: BigInt(priority.levels.low),
      medium: BigInt(priority.levels.medium),
      high: BigInt(priority.levels.high),
      veryHigh: BigInt(priority.levels.veryHigh),
      recommended: BigInt(priority.recommended),
      unit: priority.unit,
    },
  } as unknown as FeeEstimate;
}
