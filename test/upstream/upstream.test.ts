import { afterEach, describe, expect, it } from "vitest";
import { address, isSolanaError, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS } from "@solana/kit";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream, UpstreamOptions } from "../../src/upstream/upstream.ts";
import type { UpstreamOutcome } from "../../src/upstream/metrics.ts";
import { rpcErrorOf, isRpcErrorCode } from "../../src/upstream/rpc-errors.ts";
import { SolgateError } from "../../src/errors.ts";
import { fixtureText, startFaultServer } from "./fault-server.ts";
import type { FaultServer } from "./fault-server.ts";

const TOKEN = address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
const servers: FaultServer[] = [];
const upstreams: Upstream[] = [];

async function server(...args: Parameters<typeof startFaultServer>): Promise<FaultServer> {
  const s = await startFaultServer(...args);
  servers.push(s);
  return s;
}

function upstream(urls: string[], extra: Partial<UpstreamOptions> = {}): Upstream {
  const u = createUpstream({
    chain: "test",
    rpcUrls: urls,
    timeoutMs: 2000,
    maxRetries: 3,
    baseDelayMs: 20,
    maxDelayMs: 200,
    ...extra,
  });
  upstreams.push(u);
  return u;
}

async function failure(promise: Promise<unknown>): Promise<SolgateError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SolgateError);
  return error as SolgateError;
}

afterEach(async () => {
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("upstream over real HTTP with recorded node output", () => {
  it("keeps u64 values exact (rentEpoch u64::MAX, lamports) as bigint", async () => {
    const node = await server({ kind: "fixture", name: "getProgramAccounts.json" });
    const u = upstream([node.url]);
    const result = await u.rpc.getProgramAccounts(TOKEN, { encoding: "base64", withContext: true }).send();
    const recorded = fixtureText("getProgramAccounts.json");
    expect(recorded).toContain("18446744073709551615");
    expect(result.value.length).toBeGreaterThan(0);
    for (const { account } of result.value) {
      expect((account as unknown as { rentEpoch: bigint }).rentEpoch).toBe(18446744073709551615n);
      expect(typeof account.lamports).toBe("bigint");
    }
    expect(result.value[0].account.lamports).toBe(57962880n);
  });

  it("waits out Retry-After on 429, then succeeds", async () => {
    const node = await server();
    node.queue.push({ kind: "status", status: 429, headers: { "retry-after": "1" } });
    const u = upstream([node.url]);
    const info = await u.rpc.getEpochInfo().send();
    expect(info.epoch).toBe(837n);
    expect(node.seen).toHaveLength(2);
    expect(node.seen[1].at - node.seen[0].at).toBeGreaterThanOrEqual(950);
  });

  it("gives RATE_LIMITED with the delay once 429s outlast the retries", async () => {
    const node = await server({ kind: "status", status: 429, headers: { "retry-after": "0" } });
    const u = upstream([node.url], { maxRetries: 2 });
    const error = await failure(u.rpc.getEpochInfo().send());
    expect(error.reason).toBe("RATE_LIMITED");
    expect(error.retryAfterMs).toBe(0);
    expect(error.details.retryAfterMs).toBe(0);
    expect(node.seen).toHaveLength(3);
  });

  it("fails at once when Retry-After is longer than it will wait, passing the delay on", async () => {
    const node = await server({ kind: "status", status: 429, headers: { "retry-after": "120" } });
    const u = upstream([node.url]);
    const started = performance.now();
    const error = await failure(u.rpc.getEpochInfo().send());
    expect(error.reason).toBe("RATE_LIMITED");
    expect(error.retryAfterMs).toBe(120_000);
    expect(node.seen).toHaveLength(1);
    // Not the 120 s it was told to wait: a tenth of that is room enough on any machine.
    expect(performance.now() - started).toBeLessThan(12_000);
  });

  it("retries 503 with growing, jittered backoff", async () => {
    const node = await server();
    node.queue.push({ kind: "status", status: 503 }, { kind: "status", status: 503 }, { kind: "status", status: 503 });
    const u = upstream([node.url], { baseDelayMs: 50, maxDelayMs: 1000 });
    const info = await u.rpc.getEpochInfo().send();
    expect(info.absoluteSlot).toBe(361657817n);
    const gaps = node.seen.slice(1).map((r, i) => r.at - node.seen[i].at);
    expect(gaps).toHaveLength(3);
    // Steps of 50, 100, 200 ms with equal jitter: each gap at least half its step.
    expect(gaps[0]).toBeGreaterThanOrEqual(24);
    expect(gaps[1]).toBeGreaterThanOrEqual(49);
    expect(gaps[2]).toBeGreaterThanOrEqual(99);
    expect(gaps[2]).toBeGreaterThan(gaps[0]);
  });

  it("times out a stalled node, fails over, and remembers the healthy URL", async () => {
    const stalled = await server({ kind: "stall" });
    const healthy = await server();
    const u = upstream([stalled.url, healthy.url], { timeoutMs: 300 });
    const started = performance.now();
    await u.rpc.getEpochInfo().send();
    // The stalled node's attempt timed out (it never answers) and the healthy one answered; 10x the timeout.
    expect(performance.now() - started).toBeLessThan(3000);
    expect(stalled.seen).toHaveLength(1);
    expect(healthy.seen).toHaveLength(1);
    await u.rpc.getEpochInfo().send();
    await u.rpc.getEpochInfo().send();
    expect(stalled.seen).toHaveLength(1);
    expect(healthy.seen).toHaveLength(3);
  });

  it("retries after a connection reset", async () => {
    const node = await server();
    node.queue.push({ kind: "reset" });
    const u = upstream([node.url]);
    const info = await u.rpc.getEpochInfo().send();
    expect(info.epoch).toBe(837n);
    expect(node.seen).toHaveLength(2);
  });

  it("gives UPSTREAM_UNAVAILABLE with retryAfterMs when every URL keeps failing, without leaking the URL", async () => {
    const a = await server({ kind: "status", status: 503 });
    const b = await server({ kind: "reset" });
    const u = upstream([a.url, b.url], { maxRetries: 3 });
    const error = await failure(u.rpc.getEpochInfo().send());
    expect(error.reason).toBe("UPSTREAM_UNAVAILABLE");
    expect(error.retryAfterMs).toBeGreaterThan(0);
    expect(a.seen.length + b.seen.length).toBe(4);
    const text = JSON.stringify({ message: error.message, details: error.details });
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("secret-api-key-path");
    // Not even the origin: which provider a gateway uses, and where, is not the client's business.
    for (const origin of [new URL(a.url).host, new URL(b.url).host, "127.0.0.1"]) expect(text).not.toContain(origin);
  });

  it("tells a client that the upstream refused the connection without naming where it is", async () => {
    const a = await server({ kind: "status", status: 503 });
    const closed = new URL(a.url);
    await a.close();
    const u = upstream([closed.toString()], { maxRetries: 1 });
    const error = await failure(u.rpc.getEpochInfo().send());
    expect(error.reason).toBe("UPSTREAM_UNAVAILABLE");
    const text = JSON.stringify({ message: error.message, details: error.details });
    expect(text).not.toContain(closed.host);
    expect(text).not.toContain("127.0.0.1");
  });

  it("caps concurrent upstream calls", async () => {
    const node = await server({ kind: "fixture", name: "getEpochInfo.json", delayMs: 80 });
    const u = upstream([node.url], { maxConcurrency: 2 });
    // Distinct params so kit does not coalesce identical calls into one.
    const calls = Array.from({ length: 8 }, (_, i) => u.rpc.getEpochInfo({ minContextSlot: BigInt(i) }).send());
    await new Promise((r) => setTimeout(r, 20));
    expect(u.load()).toEqual({ active: 2, waiting: 6 });
    await Promise.all(calls);
    expect(node.seen).toHaveLength(8);
    expect(node.maxInFlight).toBe(2);
    expect(u.load()).toEqual({ active: 0, waiting: 0 });
  });

  it("keeps node JSON-RPC errors as kit SolanaErrors without retrying them", async () => {
    const node = await server({ kind: "fixture", name: "error_-32602_invalid_param_WrongSize.json" });
    const u = upstream([node.url]);
    const error = await u.rpc
      .getEpochInfo()
      .send()
      .catch((e: unknown) => e);
    expect(isSolanaError(error, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS)).toBe(true);
    expect(rpcErrorOf(error)).toEqual({ code: -32602, message: "Invalid param: WrongSize", data: undefined });
    expect(isRpcErrorCode(error, -32602)).toBe(true);
    expect(node.seen).toHaveLength(1);
  });

  it("exposes a preflight failure's raw data (err, logs) as the node sent it", async () => {
    const node = await server({
      kind: "fixture",
      name: "sendTransaction_-32002_preflight_Custom1_insufficient_lamports.json",
    });
    const u = upstream([node.url]);
    const error = await u.rpc
      .getEpochInfo()
      .send()
      .catch((e: unknown) => e);
    const info = rpcErrorOf(error);
    const recorded = JSON.parse(
      fixtureText("sendTransaction_-32002_preflight_Custom1_insufficient_lamports.json"),
    ).error;
    expect(info?.code).toBe(-32002);
    expect(info?.message).toBe(recorded.message);
    const data = info?.data as { err: unknown; logs: string[] };
    expect(data.err).toEqual({ InstructionError: [0n, { Custom: 1n }] });
    expect(data.logs).toEqual(recorded.data.logs);
  });

  it("fails over from a node that reports itself unhealthy (-32005)", async () => {
    const sick = await server({ kind: "fixture", name: "getHealth_error_-32005_node_unhealthy.json" });
    const well = await server();
    const u = upstream([sick.url, well.url]);
    const info = await u.rpc.getEpochInfo().send();
    expect(info.epoch).toBe(837n);
    expect(sick.seen).toHaveLength(1);
  });

  it("reports every attempt to the metrics hooks under a redacted label", async () => {
    const node = await server();
    node.queue.push({ kind: "status", status: 503 });
    const calls: [string, string][] = [];
    const results: [string, UpstreamOutcome, number, string][] = [];
    const u = upstream([node.url], {
      metrics: { onCall: (m, url) => calls.push([m, url]), onResult: (m, o, s, url) => results.push([m, o, s, url]) },
    });
    await u.rpc.getEpochInfo().send();
    const origin = new URL(node.url).origin;
    expect(calls).toEqual([
      ["getEpochInfo", origin],
      ["getEpochInfo", origin],
    ]);
    expect(results.map((r) => r[1])).toEqual(["http_error", "ok"]);
    expect(results.every((r) => r[2] >= 0 && r[2] < 5 && r[3] === origin)).toBe(true);
  });

  it("sends DAS calls to the DAS URL and returns their result", async () => {
    const rpcNode = await server();
    const dasNode = await server({
      kind: "json",
      body: '{"jsonrpc":"2.0","id":1,"result":{"total":1,"items":[{"id":"x"}]}}',
    });
    const u = upstream([rpcNode.url], { dasUrl: dasNode.url });
    const result = await u.das.call<{ total: number }>("getAssetsByGroup", { groupKey: "collection", groupValue: "x" });
    expect(result).toEqual({ total: 1, items: [{ id: "x" }] });
    expect(dasNode.seen.map((r) => r.method)).toEqual(["getAssetsByGroup"]);
    expect(rpcNode.seen).toHaveLength(0);
  });

  it("surfaces a DAS error code kit does not know (-32000 Asset Not Found) as the node's error, not a TypeError", async () => {
    const dasNode = await server({
      kind: "json",
      body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Database Error: RecordNotFound Error: Asset Not Found"}}',
    });
    const u = upstream([dasNode.url]);
    const error = await u.das.call("getAsset", { id: "x" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).not.toBeInstanceOf(TypeError);
    expect(rpcErrorOf(error)).toMatchObject({
      code: -32000,
      message: "Database Error: RecordNotFound Error: Asset Not Found",
    });
  });

  it("fails calls in flight with UPSTREAM_UNAVAILABLE on close, and refuses new ones", async () => {
    const node = await server({ kind: "stall" });
    const u = upstream([node.url], { timeoutMs: 10_000 });
    const pending = failure(u.rpc.getEpochInfo().send());
    await new Promise((r) => setTimeout(r, 50));
    await u.close();
    expect((await pending).reason).toBe("UPSTREAM_UNAVAILABLE");
    expect((await failure(u.rpc.getEpochInfo().send())).reason).toBe("UPSTREAM_UNAVAILABLE");
  });
});
