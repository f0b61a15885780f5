/**
 * Per-key rate limits across a fleet: three gateway processes sharing a real Redis count one key's
 * requests together, so the key gets its limit once, not three times; each over-limit call is
 * RESOURCE_EXHAUSTED (ErrorInfo RATE_LIMITED, RetryInfo) over gRPC and 429 with Retry-After over REST.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { FeeService } from "../../gen/solgate/v1/fee_service_pb.js";
import { ErrorInfoSchema, RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { startRedisServer } from "../store/redis-server.ts";
import { startGatewayProcess } from "./fleet-harness.ts";
import type { GatewayProcess } from "./fleet-harness.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

const LIMITED = "limited-key-0123456789";
const FREE = "free-key-0123456789";

/** Gateways over a remote chain nobody answers (GetFees answers from memory), keys from a structured file. */
async function gateways(count: number, redisUrl: string | undefined): Promise<GatewayProcess[]> {
  const dir = mkdtempSync(join(tmpdir(), "solgate-keys-"));
  const file = join(dir, "keys.json");
  writeFileSync(
    file,
    JSON.stringify({
      keys: [
        { name: "alice", key: LIMITED, rateLimit: "12/m" },
        { name: "bob", key: FREE, rateLimit: null },
      ],
    }),
  );
  const started = await Promise.all(
    Array.from({ length: count }, () =>
      startGatewayProcess({
        rpcUrl: "http://127.0.0.1:9",
        wsUrl: "ws://127.0.0.1:9",
        chain: "mainnet",
        ...(redisUrl === undefined ? {} : { redisUrl }),
        extra: { SOLGATE_API_KEYS_FILE: file, SOLGATE_API_KEYS: "", SOLGATE_RATE_LIMIT: "1/m" },
      }),
    ),
  );
  for (const g of started) cleanups.push(() => g.kill());
  return started;
}

async function restFees(url: string, key: string): Promise<Response> {
  return fetch(`${url}/v1/mainnet/network/fees`, { headers: { authorization: `Bearer ${key}` } });
}

describe("per-key rate limits", () => {
  it("count a key once across three replicas sharing Redis", async () => {
    const redis = await startRedisServer();
    cleanups.push(() => redis.stop());
    const fleet = await gateways(3, redis.url);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await restFees(fleet[i % 3].url, LIMITED)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(12);
    expect(statuses.filter((s) => s === 429)).toHaveLength(18);

    const refused = await restFees(fleet[0].url, LIMITED);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await refused.json()) as { code: string }).code).toBe("rate_limited");

    // gRPC: RESOURCE_EXHAUSTED with the reason and a retry delay.
    const client = createClient(FeeService, createGrpcTransport({ baseUrl: fleet[1].url }));
    const error = await client.getFees({}, { headers: { authorization: `Bearer ${LIMITED}` } }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.findDetails(ErrorInfoSchema)[0]?.reason).toBe("RATE_LIMITED");
    expect(error?.findDetails(RetryInfoSchema)[0]?.retryDelay?.seconds).toBeGreaterThan(0n);

    // A key with no limit (null overrides SOLGATE_RATE_LIMIT) is never refused.
    for (let i = 0; i < 20; i++) expect((await restFees(fleet[i % 3].url, FREE)).status).toBe(200);

    // Logs and metrics name keys, never show them.
    const logs = fleet.map((g) => g.logs()).join("");
    const metrics = (
      await Promise.all(fleet.map((g) => fetch(`http://127.0.0.1:${g.metricsPort}/metrics`).then((r) => r.text())))
    ).join("");
    expect(logs).toContain('"alice"');
    expect(metrics).toContain('"alice"');
    for (const text of [logs, metrics]) {
      expect(text).not.toContain(LIMITED);
      expect(text).not.toContain(FREE);
    }
  }, 120_000);

  it("count per process without Redis", async () => {
    const [one, two] = await gateways(2, undefined);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await restFees(i % 2 === 0 ? one.url : two.url, LIMITED)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(24);
  }, 120_000);
});
