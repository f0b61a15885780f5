/**
 * The whole stack in front of a stalled node (a TCP server that accepts and never answers): a call fails
 * UNAVAILABLE within the upstream budget, not after every attempt's full timeout; a client deadline
 * shorter than the budget wins with DEADLINE_EXCEEDED.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema, RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { AccountService } from "../../gen/solgate/v1/account_service_pb.js";
import { loadConfig } from "../../src/config.ts";
import { startGateway } from "../../src/main.ts";
import type { Gateway } from "../../src/main.ts";
import { createLogger } from "../../src/server/logger.ts";
import { startStalledNode } from "../upstream/stalled-node.ts";
import type { StalledNode } from "../upstream/stalled-node.ts";
import { createLogSink } from "./helpers.ts";

const KEY = "budget-test-key";
const headers = { Authorization: `Bearer ${KEY}` };
const ADDRESS = "So11111111111111111111111111111111111111112";
let node: StalledNode;
let gateway: Gateway;

beforeAll(async () => {
  node = await startStalledNode();
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    SOLGATE_RPC_URL: node.url,
    SOLGATE_WS_URL: "off",
    SOLGATE_CHAIN: "stalled",
    SOLGATE_API_KEYS: KEY,
    // The defaults a tester met: 15 s per attempt, 3 retries; a budget of 1.5 s over them.
    SOLGATE_UPSTREAM_TIMEOUT_MS: "15000",
    SOLGATE_UPSTREAM_MAX_RETRIES: "3",
    SOLGATE_UPSTREAM_BUDGET_MS: "1500",
    // The fee market's background reads would open the breaker before the calls under test: not here.
    SOLGATE_UPSTREAM_BREAKER_FAILURES: "1000",
    SOLGATE_UPSTREAM_BREAKER_FAILURE_PERCENT: "100",
  });
  gateway = await startGateway(config, createLogger({ level: "info", destination: createLogSink().stream }));
});
afterAll(async () => {
  await gateway.close();
  await node.close();
});

async function timed(call: () => Promise<unknown>): Promise<{ err: ConnectError | undefined; ms: number }> {
  const started = performance.now();
  const err = await call().then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  return { err, ms: performance.now() - started };
}

describe("a stalled upstream", () => {
  it("fails a call UNAVAILABLE with RetryInfo when the budget is spent (1.5 s, not 4 x 15 s)", async () => {
    const client = createClient(AccountService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${gateway.port}` }));
    const { err, ms } = await timed(() => client.getAccount({ address: ADDRESS }, { headers }));
    expect(err?.code).toBe(Code.Unavailable);
    expect(err?.findDetails(ErrorInfoSchema)[0]?.reason).toBe("UPSTREAM_UNAVAILABLE");
    expect(err?.findDetails(ErrorInfoSchema)[0]?.metadata.failure).toBe("budget_spent");
    expect(err?.findDetails(RetryInfoSchema)).toHaveLength(1);
    expect(err?.rawMessage).not.toContain("127.0.0.1");
    // `budget_spent` above says the budget ended it; this only rules out the four 15 s attempts (60 s), with
    // 10x the budget's room on a loaded machine.
    expect(ms).toBeLessThan(15_000);
  }, 30_000);

  it("lets a client deadline shorter than the budget win: DEADLINE_EXCEEDED", async () => {
    // The deadline travels as the header alone (no timer in the client), so the answer is the gateway's: its
    // deadline cut the call, where the budget (1.5 s) would have answered `unavailable`.
    const res = await fetch(`http://127.0.0.1:${gateway.port}/solgate.v1.AccountService/GetAccount`, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        "connect-protocol-version": "1",
        "connect-timeout-ms": "300",
      },
      body: JSON.stringify({ address: ADDRESS }),
    });
    const body = (await res.json()) as { code?: string; message?: string };
    expect(body.code, JSON.stringify(body)).toBe("deadline_exceeded");
    expect(res.status).toBe(504);
  }, 20_000);
});
