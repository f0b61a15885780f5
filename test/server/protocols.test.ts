/**
 * Every protocol on the one port, driven by real clients: connect-node's gRPC, gRPC-Web and Connect
 * transports over HTTP/1.1 and HTTP/2, and @grpc/grpc-js. Auth, errors with ErrorInfo, streams.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import type { Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { ErrorInfoSchema, RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import {
  ListProgramAccountsRequestSchema,
  ListProgramAccountsResponseSchema,
  ProgramService,
} from "../../gen/solgate/v1/program_service_pb.js";
import type {
  ListProgramAccountsRequest,
  ListProgramAccountsResponse,
} from "../../gen/solgate/v1/program_service_pb.js";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import {
  API_KEY,
  BAD_PROGRAM,
  BUG_PROGRAM,
  SHORT_SIGNATURE,
  startTestServer,
  TOKEN_PROGRAM,
  UPSTREAM_PROGRAM,
} from "./helpers.ts";
import type { TestServer } from "./helpers.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.listening.close({ timeoutMs: 1000 });
});

const transports: Record<string, (baseUrl: string) => Transport> = {
  "grpc h2": (baseUrl) => createGrpcTransport({ baseUrl }),
  "grpc-web h1": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
  "grpc-web h2": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "2" }),
  "connect json h1": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
  "connect binary h1": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true }),
  "connect json h2": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "2" }),
  "connect binary h2": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true }),
};

const auth = { Authorization: `Bearer ${API_KEY}` };

async function callError(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("expected the call to fail");
}

describe.each(Object.entries(transports))("%s", (_name, makeTransport) => {
  const programs = () => createClient(ProgramService, makeTransport(t.url));
  const transactions = () => createClient(TransactionService, makeTransport(t.url));

  it("answers a unary call with a valid key, echoing x-request-id", async () => {
    const res = await programs().listProgramAccounts(
      { programId: TOKEN_PROGRAM },
      { headers: { ...auth, "x-request-id": "req-123" } },
    );
    expect(res.programId).toBe(TOKEN_PROGRAM);
    expect(res.items[0].lamports).toBe(1_000_000_000n);
    expect(res.nextCursor).toBe("req-123");
  });

  it("rejects a missing key and a wrong key with UNAUTHENTICATED", async () => {
    const missing = await callError(programs().listProgramAccounts({ programId: TOKEN_PROGRAM }));
    expect(missing.code).toBe(Code.Unauthenticated);
    expect(missing.findDetails(ErrorInfoSchema)[0]?.reason).toBe("UNAUTHENTICATED");
    const wrong = await callError(
      programs().listProgramAccounts({ programId: TOKEN_PROGRAM }, { headers: { Authorization: "Bearer nope" } }),
    );
    expect(wrong.code).toBe(Code.Unauthenticated);
    expect(wrong.rawMessage).toBe("invalid API key");
    const streamed = await callError(
      (async () => {
        for await (const _ of transactions().watchStatus({ signature: SHORT_SIGNATURE })) void _;
      })(),
    );
    expect(streamed.code).toBe(Code.Unauthenticated);
  });

  it("carries a SolgateError's reason and metadata in ErrorInfo", async () => {
    const err = await callError(programs().listProgramAccounts({ programId: BAD_PROGRAM }, { headers: auth }));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toBe("program_id is not a base58 address");
    const info = err.findDetails(ErrorInfoSchema)[0];
    expect(info.reason).toBe("INVALID_ADDRESS");
    expect(info.domain).toBe("solgate");
    expect(info.metadata).toEqual({ field: "program_id", logs: '["a","b"]' });
  });

  it("maps upstream failures to UNAVAILABLE with a retry delay, and bugs to a bare INTERNAL", async () => {
    const err = await callError(programs().listProgramAccounts({ programId: UPSTREAM_PROGRAM }, { headers: auth }));
    expect(err.code).toBe(Code.Unavailable);
    const retry = err.findDetails(RetryInfoSchema)[0];
    expect(retry.retryDelay?.seconds).toBe(2n);
    expect(retry.retryDelay?.nanos).toBe(500_000_000);
    const bug = await callError(programs().listProgramAccounts({ programId: BUG_PROGRAM }, { headers: auth }));
    expect(bug.code).toBe(Code.Internal);
    expect(bug.rawMessage).toBe("internal error");
    expect(bug.findDetails(ErrorInfoSchema)[0]?.reason).toBe("INTERNAL");
  });

  it("streams server messages", async () => {
    const slots: bigint[] = [];
    for await (const res of transactions().watchStatus({ signature: SHORT_SIGNATURE }, { headers: auth })) {
      if (res.event.case === "heartbeat") slots.push(res.event.value.slot);
    }
    expect(slots).toEqual([1n, 2n, 3n]);
  });
});

describe("@grpc/grpc-js", () => {
  let client: grpc.Client;
  beforeAll(() => {
    client = new grpc.Client(`127.0.0.1:${t.port}`, grpc.credentials.createInsecure());
  });
  afterAll(() => client.close());

  const call = (req: { programId: string }, key?: string) =>
    new Promise<{ res?: ListProgramAccountsResponse; err?: grpc.ServiceError }>((resolve) => {
      const md = new grpc.Metadata();
      if (key !== undefined) md.set("authorization", `Bearer ${key}`);
      client.makeUnaryRequest(
        "/solgate.v1.ProgramService/ListProgramAccounts",
        (m: ListProgramAccountsRequest) => Buffer.from(toBinary(ListProgramAccountsRequestSchema, m)),
        (b: Buffer) => fromBinary(ListProgramAccountsResponseSchema, b),
        create(ListProgramAccountsRequestSchema, req),
        md,
        (err, res) => resolve({ res, err: err ?? undefined }),
      );
    });

  it("answers with a key", async () => {
    const { res, err } = await call({ programId: TOKEN_PROGRAM }, API_KEY);
    expect(err).toBeUndefined();
    expect(res?.items[0].address).toBe(TOKEN_PROGRAM);
  });

  it("gets UNAUTHENTICATED without or with a wrong key", async () => {
    expect((await call({ programId: TOKEN_PROGRAM })).err?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect((await call({ programId: TOKEN_PROGRAM }, "wrong")).err?.code).toBe(grpc.status.UNAUTHENTICATED);
  });

  it("reads ErrorInfo from grpc-status-details-bin as a google.rpc.Status", async () => {
    const { err } = await call({ programId: BAD_PROGRAM }, API_KEY);
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    const bin = err?.metadata.get("grpc-status-details-bin")[0] as Buffer;
    const status = fromBinary(StatusSchema, bin);
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    const info = anyUnpack(status.details[0], ErrorInfoSchema);
    expect(info?.reason).toBe("INVALID_ADDRESS");
    expect(info?.metadata.field).toBe("program_id");
  });
});
