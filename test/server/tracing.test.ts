/**
 * Traces and gauges on the real gateway (`startGateway`, with its embedded localnet) and real clients:
 * spans are caught by the SDK's own InMemorySpanExporter. A caller's `traceparent` must parent the RPC
 * span on every path (gRPC through the router and on the lean stream path, Connect, REST and its SSE
 * watch), with the upstream JSON-RPC calls beneath it; errors carry ERROR and their reason. The gauges
 * are scraped from the metrics port while watches open and close and a send is tracked.
 */
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { createSolanaRpc, generateKeyPairSigner } from "@solana/kit";
import type { Signature } from "@solana/kit";
import { AccountService } from "../../gen/solgate/v1/account_service_pb.js";
import { TransactionService, WatchStatusRequestSchema } from "../../gen/solgate/v1/transaction_service_pb.js";
import { loadConfig } from "../../src/config.ts";
import { startGateway } from "../../src/main.ts";
import type { Gateway } from "../../src/main.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createLogSink } from "./helpers.ts";
import { transferTransaction } from "../transactions/chain-fixture.ts";

const KEY = "tracing-test-key";
const auth = { Authorization: `Bearer ${KEY}` };
const exporter = new InMemorySpanExporter();
let gateway: Gateway;
let url: string;

beforeAll(async () => {
  const config = loadConfig({
    NODE_ENV: "test",
    PORT: "0",
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    SOLGATE_API_KEYS: KEY,
    SOLGATE_DEMO: "0",
  });
  expect(config.tracing).toBeUndefined();
  gateway = await startGateway(config, createLogger({ level: "info", destination: createLogSink().stream }), {
    spanProcessor: new SimpleSpanProcessor(exporter),
  });
  url = `http://127.0.0.1:${gateway.port}`;
}, 60_000);
afterAll(() => gateway?.close());

/** A fresh W3C trace context from "the caller". */
function callerContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
  const spanId = Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex");
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

function spansOf(traceId: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** Waits for spans of the trace to be finished (streams end a moment after the client sees the end). */
async function waitForSpans(
  traceId: string,
  predicate: (spans: ReadableSpan[]) => boolean,
  timeoutMs = 5000,
): Promise<ReadableSpan[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const spans = spansOf(traceId);
    if (predicate(spans)) return spans;
    if (Date.now() > deadline) throw new Error(`spans of ${traceId}: ${JSON.stringify(spans.map((s) => s.name))}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function scrape(): Promise<string> {
  return (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
}

/** The value of one sample, by metric name and the labels it must carry; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}

async function waitForSample(
  name: string,
  labels: Record<string, string>,
  ok: (v: number | undefined) => boolean,
  timeoutMs = 5000,
): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = sample(await scrape(), name, labels);
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${name} ${JSON.stringify(labels)} stayed at ${value}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const SYSTEM_PROGRAM = "11111111111111111111111111111111";

/**
 * A real transaction the chain knows and has not finalized: an airdrop to a new key, confirmed. On the
 * localnet's default clock it stays short of final for about 12 s (32 slots of 400 ms), so a watch of it stays open.
 */
async function liveSignature(): Promise<{
  signature: string;
  payer: Awaited<ReturnType<typeof generateKeyPairSigner>>;
}> {
  const rpc = createSolanaRpc(gateway.localnetUrl!);
  const payer = await generateKeyPairSigner();
  const signature = await rpc.requestAirdrop(payer.address, (10n ** 9n) as never).send();
  for (let i = 0; i < 200; i++) {
    const { value } = await rpc.getSignatureStatuses([signature as Signature]).send();
    if (value[0]?.confirmationStatus === "confirmed" || value[0]?.confirmationStatus === "finalized") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { signature, payer };
}

describe("RPC spans", () => {
  it("gRPC: the RPC span is the caller's child, with the upstream call beneath it", async () => {
    const caller = callerContext();
    const client = createClient(AccountService, createGrpcTransport({ baseUrl: url }));
    await client.getAccount(
      { address: SYSTEM_PROGRAM },
      { headers: { ...auth, traceparent: caller.traceparent, "x-request-id": "trace-req-1" } },
    );
    const spans = await waitForSpans(caller.traceId, (s) => s.some((x) => x.kind === SpanKind.SERVER));
    const rpc = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(rpc.name).toBe("solgate.v1.AccountService/GetAccount");
    expect(parentOf(rpc)).toBe(caller.spanId);
    expect(rpc.attributes).toMatchObject({
      "rpc.system": "grpc",
      "rpc.service": "solgate.v1.AccountService",
      "rpc.method": "GetAccount",
      "rpc.grpc.status_code": 0,
      "solgate.request_id": "trace-req-1",
    });
    expect(rpc.status.code).not.toBe(SpanStatusCode.ERROR);
    const upstream = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(upstream.map((s) => s.name)).toContain("getAccountInfo");
    const call = upstream.find((s) => s.name === "getAccountInfo")!;
    expect(parentOf(call)).toBe(rpc.spanContext().spanId);
    expect(call.attributes).toMatchObject({
      "rpc.system": "jsonrpc",
      "rpc.method": "getAccountInfo",
      "solgate.chain": "localnet",
      "solgate.upstream.attempts": 1,
      "solgate.upstream.outcome": "ok",
    });
    // The upstream is named by its redacted label (an origin), never a URL with a path or key.
    expect(call.attributes["solgate.upstream.endpoint"]).toBe(new URL(gateway.localnetUrl!).origin);
    expect(call.events.map((e) => e.name)).toEqual(["attempt"]);
  });

  it("gRPC: an error sets ERROR with the reason, and nothing of the key", async () => {
    const caller = callerContext();
    const client = createClient(AccountService, createGrpcTransport({ baseUrl: url }));
    const err = await client
      .getAccount({ address: "not-an-address" }, { headers: { ...auth, traceparent: caller.traceparent } })
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(err?.code).toBe(Code.InvalidArgument);
    const [rpc] = await waitForSpans(caller.traceId, (s) => s.length > 0);
    expect(rpc.status).toEqual({ code: SpanStatusCode.ERROR, message: "INVALID_ADDRESS" });
    expect(rpc.attributes).toMatchObject({
      "rpc.grpc.status_code": Code.InvalidArgument,
      "error.type": "INVALID_ADDRESS",
      "solgate.error.reason": "INVALID_ADDRESS",
    });
    expect(JSON.stringify(rpc.attributes)).not.toContain(KEY);
    expect(JSON.stringify(rpc.attributes)).not.toContain("not-an-address");
  });

  it("gRPC: a missing key is an ERROR span with its reason", async () => {
    const caller = callerContext();
    const client = createClient(AccountService, createGrpcTransport({ baseUrl: url }));
    await client
      .getAccount({ address: SYSTEM_PROGRAM }, { headers: { traceparent: caller.traceparent } })
      .catch(() => {});
    const [rpc] = await waitForSpans(caller.traceId, (s) => s.length > 0);
    expect(rpc.status.code).toBe(SpanStatusCode.ERROR);
    expect(rpc.attributes["rpc.grpc.status_code"]).toBe(Code.Unauthenticated);
  });

  it("Connect: rpc.system is connect_rpc; an error carries its Connect code", async () => {
    const caller = callerContext();
    const client = createClient(AccountService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
    await client.getAccount({ address: SYSTEM_PROGRAM }, { headers: { ...auth, traceparent: caller.traceparent } });
    const spans = await waitForSpans(caller.traceId, (s) => s.some((x) => x.kind === SpanKind.SERVER));
    const rpc = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(parentOf(rpc)).toBe(caller.spanId);
    expect(rpc.attributes["rpc.system"]).toBe("connect_rpc");
    expect(spans.some((s) => s.kind === SpanKind.CLIENT && parentOf(s) === rpc.spanContext().spanId)).toBe(true);

    const failing = callerContext();
    await client
      .getAccount({ address: "x" }, { headers: { ...auth, traceparent: failing.traceparent } })
      .catch(() => {});
    const [bad] = await waitForSpans(failing.traceId, (s) => s.length > 0);
    expect(bad.attributes).toMatchObject({
      "rpc.connect_rpc.error_code": "invalid_argument",
      "error.type": "INVALID_ADDRESS",
    });
  });

  it("gRPC-Web: rpc.system is grpc, under the caller, with the upstream call beneath", async () => {
    const caller = callerContext();
    const client = createClient(AccountService, createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" }));
    await client.getAccount({ address: SYSTEM_PROGRAM }, { headers: { ...auth, traceparent: caller.traceparent } });
    const spans = await waitForSpans(caller.traceId, (s) => s.some((x) => x.kind === SpanKind.SERVER));
    const rpc = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(parentOf(rpc)).toBe(caller.spanId);
    expect(rpc.attributes).toMatchObject({ "rpc.system": "grpc", "rpc.grpc.status_code": 0 });
    expect(spans.some((s) => s.kind === SpanKind.CLIENT && parentOf(s) === rpc.spanContext().spanId)).toBe(true);
  });

  it("REST: an HTTP span (route, method, status) under the caller, the RPC span under it, the upstream call under that", async () => {
    const caller = callerContext();
    const res = await fetch(`${url}/v1/localnet/accounts/${SYSTEM_PROGRAM}`, {
      headers: { ...auth, traceparent: caller.traceparent, "x-request-id": "rest-req-1" },
    });
    expect(res.status).toBe(200);
    const spans = await waitForSpans(caller.traceId, (s) => s.some((x) => x.kind === SpanKind.SERVER));
    const httpSpan = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(httpSpan.name).toBe("GET /v1/{chain}/accounts/{address}");
    expect(parentOf(httpSpan)).toBe(caller.spanId);
    expect(httpSpan.attributes).toMatchObject({
      "http.request.method": "GET",
      "http.route": "/v1/{chain}/accounts/{address}",
      "http.response.status_code": 200,
      "solgate.request_id": "rest-req-1",
    });
    const rpc = spans.find((s) => s.name === "solgate.v1.AccountService/GetAccount")!;
    expect(rpc.kind).toBe(SpanKind.INTERNAL);
    expect(parentOf(rpc)).toBe(httpSpan.spanContext().spanId);
    expect(rpc.attributes["solgate.request_id"]).toBe("rest-req-1");
    const call = spans.find((s) => s.kind === SpanKind.CLIENT)!;
    expect(call.name).toBe("getAccountInfo");
    expect(parentOf(call)).toBe(rpc.spanContext().spanId);
  });

  it("REST: a refused request is a 4xx HTTP span and an ERROR RPC span with the reason", async () => {
    const caller = callerContext();
    const res = await fetch(`${url}/v1/localnet/accounts/not-base58!`, {
      headers: { ...auth, traceparent: caller.traceparent },
    });
    expect(res.status).toBe(400);
    const spans = await waitForSpans(caller.traceId, (s) => s.some((x) => x.kind === SpanKind.SERVER) && s.length >= 2);
    const httpSpan = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(httpSpan.attributes["http.response.status_code"]).toBe(400);
    const rpc = spans.find((s) => s.kind === SpanKind.INTERNAL)!;
    expect(rpc.status).toEqual({ code: SpanStatusCode.ERROR, message: "INVALID_ADDRESS" });
  });

  it("without a traceparent, the RPC span starts a trace of its own", async () => {
    const before = exporter.getFinishedSpans().length;
    const client = createClient(AccountService, createGrpcTransport({ baseUrl: url }));
    await client.getAccount({ address: SYSTEM_PROGRAM }, { headers: { ...auth, "x-request-id": "no-parent-1" } });
    const rpc = exporter
      .getFinishedSpans()
      .slice(before)
      .find((s) => s.attributes["solgate.request_id"] === "no-parent-1")!;
    expect(rpc.parentSpanContext).toBeUndefined();
  });
});

describe("watches: spans and the open-streams gauge", () => {
  const labels = { service: "solgate.v1.TransactionService", method: "WatchStatus" };

  it("the lean gRPC path: a span under the caller; the gauge goes to 1 and back to 0", async () => {
    const caller = callerContext();
    const session = http2.connect(url);
    const body = toBinary(
      WatchStatusRequestSchema,
      create(WatchStatusRequestSchema, { signature: (await liveSignature()).signature }),
    );
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    Buffer.from(body).copy(frame, 5);
    const stream = session.request({
      ":method": "POST",
      ":path": "/solgate.v1.TransactionService/WatchStatus",
      "content-type": "application/grpc+proto",
      te: "trailers",
      authorization: auth.Authorization,
      traceparent: caller.traceparent,
    });
    stream.end(frame);
    const firstData = new Promise<void>((resolve) => stream.once("data", () => resolve()));
    await firstData;
    expect(await waitForSample("solgate_open_streams", { ...labels, protocol: "grpc-lean" }, (v) => v === 1)).toBe(1);
    stream.close(http2.constants.NGHTTP2_CANCEL);
    await waitForSample("solgate_open_streams", { ...labels, protocol: "grpc-lean" }, (v) => v === 0);
    session.close();
    const spans = await waitForSpans(caller.traceId, (s) => s.some((x) => x.kind === SpanKind.SERVER));
    const span = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(span.name).toBe("solgate.v1.TransactionService/WatchStatus");
    // The watch's first read of the chain happens under it.
    expect(
      spans.filter((s) => s.kind === SpanKind.CLIENT).every((s) => parentOf(s) === span.spanContext().spanId),
    ).toBe(true);
    expect(parentOf(span)).toBe(caller.spanId);
    expect(span.attributes).toMatchObject({ "rpc.system": "grpc", "rpc.grpc.status_code": Code.Canceled });
  });

  it("the router (Connect streaming): a span under the caller; the gauge goes to 1 and back to 0", async () => {
    const caller = callerContext();
    const client = createClient(TransactionService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
    const abort = new AbortController();
    const stream = client.watchStatus(
      { signature: (await liveSignature()).signature },
      { headers: { ...auth, traceparent: caller.traceparent }, signal: abort.signal },
    );
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    expect(await waitForSample("solgate_open_streams", { ...labels, protocol: "connect" }, (v) => v === 1)).toBe(1);
    abort.abort();
    await it.next().catch(() => {});
    await waitForSample("solgate_open_streams", { ...labels, protocol: "connect" }, (v) => v === 0);
    const spans = await waitForSpans(caller.traceId, (s) => s.some((x) => x.kind === SpanKind.SERVER));
    const span = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(parentOf(span)).toBe(caller.spanId);
    expect(span.attributes["rpc.system"]).toBe("connect_rpc");
    // The handler's generator runs when the response pulls it: its chain reads still land under the RPC span.
    const reads = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(reads.length).toBeGreaterThan(0);
    for (const read of reads) expect(parentOf(read)).toBe(span.spanContext().spanId);
  });

  it("the SSE watch: an HTTP span with the RPC span beneath; the gauge goes to 1 and back to 0", async () => {
    const caller = callerContext();
    const abort = new AbortController();
    const res = await fetch(`${url}/v1/localnet/transactions/${(await liveSignature()).signature}/events`, {
      headers: { ...auth, traceparent: caller.traceparent },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    expect(await waitForSample("solgate_open_streams", { ...labels, protocol: "rest-sse" }, (v) => v === 1)).toBe(1);
    abort.abort();
    await reader.read().catch(() => {});
    await waitForSample("solgate_open_streams", { ...labels, protocol: "rest-sse" }, (v) => v === 0);
    const spans = await waitForSpans(caller.traceId, (s) => s.length >= 2);
    const httpSpan = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(httpSpan.name).toBe("GET /v1/{chain}/transactions/{signature}/events");
    expect(parentOf(httpSpan)).toBe(caller.spanId);
    const rpc = spans.find((s) => s.name === "solgate.v1.TransactionService/WatchStatus")!;
    expect(parentOf(rpc)).toBe(httpSpan.spanContext().spanId);
  });
});

describe("gauges read at scrape time", () => {
  it("a send shows in tracked sends, with its upstream calls traced under SendTransaction", async () => {
    const rpc = createSolanaRpc(gateway.localnetUrl!);
    const { payer } = await liveSignature();
    const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
    const tx = await transferTransaction({ payer, blockhash });
    const caller = callerContext();
    const res = await fetch(`${url}/v1/localnet/transactions/send`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", traceparent: caller.traceparent },
      body: JSON.stringify({ transaction: Buffer.from(tx.wire).toString("base64") }),
    });
    expect(res.status).toBe(200);
    // Not final for seconds on the localnet's default clock (finalized 32 slots of 400 ms after it lands).
    let tracked = 0;
    for (let i = 0; i < 100 && tracked < 1; i++) {
      const text = await scrape();
      tracked = ["submitted", "confirmed"].reduce(
        (sum, state) => sum + (sample(text, "solgate_tracked_sends", { chain: "localnet", state }) ?? 0),
        0,
      );
      if (tracked < 1) await new Promise((r) => setTimeout(r, 50));
    }
    expect(tracked).toBeGreaterThanOrEqual(1);
    const spans = await waitForSpans(caller.traceId, (s) => s.some((x) => x.name === "sendTransaction"));
    const send = spans.find((s) => s.name === "solgate.v1.TransactionService/SendTransaction")!;
    const upstream = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(upstream.map((s) => s.name)).toContain("sendTransaction");
    for (const s of upstream) expect(parentOf(s)).toBe(send.spanContext().spanId);
  });

  it("fee-window age is seconds since the window last moved; the chain's upstream reads healthy", async () => {
    const age = await waitForSample("solgate_fee_window_age_seconds", { chain: "localnet" }, (v) => v !== undefined);
    // The localnet makes a slot every 400 ms and the follower polls every 400 ms.
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(10);
    expect(await waitForSample("solgate_upstream_healthy", { chain: "localnet" }, (v) => v === 1)).toBe(1);
  });
});
