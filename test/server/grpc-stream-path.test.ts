/**
 * The lean gRPC path for long-lived server streams (src/server/grpc-stream-path.ts), driven by real
 * clients: binary gRPC takes it, gRPC-Web and Connect stay on the router, and it does what the
 * interceptors do: auth with ErrorInfo, error mapping, a deadline, client cancellation, the drain.
 */
import http2 from "node:http2";
import { afterEach, describe, expect, it } from "vitest";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema, RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { TransactionService, WatchStatusRequestSchema } from "../../gen/solgate/v1/transaction_service_pb.js";
import { SolgateError } from "../../src/errors.ts";
import { streamRoute } from "../../src/server/grpc-stream-path.ts";
import {
  API_KEY,
  LONG_SIGNATURE,
  MISSING_SIGNATURE,
  SHORT_SIGNATURE,
  startTestServer,
  type TestServer,
} from "./helpers.ts";

const auth = { authorization: `Bearer ${API_KEY}` };
let calls: { signature: string; signal: AbortSignal }[] = [];
// A stream of 10 KB messages as fast as they are pulled: how many were pulled shows whether the path waits for the client.
const BURST_SIGNATURE = `Burst${"1".repeat(83)}`;
let burstPulled = 0;
let server: TestServer | undefined;

// The lean route counts heartbeats from 1000, the router's test handler from 1: the slot tells which served a call.
const route = streamRoute({
  method: TransactionService.method.watchStatus,
  async *handle(request, signal) {
    calls.push({ signature: request.signature, signal });
    if (request.signature === MISSING_SIGNATURE)
      throw new SolgateError("NOT_FOUND", "no such transaction", { signature: MISSING_SIGNATURE });
    if (request.signature === BURST_SIGNATURE) {
      const big = "x".repeat(10_000);
      for (; !signal.aborted; burstPulled++) {
        yield { event: { case: "record" as const, value: { signature: big } } };
        await new Promise((r) => setImmediate(r));
      }
      return;
    }
    for (let slot = 1000n; !signal.aborted; slot++) {
      yield { event: { case: "heartbeat" as const, value: { slot } } };
      if (request.signature === SHORT_SIGNATURE && slot === 1002n) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  },
});

async function start(): Promise<TestServer> {
  calls = [];
  server = await startTestServer({ streamRoutes: [route] });
  return server;
}

afterEach(async () => {
  await server?.listening.close({ timeoutMs: 500 });
  server = undefined;
});

async function collect(
  stream: AsyncIterable<{ event: { case?: string; value?: unknown } }>,
): Promise<{ slots: bigint[]; error?: ConnectError }> {
  const slots: bigint[] = [];
  try {
    for await (const m of stream) slots.push((m.event.value as { slot: bigint }).slot);
  } catch (e) {
    return { slots, error: ConnectError.from(e) };
  }
  return { slots };
}

describe("the lean gRPC stream path", () => {
  it("pulls the next message only when the client has taken the last: a reader that stops holds no growing buffer", async () => {
    const t = await start();
    burstPulled = 0;
    const session = http2.connect(t.url);
    try {
      const body = toBinary(WatchStatusRequestSchema, create(WatchStatusRequestSchema, { signature: BURST_SIGNATURE }));
      const envelope = Buffer.alloc(5 + body.length);
      envelope.writeUInt32BE(body.length, 1);
      envelope.set(body, 5);
      const req = session.request({
        ":method": "POST",
        ":path": "/solgate.v1.TransactionService/WatchStatus",
        "content-type": "application/grpc+proto",
        te: "trailers",
        ...auth,
      });
      req.end(envelope);
      req.pause(); // reads nothing: HTTP/2 flow control stops the server after a window's worth
      await new Promise((r) => setTimeout(r, 1000));
      // A 64 KiB stream window plus the response's own buffer is a few 10 KB messages; without waiting for
      // the client, the handler would have been pulled thousands of times in that second.
      expect(burstPulled).toBeGreaterThan(0);
      expect(burstPulled).toBeLessThan(50);
      req.close();
    } finally {
      session.close();
    }
  });

  it("serves binary gRPC itself, to the end, with an rpc log line; gRPC-Web and Connect go to the router", async () => {
    const t = await start();
    const grpc = createClient(TransactionService, createGrpcTransport({ baseUrl: t.url }));
    expect(await collect(grpc.watchStatus({ signature: SHORT_SIGNATURE }, { headers: auth }))).toEqual({
      slots: [1000n, 1001n, 1002n],
    });
    for (const transport of [
      createGrpcWebTransport({ baseUrl: t.url, httpVersion: "2" }),
      createConnectTransport({ baseUrl: t.url, httpVersion: "1.1" }),
    ]) {
      expect(
        await collect(
          createClient(TransactionService, transport).watchStatus({ signature: SHORT_SIGNATURE }, { headers: auth }),
        ),
      ).toEqual({ slots: [1n, 2n, 3n] });
    }
    expect(calls.map((c) => c.signature)).toEqual([SHORT_SIGNATURE]);
    expect(
      t.logs
        .filter((l) => l.msg === "rpc" && l.procedure === "solgate.v1.TransactionService/WatchStatus")
        .map((l) => [l.protocol, l.code]),
    ).toEqual([
      ["grpc", "ok"],
      ["grpc-web", "ok"],
      ["connect", "ok"],
    ]);
  });

  it("refuses a missing or wrong key with UNAUTHENTICATED and ErrorInfo, before the handler runs", async () => {
    const t = await start();
    const grpc = createClient(TransactionService, createGrpcTransport({ baseUrl: t.url }));
    for (const headers of [{}, { authorization: "Bearer wrong" }] as Record<string, string>[]) {
      const { slots, error } = await collect(grpc.watchStatus({ signature: SHORT_SIGNATURE }, { headers }));
      expect(slots).toEqual([]);
      expect(error?.code).toBe(Code.Unauthenticated);
      expect(error?.findDetails(ErrorInfoSchema)[0]?.reason).toBe("UNAUTHENTICATED");
    }
    expect(calls).toEqual([]);
  });

  it("maps the handler's errors as the router does: code, message and ErrorInfo", async () => {
    const t = await start();
    const grpc = createClient(TransactionService, createGrpcTransport({ baseUrl: t.url }));
    const { error } = await collect(grpc.watchStatus({ signature: MISSING_SIGNATURE }, { headers: auth }));
    expect(error?.code).toBe(Code.NotFound);
    expect(error?.rawMessage).toBe("no such transaction");
    expect(error?.findDetails(ErrorInfoSchema)[0]).toMatchObject({
      reason: "NOT_FOUND",
      metadata: { signature: MISSING_SIGNATURE },
    });
  });

  it("ends at the client's deadline, and frees the handler when the client goes away", async () => {
    const t = await start();
    const grpc = createClient(TransactionService, createGrpcTransport({ baseUrl: t.url }));
    const timed = await collect(grpc.watchStatus({ signature: LONG_SIGNATURE }, { headers: auth, timeoutMs: 150 }));
    // The lean route's heartbeats, in order, until the deadline cut the call.
    expect(timed.slots.length).toBeGreaterThan(0);
    expect(timed.slots).toEqual(timed.slots.map((_, i) => 1000n + BigInt(i)));
    expect(timed.error?.code).toBe(Code.DeadlineExceeded);

    const controller = new AbortController();
    const stream = grpc.watchStatus({ signature: LONG_SIGNATURE }, { headers: auth, signal: controller.signal });
    const seen: bigint[] = [];
    let ended: ConnectError | undefined;
    try {
      for await (const m of stream) {
        seen.push((m.event.value as { slot: bigint }).slot);
        if (seen.length === 2) controller.abort();
      }
    } catch (e) {
      ended = ConnectError.from(e);
    }
    // Exactly what the lean route sent before the abort, and the abort is what ended it (not a server error).
    expect(seen).toEqual([1000n, 1001n]);
    expect(ended?.code).toBe(Code.Canceled);
    const handler = calls.at(-1)!;
    expect(handler.signature).toBe(LONG_SIGNATURE);
    for (let waited = 0; !handler.signal.aborted && waited < 5000; waited += 10)
      await new Promise((r) => setTimeout(r, 10));
    expect(handler.signal.aborted).toBe(true);
  });

  it("ends open streams with UNAVAILABLE and a retry hint when the server drains", async () => {
    const t = await start();
    const grpc = createClient(TransactionService, createGrpcTransport({ baseUrl: t.url }));
    const open = collect(grpc.watchStatus({ signature: LONG_SIGNATURE }, { headers: auth }));
    await new Promise((r) => setTimeout(r, 150));
    await t.listening.close({ timeoutMs: 2000 });
    server = undefined;
    const { slots, error } = await open;
    expect(slots.length).toBeGreaterThan(0);
    expect(error?.code).toBe(Code.Unavailable);
    expect(error?.findDetails(RetryInfoSchema)).toHaveLength(1);
    expect(calls[0].signal.aborted).toBe(true);
  });
});
