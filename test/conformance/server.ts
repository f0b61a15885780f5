/**
 * The server under test of the Connect conformance suite (connectrpc.com/conformance, server mode): reads a
 * size-delimited ServerCompatRequest from stdin, starts Solgate's own server stack (createServer: the lean
 * unary path, the router, the interceptors, the one-port listener) with the suite's ConformanceService, and
 * writes a size-delimited ServerCompatResponse with its port to stdout. Exits on SIGTERM. Run by run.sh.
 *
 * The suite's client sends no API key: this server's key checker accepts every call as key "conformance".
 * Everything else (interceptors, validation, limits) is as the gateway has it.
 */
import { create, createRegistry, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { ApiKeyChecker } from "../../src/server/auth.ts";
import { createLogger } from "../../src/server/logger.ts";
import type { LogLevel } from "../../src/server/logger.ts";
import { createServer } from "../../src/server/server.ts";
import { createConformanceService } from "./conformance-service.ts";
import {
  ConformanceService,
  file_connectrpc_conformance_v1_service,
} from "./gen/connectrpc/conformance/v1/service_pb.js";
import {
  ServerCompatRequestSchema,
  ServerCompatResponseSchema,
} from "./gen/connectrpc/conformance/v1/server_compat_pb.js";

const everyone: ApiKeyChecker = {
  isAuthorized: () => true,
  nameOf: () => "conformance",
  assertAuthorized: () => "conformance",
};

async function readRequest(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    const all = Buffer.concat(chunks);
    if (all.length >= 4 && all.length >= 4 + all.readUInt32BE(0)) return all.subarray(4, 4 + all.readUInt32BE(0));
  }
  throw new Error("stdin ended before a whole ServerCompatRequest");
}

const request = fromBinary(ServerCompatRequestSchema, await readRequest());
if (request.useTls) throw new Error("TLS is not supported here (config.yaml says supports_tls: false)");
const server = createServer({
  routes: (router) => router.service(ConformanceService, createConformanceService()),
  auth: everyone,
  // Logs go to stderr: stdout carries the ServerCompatResponse.
  logger: createLogger({
    level: (process.env.CONFORMANCE_LOG_LEVEL ?? "silent") as LogLevel,
    destination: process.stderr,
  }),
  ...(request.messageReceiveLimit > 0 ? { readMaxBytes: request.messageReceiveLimit } : {}),
  // The payloads echo requests as Any: JSON needs their types.
  jsonOptions: { registry: createRegistry(file_connectrpc_conformance_v1_service) },
  ...(process.env.CONFORMANCE_UNARY_PATH === "off" ? { unaryPath: false } : {}),
});
const listening = await server.listen(0, "127.0.0.1");
const response = toBinary(
  ServerCompatResponseSchema,
  create(ServerCompatResponseSchema, { host: "127.0.0.1", port: listening.port }),
);
const size = Buffer.alloc(4);
size.writeUInt32BE(response.length);
process.stdout.write(Buffer.concat([size, response]));
process.on("SIGTERM", () => {
  void listening.close({ timeoutMs: 1000 }).then(() => process.exit(0));
});
