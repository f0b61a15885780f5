/**
 * The lean unary path answers as the router does. Two test servers, one with the path and one without,
 * get the same raw requests (gRPC over h2c, gRPC-Web and Connect over HTTP/1.1 and h2c; answers, Solgate
 * errors with details, validation errors, missing keys, bodies that do not decode, response metadata), and
 * each answer — status, headers, body bytes, trailers — must be the same. A probe method reports which path
 * served it, so the comparison is known to cover the lean path. The Connect conformance suite
 * (test/conformance) checks the protocols themselves.
 */
import http from "node:http";
import http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccountService, GetAccountRequestSchema } from "../../gen/solgate/v1/account_service_pb.js";
import { ListProgramAccountsRequestSchema } from "../../gen/solgate/v1/program_service_pb.js";
import { CallContext } from "../../src/server/unary-invoker.ts";
import { API_KEY, BAD_PROGRAM, BUG_PROGRAM, startTestServer, testRoutes, TOKEN_PROGRAM } from "./helpers.ts";
import type { TestServer } from "./helpers.ts";

const LIST = "/solgate.v1.ProgramService/ListProgramAccounts";
const GET_ACCOUNT = "/solgate.v1.AccountService/GetAccount";

/** The test routes, plus a probe that says whether the lean path (a CallContext of a wire protocol) served it. */
function routes(router: ConnectRouter): void {
  testRoutes(router);
  router.service(AccountService, {
    getAccount(req, ctx) {
      ctx.responseHeader.set("x-probe", "header");
      ctx.responseTrailer.set("x-probe-trailer", "trailer");
      const lean = ctx instanceof CallContext && ctx.protocolName !== "in-process";
      return { account: { address: req.address, owner: lean ? "lean" : "router" } };
    },
  });
}

let lean: TestServer;
let router: TestServer;
beforeAll(async () => {
  [lean, router] = await Promise.all([startTestServer({ routes }), startTestServer({ routes, unaryPath: false })]);
});
afterAll(async () => {
  await Promise.all([lean.listening.close({ timeoutMs: 1000 }), router.listening.close({ timeoutMs: 1000 })]);
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  trailers: Record<string, string>;
}

/** What may differ between two correct answers: framing, time, and the connection. */
const INCIDENTAL = new Set(["date", "content-length", "transfer-encoding", "connection", "keep-alive"]);

function normalized(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(":") || INCIDENTAL.has(name) || value === undefined) continue;
    out[name] = String(value);
  }
  return out;
}

interface Case {
  name: string;
  path: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

function h2Call(port: number, c: Case): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": c.path, ...c.headers });
    const chunks: Buffer[] = [];
    let status = 0;
    let headers: Record<string, string> = {};
    let trailers: Record<string, string> = {};
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      headers = normalized(h);
    });
    stream.on("trailers", (t) => {
      trailers = normalized(t);
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      session.close();
      resolve({ status, headers, body: Buffer.concat(chunks).toString("base64"), trailers });
    });
    stream.on("error", reject);
    stream.end(c.body);
  });
}

function h1Call(port: number, c: Case): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method: "POST", path: c.path, headers: c.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: normalized(res.headers),
          body: Buffer.concat(chunks).toString("base64"),
          trailers: normalized(res.trailers),
        }),
      );
    });
    req.on("error", reject);
    req.end(c.body);
  });
}

function envelope(bytes: Uint8Array): Uint8Array {
  const out = Buffer.alloc(5 + bytes.length);
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
}

const list = (programId: string) =>
  toBinary(ListProgramAccountsRequestSchema, create(ListProgramAccountsRequestSchema, { programId }));
const account = toBinary(GetAccountRequestSchema, create(GetAccountRequestSchema, { address: TOKEN_PROGRAM }));
const auth = { authorization: `Bearer ${API_KEY}` };
let requestNumber = 0;

/** The same request in each protocol the lean path takes. */
function inEveryProtocol(
  name: string,
  path: string,
  message: Uint8Array,
  json: string,
  extra: Record<string, string> = {},
) {
  return {
    grpc: {
      name: `${name} (gRPC)`,
      path,
      headers: { "content-type": "application/grpc", te: "trailers", ...extra },
      body: envelope(message),
    },
    grpcWeb: {
      name: `${name} (gRPC-Web)`,
      path,
      headers: { "content-type": "application/grpc-web+proto", ...extra },
      body: envelope(message),
    },
    connectProto: {
      name: `${name} (Connect proto)`,
      path,
      headers: { "content-type": "application/proto", ...extra },
      body: message,
    },
    connectJson: {
      name: `${name} (Connect JSON)`,
      path,
      headers: { "content-type": "application/json", ...extra },
      body: Buffer.from(json),
    },
  };
}

const CASES = [
  inEveryProtocol("an answer", LIST, list(TOKEN_PROGRAM), JSON.stringify({ programId: TOKEN_PROGRAM }), auth),
  inEveryProtocol(
    "a Solgate error with details",
    LIST,
    list(BAD_PROGRAM),
    JSON.stringify({ programId: BAD_PROGRAM }),
    auth,
  ),
  inEveryProtocol("an unexpected error", LIST, list(BUG_PROGRAM), JSON.stringify({ programId: BUG_PROGRAM }), auth),
  inEveryProtocol("a validation error", LIST, list("not base58!"), JSON.stringify({ programId: "not base58!" }), auth),
  inEveryProtocol("no key", LIST, list(TOKEN_PROGRAM), JSON.stringify({ programId: TOKEN_PROGRAM })),
  inEveryProtocol("a wrong key", LIST, list(TOKEN_PROGRAM), JSON.stringify({ programId: TOKEN_PROGRAM }), {
    authorization: "Bearer wrong",
  }),
  inEveryProtocol("a body that does not decode", LIST, Uint8Array.of(0x0a, 0xff, 0xff), '{"programId": ', auth),
  inEveryProtocol(
    "an unknown field",
    LIST,
    Uint8Array.of(0xf8, 0x7f, 1),
    JSON.stringify({ programId: TOKEN_PROGRAM, nope: 1 }),
    auth,
  ),
  inEveryProtocol("response metadata", GET_ACCOUNT, account, JSON.stringify({ address: TOKEN_PROGRAM }), auth),
  inEveryProtocol("a deadline", LIST, list(TOKEN_PROGRAM), JSON.stringify({ programId: TOKEN_PROGRAM }), {
    ...auth,
    "grpc-timeout": "5S",
    "connect-timeout-ms": "5000",
  }),
];

describe("the lean unary path", () => {
  it("serves plain unary calls on every protocol (the probe says which path answered)", async () => {
    const probe = CASES[8];
    for (const c of [probe.grpc, probe.grpcWeb, probe.connectProto, probe.connectJson]) {
      const call = c === probe.grpc ? h2Call : h1Call;
      const id = { "x-request-id": `probe-${++requestNumber}` };
      const onLean = await call(lean.port, { ...c, headers: { ...c.headers, ...id } });
      const onRouter = await call(router.port, { ...c, headers: { ...c.headers, ...id } });
      expect(Buffer.from(onLean.body, "base64").includes(Buffer.from("lean")), c.name).toBe(true);
      expect(Buffer.from(onRouter.body, "base64").includes(Buffer.from("router")), c.name).toBe(true);
    }
  });

  for (const group of CASES) {
    for (const [protocol, c] of Object.entries(group)) {
      const transports =
        protocol === "grpc" ? [["h2c", h2Call] as const] : [["HTTP/1.1", h1Call] as const, ["h2c", h2Call] as const];
      for (const [transport, call] of transports) {
        it(`answers ${c.name} over ${transport} as the router does`, async () => {
          const id = { "x-request-id": `same-${++requestNumber}` };
          const onLean = await call(lean.port, { ...c, headers: { ...c.headers, ...id } });
          const onRouter = await call(router.port, { ...c, headers: { ...c.headers, ...id } });
          if (c.path === GET_ACCOUNT) onLean.body = onRouter.body; // the probe's answer differs by design
          expect(onLean).toEqual(onRouter);
        });
      }
    }
  }
});
