/**
 * Health and reflection answer without a key; `buf curl` (a Go client) discovers the schema through
 * reflection alone and calls over gRPC, gRPC-Web and Connect.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport, createConnectTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import type { ServerReflectionResponse } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ServerReflectionAlpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { API_KEY, startTestServer, TOKEN_PROGRAM } from "./helpers.ts";
import type { TestServer } from "./helpers.ts";

const run = promisify(execFile);
const BUF = path.resolve("node_modules/.bin/buf");

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.listening.close({ timeoutMs: 1000 });
});

const EXPECTED_SERVICES = [
  "solgate.v1.ProgramService",
  "solgate.v1.TransactionService",
  "solgate.v1.FeeService",
  "solgate.v1.CollectionService",
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
].sort();

describe("grpc.health.v1.Health", () => {
  it("answers Check without a key, for the server and each service; NOT_FOUND for unknown ones", async () => {
    const health = createClient(Health, createConnectTransport({ baseUrl: t.url, httpVersion: "1.1" }));
    expect((await health.check({ service: "" })).status).toBe(Status.SERVING);
    expect((await health.check({ service: "solgate.v1.ProgramService" })).status).toBe(Status.SERVING);
    const err = await health.check({ service: "nope.Service" }).catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.NotFound);
  });

  it("streams Watch changes without a key", async () => {
    const health = createClient(Health, createGrpcTransport({ baseUrl: t.url }));
    const abort = new AbortController();
    const seen: Status[] = [];
    const stream = health.watch({ service: "solgate.v1.FeeService" }, { signal: abort.signal });
    const done = (async () => {
      try {
        for await (const res of stream) {
          seen.push(res.status);
          if (seen.length === 1) t.server.health.set("solgate.v1.FeeService", Status.NOT_SERVING);
          if (seen.length === 2) t.server.health.set("solgate.v1.FeeService", Status.SERVING);
          if (seen.length === 3) abort.abort();
        }
      } catch (e) {
        if (ConnectError.from(e).code !== Code.Canceled) throw e;
      }
    })();
    await done;
    expect(seen).toEqual([Status.SERVING, Status.NOT_SERVING, Status.SERVING]);
  });
});

describe("server reflection", () => {
  it.each([
    ["v1", ServerReflection],
    ["v1alpha", ServerReflectionAlpha],
  ] as const)("%s lists every service and sends each file once per stream", async (_v, service) => {
    const client = createClient(service as typeof ServerReflection, createGrpcTransport({ baseUrl: t.url }));
    const requests = async function* () {
      yield { messageRequest: { case: "listServices" as const, value: "" } };
      yield { messageRequest: { case: "fileContainingSymbol" as const, value: "solgate.v1.ProgramService" } };
      yield { messageRequest: { case: "fileContainingSymbol" as const, value: "solgate.v1.FeeService.GetFees" } };
      yield { messageRequest: { case: "fileByFilename" as const, value: "solgate/v1/program.proto" } };
      yield { messageRequest: { case: "fileContainingSymbol" as const, value: "no.Such" } };
    };
    const answers: ServerReflectionResponse["messageResponse"][] = [];
    for await (const res of client.serverReflectionInfo(requests())) answers.push(res.messageResponse);
    expect(answers[0].case).toBe("listServicesResponse");
    const names = answers[0].case === "listServicesResponse" ? answers[0].value.service.map((s) => s.name) : [];
    expect(names.sort()).toEqual(EXPECTED_SERVICES);

    const fileNames = (i: number) =>
      answers[i].case === "fileDescriptorResponse"
        ? answers[i].value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b).name)
        : [];
    const first = fileNames(1);
    expect(first[0]).toBe("solgate/v1/program_service.proto");
    expect(first).toContain("solgate/v1/program.proto");
    expect(first).toContain("google/api/annotations.proto");
    expect(first).toContain("google/protobuf/descriptor.proto");
    expect(new Set(first).size).toBe(first.length);
    // The fee file's dependencies that the stream already has are not sent again.
    const second = fileNames(2);
    expect(second[0]).toBe("solgate/v1/fee_service.proto");
    expect(second).toContain("solgate/v1/fee.proto");
    expect(second).not.toContain("google/api/annotations.proto");
    // A file asked for by name is always answered.
    expect(fileNames(3)).toEqual(["solgate/v1/program.proto"]);
    expect(answers[4].case).toBe("errorResponse");
  });
});

describe("buf curl with reflection only", () => {
  it("lists services", async () => {
    const { stdout } = await run(BUF, ["curl", "--http2-prior-knowledge", "--list-services", t.url]);
    expect(stdout.trim().split("\n").sort()).toEqual(EXPECTED_SERVICES);
  });

  it.each(["grpc", "grpcweb", "connect"])("calls ProgramService over %s", async (protocol) => {
    const { stdout } = await run(BUF, [
      "curl",
      "--protocol",
      protocol,
      "--http2-prior-knowledge",
      "-H",
      `Authorization: Bearer ${API_KEY}`,
      "-d",
      JSON.stringify({ programId: TOKEN_PROGRAM }),
      `${t.url}/solgate.v1.ProgramService/ListProgramAccounts`,
    ]);
    const body = JSON.parse(stdout);
    expect(body.programId).toBe(TOKEN_PROGRAM);
    expect(body.items[0].lamports).toBe("1000000000");
  });

  it("gets unauthenticated without a key", async () => {
    const err = await run(BUF, [
      "curl",
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "-d",
      JSON.stringify({ programId: TOKEN_PROGRAM }),
      `${t.url}/solgate.v1.ProgramService/ListProgramAccounts`,
    ]).then(
      () => undefined,
      (e: { stderr: string }) => e,
    );
    expect(err?.stderr).toMatch(/unauthenticated/);
  });

  it("checks health over grpc", async () => {
    const { stdout } = await run(BUF, [
      "curl",
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      `${t.url}/grpc.health.v1.Health/Check`,
    ]);
    expect(JSON.parse(stdout)).toEqual({ status: "SERVING" });
  });
});
