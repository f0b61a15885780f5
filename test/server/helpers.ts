/**
 * A real Solgate server on port 0 with tiny test-only service implementations: ProgramService
 * answers from a fixed table or throws SolgateErrors, TransactionService.WatchStatus streams
 * heartbeats. Everything else (listener, interceptors, health, reflection) is production code.
 */
import { Writable } from "node:stream";
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { Registry } from "prom-client";
import { SolgateError } from "../../src/errors.ts";
import { createApiKeyChecker } from "../../src/server/auth.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createMetrics } from "../../src/server/metrics.ts";
import type { Metrics } from "../../src/server/metrics.ts";
import { createServer } from "../../src/server/server.ts";
import type { ListeningServer, ServerOptions, SolgateServer } from "../../src/server/server.ts";
import { ProgramService, ListProgramAccountsResponseSchema } from "../../gen/solgate/v1/program_service_pb.js";
import { ProgramAccountSchema } from "../../gen/solgate/v1/program_pb.js";
import { TransactionService, WatchStatusResponseSchema } from "../../gen/solgate/v1/transaction_service_pb.js";
import { FeeService } from "../../gen/solgate/v1/fee_service_pb.js";
import { CollectionService } from "../../gen/solgate/v1/collection_service_pb.js";

export const API_KEY = "test-key-0123456789abcdef";
export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
/** Program ids and a signature the fake handlers answer specially; shaped as the contract requires, so they reach them. */
export const BAD_PROGRAM = `Bad${"1".repeat(40)}`;
export const UPSTREAM_PROGRAM = `Upstream${"1".repeat(35)}`;
export const BUG_PROGRAM = `Bug${"1".repeat(40)}`;
export const SHORT_SIGNATURE = `Short${"1".repeat(83)}`;
export const SLOW_PROGRAM = `Paused${"1".repeat(37)}`;
export const LONG_SIGNATURE = `Long${"1".repeat(84)}`;
export const MISSING_SIGNATURE = `Missing${"1".repeat(81)}`;

/** Test routes: the four Solgate services, two with test-only behaviour. */
export function testRoutes(router: ConnectRouter): void {
  router.service(ProgramService, {
    async listProgramAccounts(req, ctx) {
      if (req.programId === SLOW_PROGRAM) {
        await new Promise((r) => setTimeout(r, Number(req.cursor || 300)));
      }
      if (req.programId === BAD_PROGRAM) {
        throw new SolgateError("INVALID_ADDRESS", "program_id is not a base58 address", {
          field: "program_id",
          logs: ["a", "b"],
        });
      }
      if (req.programId === UPSTREAM_PROGRAM) {
        throw new SolgateError("UPSTREAM_UNAVAILABLE", "mainnet upstream did not answer", {}, { retryAfterMs: 2500 });
      }
      if (req.programId === BUG_PROGRAM) throw new TypeError("secret internal detail");
      return create(ListProgramAccountsResponseSchema, {
        programId: req.programId,
        items: [
          create(ProgramAccountSchema, { address: TOKEN_PROGRAM, lamports: 1_000_000_000n, sol: 1, space: 165n }),
        ],
        nextCursor: ctx.requestHeader.get("x-request-id") ?? undefined,
      });
    },
  });
  router.service(TransactionService, {
    async *watchStatus(req, ctx) {
      for (let slot = 1n; !ctx.signal.aborted; slot++) {
        yield create(WatchStatusResponseSchema, { event: { case: "heartbeat", value: { slot } } });
        if (req.signature === SHORT_SIGNATURE && slot === 3n) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  });
  router.service(FeeService, {});
  router.service(CollectionService, {});
}

/** Collects log lines as parsed JSON objects. */
export function createLogSink(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

export interface TestServer {
  server: SolgateServer;
  listening: ListeningServer;
  url: string;
  port: number;
  metrics: Metrics;
  logs: Record<string, unknown>[];
}

/** Starts a test server on 127.0.0.1, port 0. */
export async function startTestServer(overrides: Partial<ServerOptions> = {}): Promise<TestServer> {
  const sink = createLogSink();
  const metrics = createMetrics(new Registry());
  const server = createServer({
    routes: testRoutes,
    auth: createApiKeyChecker([API_KEY, "second-key"]),
    logger: createLogger({ level: "info", destination: sink.stream }),
    metrics,
    ...overrides,
  });
  const listening = await server.listen(0, "127.0.0.1");
  return {
    server,
    listening,
    url: `http://127.0.0.1:${listening.port}`,
    port: listening.port,
    metrics,
    logs: sink.lines,
  };
}
