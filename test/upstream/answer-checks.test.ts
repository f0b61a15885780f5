/**
 * The checks every upstream answer passes at the boundary, over real HTTP (the fault server, and a node
 * that streams without end): the schema per method and u64 bounds, failover and the breaker's count, the
 * refusal log (where, never what), the size cap while reading, and a lagging node.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SolgateError } from "../../src/errors.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream, UpstreamOptions } from "../../src/upstream/upstream.ts";
import type { RefusedAnswer } from "../../src/upstream/resilient-transport.ts";
import { startFaultServer } from "./fault-server.ts";
import type { FaultServer } from "./fault-server.ts";

const nodes: FaultServer[] = [];
const upstreams: Upstream[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
  await Promise.all(nodes.splice(0).map((n) => n.close()));
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function node(body: string): Promise<FaultServer> {
  const n = await startFaultServer({ kind: "json", body });
  nodes.push(n);
  return n;
}

function upstream(urls: string[], extra: Partial<UpstreamOptions> = {}): Upstream {
  const u = createUpstream({ chain: "test", rpcUrls: urls, wsUrl: null, baseDelayMs: 5, maxDelayMs: 20, ...extra });
  upstreams.push(u);
  return u;
}

const slot = (value: string) => `{"jsonrpc":"2.0","id":1,"result":${value}}`;
const failureOf = (e: unknown) => ({
  reason: (e as SolgateError).reason,
  failure: (e as SolgateError).details?.failure,
  path: (e as SolgateError).details?.path,
});

describe("the schema of each answer", () => {
  it("refuses a wrong type as UPSTREAM_INVALID_RESPONSE, naming where in the answer, and logs no body", async () => {
    const bad = await node(slot('"not a slot"'));
    const refused: RefusedAnswer[] = [];
    const u = upstream([bad.url], { maxRetries: 1, onRefused: (r) => refused.push(r) });
    const e = await u.rpc
      .getSlot()
      .send()
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SolgateError);
    expect(failureOf(e)).toEqual({ reason: "UPSTREAM_INVALID_RESPONSE", failure: "invalid_response", path: "result" });
    expect(bad.seen).toHaveLength(2); // retried
    expect(refused[0]).toMatchObject({ method: "getSlot", endpoint: new URL(bad.url).origin, path: "result" });
    expect(JSON.stringify(refused)).not.toContain("not a slot");
    expect(JSON.stringify(refused)).not.toContain("hunter2");
  });

  it("takes u64s up to 2^64 - 1 and refuses one past it or below zero", async () => {
    expect(
      await upstream([(await node(slot("18446744073709551615"))).url])
        .rpc.getSlot()
        .send(),
    ).toBe(2n ** 64n - 1n);
    for (const value of ["18446744073709551616", "18446744073709551616999", "-1"]) {
      const e = await upstream([(await node(slot(value))).url], { maxRetries: 0 })
        .rpc.getSlot()
        .send()
        .catch((x: unknown) => x);
      expect(failureOf(e).reason).toBe("UPSTREAM_INVALID_RESPONSE");
    }
  });

  it("finds the first mismatch deep in an answer (a negative fee in a list)", async () => {
    const bad = await node(slot('[{"slot":5,"prioritizationFee":0},{"slot":6,"prioritizationFee":-3}]'));
    const e = await upstream([bad.url], { maxRetries: 0 })
      .rpc.getRecentPrioritizationFees()
      .send()
      .catch((x: unknown) => x);
    expect(failureOf(e)).toMatchObject({ reason: "UPSTREAM_INVALID_RESPONSE", path: "result.1.prioritizationFee" });
  });

  it("fails over to the next URL, and the refusing URL's breaker counts it", async () => {
    const bad = await node('{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":5}}}'); // value missing
    const good = await node('{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":5},"value":true}}');
    const u = upstream([bad.url, good.url], { breaker: { consecutiveFailures: 2, failureRatio: 1 } });
    for (let i = 0; i < 2; i++) {
      const { value } = await u.rpc.isBlockhashValid("11111111111111111111111111111111" as never).send();
      expect(value).toBe(true);
    }
    // The first call tried the bad URL and moved on; the second started at the good one (it answered last).
    expect(bad.seen.length).toBeGreaterThanOrEqual(1);
    // Two refusals in a row open it.
    const only = upstream([bad.url], { maxRetries: 3, breaker: { consecutiveFailures: 2, failureRatio: 1 } });
    await only.rpc
      .isBlockhashValid("11111111111111111111111111111111" as never)
      .send()
      .catch(() => {});
    expect(only.breakers()[0].state).toBe("open");
  });
});

describe("the size of an answer", () => {
  it("drops a connection streaming without end once past the cap, without reading on", async () => {
    let written = 0;
    let closed = false;
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }); // no Content-Length
      res.write('{"jsonrpc":"2.0","id":1,"result":[');
      const chunk = Buffer.from('"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",'.repeat(1024));
      const pump = () => {
        while (!res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
      };
      res.on("close", () => {
        closed = true;
      });
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cap = 1024 * 1024;
    const u = upstream([url], { maxResponseBytes: cap, maxRetries: 0, budgetMs: 30_000 });
    const e = await u.rpc
      .getRecentPrioritizationFees()
      .send()
      .catch((x: unknown) => x);
    expect(failureOf(e)).toMatchObject({ reason: "UPSTREAM_INVALID_RESPONSE", failure: "response_too_large" });
    expect((e as SolgateError).details.limit).toBe(cap);
    await new Promise((r) => setTimeout(r, 200));
    expect(closed).toBe(true);
    // The cap, plus what the sockets' buffers held when it was reached: far from "without end".
    expect(written).toBeLessThan(16 * cap);
  });

  it("reads an answer up to the cap", async () => {
    const items = Array.from({ length: 2000 }, (_, i) => `{"slot":${i},"prioritizationFee":1}`).join(",");
    const ok = await node(slot(`[${items}]`));
    const fees = await upstream([ok.url], { maxResponseBytes: 1024 * 1024 })
      .rpc.getRecentPrioritizationFees()
      .send();
    expect(fees).toHaveLength(2000);
  });
});

describe("a lagging or lying node", () => {
  it("refuses a slot that went back, and a status for a slot the node has not reached", async () => {
    const n = await node(slot("1000"));
    const u = upstream([n.url], { maxRetries: 0 });
    expect(await u.rpc.getSlot().send()).toBe(1000n);
    n.fallback = { kind: "json", body: slot("995") }; // a few back: jitter, taken
    expect(await u.rpc.getSlot().send()).toBe(995n);
    n.fallback = { kind: "json", body: slot("900") };
    expect(
      failureOf(
        await u.rpc
          .getSlot()
          .send()
          .catch((x: unknown) => x),
      ),
    ).toMatchObject({
      reason: "UPSTREAM_UNAVAILABLE",
      failure: "node_lagging",
    });
    n.fallback = {
      kind: "json",
      body: '{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":1001},"value":[{"slot":2001,"confirmations":null,"err":null,"confirmationStatus":"finalized"}]}}',
    };
    const e = await u.rpc
      .getSignatureStatuses(["1111111111111111111111111111111111111111111111111111111111111111" as never])
      .send()
      .catch((x: unknown) => x);
    expect(failureOf(e).failure).toBe("node_lagging");
  });

  it("refuses a blockhash valid further ahead than the node's slot allows", async () => {
    const answer = (height: number) =>
      `{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":5000},"value":{"blockhash":"GHtXQBsoZHVnNFa9YevAzFr17DJjgHXk3ycTKD5xD3Zi","lastValidBlockHeight":${height}}}}`;
    const n = await node(answer(4900));
    const u = upstream([n.url], { maxRetries: 0 });
    expect((await u.rpc.getLatestBlockhash().send()).value.lastValidBlockHeight).toBe(4900n);
    n.fallback = { kind: "json", body: answer(105_000) };
    const e = await u.rpc
      .getLatestBlockhash()
      .send()
      .catch((x: unknown) => x);
    expect(failureOf(e).failure).toBe("node_lagging");
  });
});
