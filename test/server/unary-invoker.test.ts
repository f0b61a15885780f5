/**
 * REST's in-process unary calls (src/server/unary-invoker.ts) skip the wire protocol but not the router's
 * interceptors: on the real server (port 0), a REST call is authenticated, rate limited per key, counted in
 * the metrics under its key and method, logged once with its request id, and its errors keep their codes;
 * and the answer has a content-length (HTTP/1.1 answers were chunked before).
 */
import http from "node:http";
import { create } from "@bufbuild/protobuf";
import { createConnectRouter, createContextKey, createContextValues } from "@connectrpc/connect";
import type { HandlerContext, Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeeService, GetFeesRequestSchema } from "../../gen/solgate/v1/fee_service_pb.js";
import { createRestHandler } from "../../src/rest/rest-handler.ts";
import { defaultKeyName } from "../../src/server/auth.ts";
import { createRateLimiter } from "../../src/server/rate-limit.ts";
import { createUnaryInvoker, recordingRouter } from "../../src/server/unary-invoker.ts";
import { API_KEY, startTestServer, TOKEN_PROGRAM } from "./helpers.ts";
import type { TestServer } from "./helpers.ts";

let t: TestServer;
const auth = { Authorization: `Bearer ${API_KEY}` };
const path = `/v1/localnet/programs/${TOKEN_PROGRAM}/accounts`;

beforeAll(async () => {
  t = await startTestServer({
    rateLimiter: createRateLimiter({
      limits: new Map([["unlimited", null]]),
      defaultLimit: { points: 3, durationMs: 60_000, burst: 0 },
    }),
    inProcessHandlers: (context) => [createRestHandler({ ...context, openapi: "{}" }).handle],
  });
});
afterAll(() => t.listening.close({ timeoutMs: 500 }));

function rawGet(
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port: t.port, path, headers }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      })
      .on("error", reject);
  });
}

describe("REST calls through the unary invoker", () => {
  it("answers with a content-length, not chunked", async () => {
    const res = await rawGet({ ...auth, "x-request-id": "invoker-1" });
    expect(res.status).toBe(200);
    expect(res.headers["transfer-encoding"]).toBeUndefined();
    expect(Number(res.headers["content-length"])).toBe(Buffer.byteLength(res.body));
    // The handler saw the caller's request id (the test service echoes it into nextCursor).
    expect(JSON.parse(res.body).nextCursor).toBe("invoker-1");
  });

  it("is logged once and counted under its key and method", async () => {
    await rawGet({ ...auth, "x-request-id": "invoker-2" });
    const lines = t.logs.filter((l) => l.msg === "rpc" && l.requestId === "invoker-2");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      procedure: "solgate.v1.ProgramService/ListProgramAccounts",
      protocol: "rest",
      code: "ok",
      key: defaultKeyName(API_KEY),
    });
    const text = await t.metrics.registry.metrics();
    expect(text).toMatch(
      new RegExp(`solgate_rpc_requests_by_key_total\\{key="${defaultKeyName(API_KEY)}",code="ok"\\} [1-9]`),
    );
    expect(text).toMatch(
      /solgate_rpc_requests_total\{service="solgate.v1.ProgramService",method="ListProgramAccounts",code="ok"\} [1-9]/,
    );
  });

  it("is rate limited per key like every protocol (429 with Retry-After once the key's 3 calls are spent)", async () => {
    expect((await rawGet(auth)).status).toBe(200); // the third
    const res = await rawGet({ ...auth, "x-request-id": "invoker-3" });
    expect(res.status).toBe(429);
    expect(JSON.parse(res.body).code).toBe("rate_limited");
    expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    // The other key has its own budget.
    expect((await rawGet({ Authorization: "Bearer second-key" })).status).toBe(200);
    const line = t.logs.find((l) => l.msg === "rpc" && l.requestId === "invoker-3");
    expect(line).toMatchObject({ protocol: "rest", code: "resource_exhausted" });
  });

  it("refuses a missing or wrong key before any call", async () => {
    expect((await rawGet({})).status).toBe(401);
    expect((await rawGet({ Authorization: "Bearer wrong" })).status).toBe(401);
  });
});

describe("the invoker's handler context", () => {
  const SEEN = createContextKey<string[]>([], { description: "test: interceptors seen" });
  const GetFees = FeeService.method.getFees;
  // Two interceptors, each recording itself and adding a header: they run outermost first, every call.
  const tagging =
    (name: string): Interceptor =>
    (next) =>
    async (req) => {
      req.contextValues.get(SEEN).push(name);
      req.header.set(`x-${name}`, "1");
      return next(req);
    };
  function invokerWith(impl: (ctx: HandlerContext) => Promise<void>) {
    const { router, impls } = recordingRouter(createConnectRouter());
    router.service(FeeService, {
      async getFees(_req, ctx) {
        await impl(ctx);
        return { estimate: { source: 1 } };
      },
    });
    return createUnaryInvoker({ impls, interceptors: [tagging("outer"), tagging("inner")] });
  }

  it("gives the implementation the caller's headers as the interceptors left them, its values and its signal", async () => {
    let context: HandlerContext | undefined;
    const invoker = invokerWith(async (ctx) => {
      context = ctx;
      ctx.responseHeader.set("x-ignored", "1"); // usable, though REST sends no response metadata
    });
    const header = new Headers({ "x-request-id": "ctx-1" });
    const abort = new AbortController();
    for (const call of [1, 2]) {
      const seen: string[] = [];
      const out = await invoker.invoke(
        GetFees,
        create(GetFeesRequestSchema, { chain: "localnet" }),
        header,
        abort.signal,
        createContextValues().set(SEEN, seen),
      );
      expect(out).toMatchObject({ estimate: { source: 1 } });
      expect(seen, `call ${call}`).toEqual(["outer", "inner"]);
    }
    expect(context?.requestHeader.get("x-request-id")).toBe("ctx-1");
    expect(context?.requestHeader.get("x-inner")).toBe("1");
    expect(context?.method).toBe(GetFees);
    expect(context?.service).toBe(FeeService);
    expect(context?.timeoutMs()).toBeUndefined();
    expect(context?.signal.aborted).toBe(false);
    abort.abort(new Error("client gone"));
    expect(context?.signal.aborted).toBe(true);
  });

  it("rejects with what the implementation threw, through the interceptors", async () => {
    const invoker = invokerWith(async () => {
      throw new Error("boom");
    });
    const seen: string[] = [];
    await expect(
      invoker.invoke(
        GetFees,
        create(GetFeesRequestSchema, {}),
        new Headers(),
        new AbortController().signal,
        createContextValues().set(SEEN, seen),
      ),
    ).rejects.toThrow("boom");
    expect(seen).toEqual(["outer", "inner"]);
  });
});
