/**
 * The transcoder on the real server (port 0) over the test services of test/server/helpers.ts:
 * error mapping (details back to JSON, Retry-After, no leak of internal errors), services not
 * implemented, the SSE route's heartbeats, end and disconnect, and routing details.
 */
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRestHandler } from "../../src/rest/rest-handler.ts";
import {
  API_KEY,
  BAD_PROGRAM,
  BUG_PROGRAM,
  LONG_SIGNATURE,
  SHORT_SIGNATURE,
  startTestServer,
  TOKEN_PROGRAM,
  UPSTREAM_PROGRAM,
} from "../server/helpers.ts";
import type { TestServer } from "../server/helpers.ts";
import { expectRestError, expectShape, PROGRAM_ACCOUNTS_PAGE } from "./shapes.ts";

let t: TestServer;
const auth = { Authorization: `Bearer ${API_KEY}` };
const get = (path: string, headers: Record<string, string> = auth) => fetch(`${t.url}${path}`, { headers });

beforeAll(async () => {
  t = await startTestServer({
    inProcessHandlers: (context) => [createRestHandler({ ...context, openapi: '{"openapi":"3.1.0"}' }).handle],
  });
});
afterAll(() => t.listening.close({ timeoutMs: 500 }));

describe("REST over the server's handlers", () => {
  it("renders a response with u64 as numbers and absent optionals as null", async () => {
    const res = await get(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts`, { ...auth, "x-request-id": "rid-1" });
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status).toBe(200);
    expectShape(body, PROGRAM_ACCOUNTS_PAGE);
    expect(body.items).toEqual([{ address: TOKEN_PROGRAM, lamports: 1_000_000_000, sol: 1, space: 165, data: null }]);
    // The test service echoes the request id it saw into nextCursor: the header reached the handler.
    expect(body.nextCursor).toBe("rid-1");
  });

  it("turns ErrorInfo metadata back into JSON details (logs as an array)", async () => {
    const body = await expectRestError(
      await get(`/v1/localnet/programs/${BAD_PROGRAM}/accounts`),
      400,
      "invalid_address",
    );
    expect(body.details).toEqual({ field: "program_id", logs: ["a", "b"] });
    expect(body.message).toBe("program_id is not a base58 address");
  });

  it("takes a literal path segment for what it says, not for a variable of another route", async () => {
    // POST /transactions/ladder/prepare is one resource; GET /transactions/ladder/{id} must not claim it too.
    const body = await expectRestError(
      await fetch(`${t.url}/v1/localnet/transactions/ladder/prepare`, { method: "OPTIONS", headers: auth }),
      405,
      "method_not_allowed",
    );
    expect(body.details.allowed).toEqual(["POST"]);
    // A word that is no literal there is still the variable's.
    const other = await expectRestError(
      await fetch(`${t.url}/v1/localnet/transactions/ladder/x`, { method: "PUT", headers: auth }),
      405,
      "method_not_allowed",
    );
    expect(other.details.allowed).toEqual(["GET"]);
  });

  it("adds Retry-After and retryAfterMs to retryable errors", async () => {
    const res = await get(`/v1/localnet/programs/${UPSTREAM_PROGRAM}/accounts`);
    expect(res.headers.get("retry-after")).toBe("3");
    const body = await expectRestError(res, 503, "upstream_unavailable");
    expect(body.details.retryAfterMs).toBe(2500);
  });

  it("answers a bug as internal without its message", async () => {
    const body = await expectRestError(await get(`/v1/localnet/programs/${BUG_PROGRAM}/accounts`), 500, "internal");
    expect(JSON.stringify(body)).not.toContain("secret");
  });

  it("answers unimplemented (501) for an annotated RPC whose service has no implementation yet", async () => {
    // FeeService and CollectionService are registered empty in the test routes.
    await expectRestError(await get("/v1/localnet/network/fees"), 501, "unimplemented");
    await expectRestError(await get(`/v1/localnet/collections/${TOKEN_PROGRAM}`), 501, "unimplemented");
  });

  it("checks the key before decoding anything", async () => {
    await expectRestError(await get("/v1/localnet/programs/x/accounts?limit=abc", {}), 401, "unauthenticated");
  });

  it("refuses limit=0: a page of nothing, where the spec's limits start at 1 (leaving limit out gives the default)", async () => {
    for (const limit of ["0", "00", "-0"]) {
      const body = await expectRestError(
        await get(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts?limit=${limit}`),
        400,
        "invalid_parameter",
      );
      expect(body.details.field).toBe("limit");
    }
    expect((await get(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts`)).status).toBe(200);
    expect((await get(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts?limit=1`)).status).toBe(200);
  });

  it("answers a body value holding an integer past 2^64 with 400 naming its field, never 500", async () => {
    const res = await fetch(`${t.url}/v1/localnet/transactions/send`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: '{"confirm":[18446744073709551616]}',
    });
    const body = await expectRestError(res, 400, "invalid_parameter");
    expect(body.details.field).toBe("confirm");
  });

  it("takes query parameters by JSON or proto name, and refuses fields bound by the path", async () => {
    expect((await get(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts?limit=2&cursor=`)).status).toBe(200);
    const bound = await expectRestError(
      await get(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts?programId=x`),
      400,
      "invalid_parameter",
    );
    expect(bound.details.field).toBe("programId");
    await expectRestError(
      await get(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts?chain=x`),
      400,
      "invalid_parameter",
    );
    await expectRestError(
      await get(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts?size=1.5`),
      400,
      "invalid_parameter",
    );
    await expectRestError(
      await get(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts?size=18446744073709551616`),
      400,
      "invalid_parameter",
    );
    // A u64 parses, but the contract's rule caps size at 10 MiB (the largest account).
    await expectRestError(
      await get(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts?size=18446744073709551615`),
      400,
      "invalid_parameter",
    );
    expect((await get(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts?size=10485760`)).status).toBe(200);
  });

  it("leaves other paths to the next handler", async () => {
    const res = await fetch(`${t.url}/solgate.v1.ProgramService/ListProgramAccounts`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ programId: TOKEN_PROGRAM }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { items: { lamports: string }[] }).items[0].lamports).toBe("1000000000");
    expect((await fetch(`${t.url}/openapi.json`)).status).toBe(200);
    expect((await fetch(`${t.url}/openapi.json`, { method: "POST" })).status).toBe(404);
  });
});

describe("over HTTP/2 (h2c, as gRPC clients connect)", () => {
  it("answers REST paths and errors the same way", async () => {
    const session = http2.connect(t.url);
    const request = (path: string, method = "GET", body?: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const stream = session.request({
          ":path": path,
          ":method": method,
          authorization: auth.Authorization,
          "content-type": "application/json",
        });
        let text = "";
        let status = 0;
        stream.on("response", (headers) => (status = Number(headers[":status"])));
        stream.on("data", (chunk: Buffer) => (text += chunk.toString()));
        stream.on("end", () => resolve({ status, body: text }));
        stream.on("error", reject);
        stream.end(body);
      });
    try {
      const ok = await request(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts`);
      expect(ok.status).toBe(200);
      expect((JSON.parse(ok.body) as { items: { space: number }[] }).items[0].space).toBe(165);
      const bad = await request(`/v1/localnet/programs/${TOKEN_PROGRAM}/accounts?limit=x`);
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body)).toMatchObject({ code: "invalid_parameter" });
      const heartbeats = await request(`/v1/localnet/transactions/${SHORT_SIGNATURE}/events`);
      expect(heartbeats.body).toBe(": heartbeat slot=1\n\n: heartbeat slot=2\n\n: heartbeat slot=3\n\n");
    } finally {
      session.close();
    }
  });
});

describe("SSE watch", () => {
  it("sends heartbeats as comments and ends when the stream ends", async () => {
    const res = await get(`/v1/localnet/transactions/${SHORT_SIGNATURE}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(res.headers.get("cache-control")).toContain("no-cache");
    expect(await res.text()).toBe(": heartbeat slot=1\n\n: heartbeat slot=2\n\n: heartbeat slot=3\n\n");
  });

  it("frees the stream when the client disconnects", async () => {
    const abort = new AbortController();
    const res = await fetch(`${t.url}/v1/localnet/transactions/${LONG_SIGNATURE}/events`, {
      headers: { ...auth, "x-request-id": "sse-leave" },
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain(": heartbeat slot=");
    abort.abort();
    const deadline = Date.now() + 3000;
    let line: Record<string, unknown> | undefined;
    while (line === undefined && Date.now() < deadline) {
      line = t.logs.find((l) => l.msg === "rpc" && l.requestId === "sse-leave");
      await new Promise((r) => setTimeout(r, 20));
    }
    // The test WatchStatus runs until its context signal aborts: a line at all means the abort reached the handler.
    expect(line).toMatchObject({ procedure: "solgate.v1.TransactionService/WatchStatus" });
    expect(["ok", "canceled"]).toContain(line!.code);
  });

  it("needs the key and GET", async () => {
    await expectRestError(await get("/v1/localnet/transactions/x/events", {}), 401, "unauthenticated");
    await expectRestError(
      await fetch(`${t.url}/v1/localnet/transactions/x/events`, { method: "POST", headers: auth }),
      405,
      "method_not_allowed",
    );
  });
});
