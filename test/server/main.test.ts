/**
 * The composition root against a remote chain whose node does not answer: the whole stack, from
 * config to the upstream, turns that into UNAVAILABLE with a retry hint, never INTERNAL.
 */
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema, RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { ProgramService } from "../../gen/solgate/v1/program_service_pb.js";
import { loadConfig } from "../../src/config.ts";
import { startGateway } from "../../src/main.ts";
import type { Gateway } from "../../src/main.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createLogSink, TOKEN_PROGRAM } from "./helpers.ts";

/** A port that refuses connections: bound, then closed. */
async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

let gateway: Gateway;
beforeAll(async () => {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    SOLGATE_RPC_URL: `http://127.0.0.1:${await deadPort()}`,
    SOLGATE_CHAIN: "mainnet",
    SOLGATE_API_KEYS: "main-test-key",
    SOLGATE_UPSTREAM_MAX_RETRIES: "1",
    SOLGATE_UPSTREAM_TIMEOUT_MS: "500",
    SOLGATE_SEND_URLS: `http://127.0.0.1:${await deadPort()}`,
    SOLGATE_JITO_URL: `http://127.0.0.1:${await deadPort()}/api/v1`,
  });
  gateway = await startGateway(config, createLogger({ level: "info", destination: createLogSink().stream }));
});
afterAll(() => gateway.close());

describe("startGateway", () => {
  const client = () =>
    createClient(ProgramService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${gateway.port}` }));
  const headers = { Authorization: "Bearer main-test-key" };

  it("answers UNAVAILABLE with RetryInfo when the chain's node is down", async () => {
    const err = await client()
      .listProgramAccounts(
        { programId: TOKEN_PROGRAM, match: ["0:So11111111111111111111111111111111111111112"] },
        { headers },
      )
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(err?.code).toBe(Code.Unavailable);
    expect(err?.findDetails(ErrorInfoSchema)[0]?.reason).toBe("UPSTREAM_UNAVAILABLE");
    expect(err?.findDetails(RetryInfoSchema)).toHaveLength(1);
  });

  it("answers UNKNOWN_CHAIN naming the chains served", async () => {
    const err = await client()
      .listProgramAccounts({ chain: "devnet", programId: TOKEN_PROGRAM }, { headers })
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(err?.code).toBe(Code.NotFound);
    expect(err?.rawMessage).toBe('unknown chain "devnet"; this server serves: mainnet');
    expect(err?.findDetails(ErrorInfoSchema)[0]?.metadata.served).toBe('["mainnet"]');
  });

  it("serves upstream metrics on the metrics port", async () => {
    const text = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
    expect(text).toMatch(/solgate_upstream_requests_total\{chain="mainnet",[^}]*outcome="network_error"\} [1-9]/);
  });

  it("reports the dead chain's upstream unhealthy, and no fee-window age (its window never moved)", async () => {
    const text = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
    expect(text).toContain('solgate_upstream_healthy{chain="mainnet"} 0');
    expect(text).not.toContain('solgate_fee_window_age_seconds{chain="mainnet"}');
    expect(text).toContain('solgate_tracked_sends{chain="mainnet",state="submitted"} 0');
  });

  it("builds the chain's send paths from SOLGATE_SEND_URLS and SOLGATE_JITO_URL, each with its breaker gauge", async () => {
    const text = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
    expect(text).toMatch(/solgate_send_path_breaker_state\{chain="mainnet",path="rpc:http:\/\/127\.0\.0\.1:\d+#0"\} 0/);
    expect(text).toMatch(
      /solgate_send_path_breaker_state\{chain="mainnet",path="jito:http:\/\/127\.0\.0\.1:\d+#1"\} 0/,
    );
  });
});
