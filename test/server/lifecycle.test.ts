/**
 * The listener and handler chain around Connect: CORS, request ids, pre-handlers and 404, silent
 * and slow sockets, logs and metrics, and a draining close.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.js";
import { RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { ProgramService } from "../../gen/solgate/v1/program_service_pb.js";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { startMetricsServer } from "../../src/server/metrics.ts";
import { send } from "../../src/server/http-handler.ts";
import { API_KEY, BAD_PROGRAM, LONG_SIGNATURE, SLOW_PROGRAM, startTestServer, TOKEN_PROGRAM } from "./helpers.ts";
import type { TestServer } from "./helpers.ts";

const auth = { Authorization: `Bearer ${API_KEY}` };

/** Resolves with how long the server took to close a raw socket that sends `bytes` (or nothing). */
function timeToClose(port: number, bytes?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1", () => {
      if (bytes !== undefined) socket.write(bytes);
    });
    socket.on("error", () => {});
    socket.on("data", () => {});
    socket.on("close", () => resolve(Date.now() - started));
    setTimeout(() => reject(new Error("socket still open after 10 s")), 10_000).unref();
  });
}

describe("handler chain", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      socketTimeoutMs: 300,
      preHandlers: [
        (req, res) => {
          if (req.url !== "/demo") return false;
          send(res, 200, { demo: true, requestId: req.headers["x-request-id"] });
          return true;
        },
      ],
    });
  });
  afterAll(() => t.listening.close({ timeoutMs: 500 }));

  it("answers a CORS preflight for Connect with the auth header allowed", async () => {
    const res = await fetch(`${t.url}/solgate.v1.ProgramService/ListProgramAccounts`, {
      method: "OPTIONS",
      headers: {
        Origin: "https://app.example.com",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type,connect-protocol-version",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    const allowed = res.headers.get("access-control-allow-headers")!.toLowerCase();
    for (const h of ["authorization", "content-type", "connect-protocol-version", "x-grpc-web"])
      expect(allowed).toContain(h);
  });

  it("exposes grpc-status and x-request-id to browsers on a real call, echoing the caller's id", async () => {
    const res = await fetch(`${t.url}/solgate.v1.ProgramService/ListProgramAccounts`, {
      method: "POST",
      headers: {
        ...auth,
        Origin: "https://app.example.com",
        "content-type": "application/json",
        "x-request-id": "abc-1",
      },
      body: JSON.stringify({ programId: TOKEN_PROGRAM }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const exposed = res.headers.get("access-control-expose-headers")!.toLowerCase().split(/,\s*/);
    expect(exposed).toEqual(
      expect.arrayContaining(["grpc-status", "grpc-message", "grpc-status-details-bin", "x-request-id", "retry-after"]),
    );
    expect(res.headers.get("x-request-id")).toBe("abc-1");
    expect((await res.json()).nextCursor).toBe("abc-1");
  });

  it("generates a request id when none (or a weird one) is given", async () => {
    const res = await fetch(`${t.url}/demo`, { headers: { "x-request-id": "bad id with spaces" } });
    const body = await res.json();
    expect(body.demo).toBe(true);
    expect(body.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get("x-request-id")).toBe(body.requestId);
  });

  it("routes pre-handlers first and answers unknown paths 404", async () => {
    const res = await fetch(`${t.url}/nope`);
    expect(res.status).toBe(404);
    expect((await res.json()).code).toBe("not_found");
  });

  it("drops sockets that send nothing, and HTTP/1.1 clients too slow with their headers", async () => {
    // The server closes each (the client never does); within 10x the 300 ms socket timeout.
    expect(await timeToClose(t.port)).toBeLessThan(3000);
    expect(await timeToClose(t.port, "GET /demo HTTP/1.1\r\nHost: x\r\n")).toBeLessThan(3000);
    // A split HTTP/2 preface that never completes is dropped as well.
    expect(await timeToClose(t.port, "PRI * HTTP/2.0\r\n")).toBeLessThan(3000);
  });

  it("logs one line per RPC with request id and code, never the key", async () => {
    const client = createClient(ProgramService, createGrpcTransport({ baseUrl: t.url }));
    await client
      .listProgramAccounts({ programId: BAD_PROGRAM }, { headers: { ...auth, "x-request-id": "log-1" } })
      .catch(() => {});
    const line = t.logs.find((l) => l.requestId === "log-1");
    expect(line).toMatchObject({
      msg: "rpc",
      procedure: "solgate.v1.ProgramService/ListProgramAccounts",
      protocol: "grpc",
      code: "invalid_argument",
    });
    expect(typeof line?.durationMs).toBe("number");
    expect(JSON.stringify(t.logs)).not.toContain(API_KEY);
  });

  it("counts RPCs by service, method and code, served on the metrics port", async () => {
    const client = createClient(ProgramService, createConnectTransport({ baseUrl: t.url, httpVersion: "1.1" }));
    await client.listProgramAccounts({ programId: TOKEN_PROGRAM }, { headers: auth });
    await client.listProgramAccounts({ programId: TOKEN_PROGRAM }).catch(() => {});
    const metrics = await startMetricsServer({ registry: t.metrics.registry, port: 0, host: "127.0.0.1" });
    try {
      const text = await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text();
      expect(text).toMatch(
        /solgate_rpc_requests_total\{service="solgate.v1.ProgramService",method="ListProgramAccounts",code="ok"\} [1-9]/,
      );
      expect(text).toMatch(/solgate_rpc_requests_total\{[^}]*code="unauthenticated"\} [1-9]/);
      expect(text).toContain("solgate_rpc_duration_seconds_bucket");
      expect((await fetch(`http://127.0.0.1:${metrics.port}/other`)).status).toBe(404);
    } finally {
      await metrics.close();
    }
  });
});

describe("close()", () => {
  it("ends streams with UNAVAILABLE, lets unary calls finish, reports NOT_SERVING, then refuses connections", async () => {
    const t = await startTestServer();
    const grpcTransport = createGrpcTransport({ baseUrl: t.url });
    const h1Transport = createConnectTransport({ baseUrl: t.url, httpVersion: "1.1" });
    const watch = async (transport: typeof grpcTransport) => {
      let n = 0;
      try {
        for await (const _ of createClient(TransactionService, transport).watchStatus(
          { signature: LONG_SIGNATURE },
          { headers: auth },
        ))
          n++;
      } catch (e) {
        return { n, err: ConnectError.from(e) };
      }
      return { n, err: undefined };
    };
    const healthSeen: Status[] = [];
    const healthWatch = (async () => {
      try {
        for await (const r of createClient(Health, grpcTransport).watch({ service: "" })) healthSeen.push(r.status);
      } catch {}
    })();
    const streams = [watch(grpcTransport), watch(h1Transport)];
    const slow = createClient(ProgramService, grpcTransport).listProgramAccounts(
      { programId: SLOW_PROGRAM, cursor: "400" },
      { headers: auth },
    );
    await new Promise((r) => setTimeout(r, 150));
    const started = Date.now();
    // A deadline far beyond the work: close() must resolve when the last call ends, not at its deadline.
    await t.listening.close({ timeoutMs: 30_000 });
    const took = Date.now() - started;

    expect((await slow).programId).toBe(SLOW_PROGRAM);
    for (const s of await Promise.all(streams)) {
      expect(s.n).toBeGreaterThan(0);
      expect(s.err?.code).toBe(Code.Unavailable);
      expect(s.err?.findDetails(RetryInfoSchema)).toHaveLength(1);
    }
    await healthWatch;
    expect(healthSeen).toEqual([Status.SERVING, Status.NOT_SERVING]);
    // The slow call takes 400 ms: 10x that, and far short of the 30 s deadline.
    expect(took).toBeLessThan(4000);
    await expect(fetch(`${t.url}/demo`)).rejects.toThrow();
  }, 40_000);

  it("cuts calls still running at the deadline", async () => {
    const t = await startTestServer();
    const slow = createClient(ProgramService, createGrpcTransport({ baseUrl: t.url }))
      .listProgramAccounts({ programId: SLOW_PROGRAM, cursor: "30000" }, { headers: auth })
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await t.listening.close({ timeoutMs: 300 });
    // The call (30 s of work) was cut at the 300 ms deadline: close() returned (10x its deadline is room
    // enough), and the client got an error, not the answer the handler would have given 30 s later.
    expect(Date.now() - started).toBeLessThan(3000);
    const err = await slow;
    expect(err).toBeInstanceOf(ConnectError);
    expect(err?.code).toBe(Code.Canceled); // the server reset the stream (http/2 CANCEL)
  });
});
