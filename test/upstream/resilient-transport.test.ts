/**
 * The time budget and the circuit breakers of the resilient transport, against real things: a stalled
 * node (a TCP server that accepts and never answers), a refusing one (a closed port) and a healthy one
 * (the real localnet, a child process).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import { startRelay } from "./tcp-relay.ts";
import { SolgateError } from "../../src/errors.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream, UpstreamOptions } from "../../src/upstream/upstream.ts";
import type { BreakerState } from "../../src/upstream/endpoint-breaker.ts";
import { refusingUrl, startStalledNode } from "./stalled-node.ts";
import type { StalledNode } from "./stalled-node.ts";

let localnet: LocalnetHandle;
const stalledNodes: StalledNode[] = [];
const upstreams: Upstream[] = [];

beforeAll(async () => {
  localnet = await startLocalnet({ slotMs: 50 });
});
afterAll(() => localnet.stop());
afterEach(async () => {
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
  await Promise.all(stalledNodes.splice(0).map((s) => s.close()));
});

async function stalled(): Promise<StalledNode> {
  const node = await startStalledNode();
  stalledNodes.push(node);
  return node;
}

function upstream(urls: string[], extra: Partial<UpstreamOptions> = {}): Upstream {
  const u = createUpstream({ chain: "test", rpcUrls: urls, wsUrl: null, baseDelayMs: 20, maxDelayMs: 200, ...extra });
  upstreams.push(u);
  return u;
}

/** The SolgateError a call fails with, and how long it took. */
async function timedFailure(call: () => Promise<unknown>): Promise<{ error: SolgateError; ms: number }> {
  const started = performance.now();
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  const ms = performance.now() - started;
  expect(error).toBeInstanceOf(SolgateError);
  return { error: error as SolgateError, ms };
}

describe("the time budget of a call", () => {
  it("fails a call to a stalled node within its budget, with UPSTREAM_UNAVAILABLE and no origin", async () => {
    const node = await stalled();
    // Without a budget: 4 attempts of 15 s each, a minute; with one of 1.5 s, about 1.5 s.
    const u = upstream([node.url], { timeoutMs: 15_000, maxRetries: 3, budgetMs: 1500 });
    const { error, ms } = await timedFailure(() => u.rpc.getSlot().send());
    // `budget_spent` says the budget ended it; the bound, 10x the budget, only rules out the four 15 s attempts.
    expect(ms).toBeGreaterThanOrEqual(1400);
    expect(ms).toBeLessThan(15_000);
    expect(error.reason).toBe("UPSTREAM_UNAVAILABLE");
    expect(error.details).toMatchObject({ failure: "budget_spent", lastFailure: "timeout", budgetMs: 1500 });
    expect(error.retryAfterMs).toBeGreaterThan(0);
    expect(error.message).toMatch(/within 1500 ms/);
    expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain("127.0.0.1");
  }, 30_000);

  it("fails over from a stalled first URL to the live localnet within the budget", async () => {
    const node = await stalled();
    const u = upstream([node.url, localnet.rpcUrl], { timeoutMs: 60_000, budgetMs: 4000 });
    const started = performance.now();
    // The stalled URL gets the attempt timeout shrunk to its share of the budget (about 2 s): the failover must
    // not wait the 60 s attempt timeout. The bound is 10x that share.
    const slot = await u.rpc.getSlot().send();
    expect(typeof slot).toBe("bigint");
    expect(node.connections()).toBe(1);
    expect(performance.now() - started).toBeLessThan(20_000);
  }, 30_000);

  it("fails DAS calls over from a stalled first DAS URL to the live localnet", async () => {
    const node = await stalled();
    const u = upstream([localnet.rpcUrl], { dasUrl: [node.url, localnet.rpcUrl], timeoutMs: 60_000, budgetMs: 4000 });
    const started = performance.now();
    const page = await u.das.call<{ items: unknown[] }>("getAssetsByOwner", {
      ownerAddress: "So11111111111111111111111111111111111111112",
      page: 1,
      limit: 10,
    });
    expect(Array.isArray(page.items)).toBe(true);
    expect(node.connections()).toBe(1);
    // Not the 60 s attempt timeout: 10x the stalled URL's share of the budget (about 2 s).
    expect(performance.now() - started).toBeLessThan(20_000);
  }, 30_000);

  it("fails a refused connection fast, naming the failure, not the place", async () => {
    const url = await refusingUrl();
    const u = upstream([url], { maxRetries: 2, budgetMs: 5000 });
    const { error } = await timedFailure(() => u.rpc.getSlot().send());
    // Fast: the refusals ended it (three attempts, no waiting), not the 5 s budget.
    expect(error.reason).toBe("UPSTREAM_UNAVAILABLE");
    expect(error.details).toMatchObject({ failure: "network_error" }); // not budget_spent
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).not.toContain(new URL(url).host);
  });

  it("honours a caller's deadline shorter than the budget", async () => {
    const node = await stalled();
    const u = upstream([node.url], { timeoutMs: 15_000, budgetMs: 10_000 });
    const started = performance.now();
    const error = await u.rpc
      .getSlot()
      .send({ abortSignal: AbortSignal.timeout(300) })
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    // The caller's own signal's reason: its deadline ended the call, not the 10 s budget (UPSTREAM_UNAVAILABLE).
    expect(error?.name).toBe("TimeoutError");
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe("the circuit breaker of each URL", () => {
  it("opens after consecutive failures; then calls skip the URL without connecting, and fail fast with a retry hint", async () => {
    const node = await stalled();
    const states: BreakerState[] = [];
    const u = upstream([node.url], {
      timeoutMs: 200,
      maxRetries: 0,
      budgetMs: 1000,
      breaker: { consecutiveFailures: 3, firstHalfOpenAfterMs: 60_000, halfOpenAfterMs: 60_000 },
      metrics: { onCall() {}, onResult() {}, onBreakerState: (_url, state) => states.push(state) },
    });
    for (let i = 0; i < 3; i++) await timedFailure(() => u.rpc.getSlot().send());
    expect(node.connections()).toBe(3);
    expect(u.breakers()).toEqual([{ endpoint: new URL(node.url).origin, state: "open" }]);
    expect(u.reachable()).toBe(false);
    expect(states).toEqual(["closed", "open"]);

    // Fails fast: without connecting (the count stays 3) and named circuit_open, not a timeout.
    const { error } = await timedFailure(() => u.rpc.getSlot().send());
    expect(node.connections()).toBe(3);
    expect(error.reason).toBe("UPSTREAM_UNAVAILABLE");
    expect(error.details).toMatchObject({ failure: "circuit_open" });
    // The hint is the time left until the breaker lets a probe through (about a minute here).
    expect(error.retryAfterMs).toBeGreaterThan(50_000);
  });

  it("lets failover skip an open URL at once and serve from the next", async () => {
    const node = await stalled();
    const u = upstream([node.url, localnet.rpcUrl], {
      timeoutMs: 300,
      breaker: { consecutiveFailures: 1, halfOpenAfterMs: 60_000 },
    });
    await u.rpc.getSlot().send(); // the stalled URL fails once (its breaker opens), the localnet answers
    expect(node.connections()).toBe(1);
    expect(u.breakers().map((b) => b.state)).toEqual(["open", "closed"]);
    expect(u.reachable()).toBe(true);
    const fresh = upstream([node.url, localnet.rpcUrl], {
      timeoutMs: 300,
      breaker: { consecutiveFailures: 1, halfOpenAfterMs: 60_000 },
    });
    await fresh.rpc.getSlot().send();
    expect(node.connections()).toBe(2);
    // Within the first upstream, every further call goes straight to the live URL (none reaches the stalled one).
    for (let i = 0; i < 5; i++) await u.rpc.getSlot().send();
    expect(node.connections()).toBe(2);
    expect(u.breakers().map((b) => b.state)).toEqual(["open", "closed"]);
  });

  it("half-opens after the cool-down: one probe goes through, and a node that answers again closes it", async () => {
    const url = await refusingUrl();
    const port = Number(new URL(url).port);
    // A cool-down long enough that the localnet's start (seconds on a loaded machine) ends inside it.
    const u = upstream([url], {
      maxRetries: 0,
      breaker: { consecutiveFailures: 2, firstHalfOpenAfterMs: 20_000, halfOpenAfterMs: 20_000 },
    });
    for (let i = 0; i < 2; i++) await timedFailure(() => u.rpc.getSlot().send());
    expect(u.breakers()[0].state).toBe("open");
    // The node comes back on the same port: the real localnet.
    const revived = await startLocalnet({ slotMs: 50, port });
    try {
      // Still cooling down: the node is back, but the breaker does not know it yet.
      const { error } = await timedFailure(() => u.rpc.getSlot().send());
      expect(error.details).toMatchObject({ failure: "circuit_open" });
      await new Promise((r) => setTimeout(r, (error.retryAfterMs ?? 0) + 50));
      expect(typeof (await u.rpc.getSlot().send())).toBe("bigint");
      expect(u.breakers()[0].state).toBe("closed");
      expect(u.reachable()).toBe(true);
    } finally {
      await revived.stop();
    }
  }, 60_000);

  it("probes an open breaker itself when its cool-down ends: with no call of its own, reachable (ready) again once the node answers", async () => {
    const relay = await startRelay(new URL(localnet.rpcUrl));
    try {
      const u = upstream([relay.url], {
        maxRetries: 0,
        breaker: { consecutiveFailures: 2, firstHalfOpenAfterMs: 200 },
      });
      relay.down();
      for (let i = 0; i < 2; i++) await timedFailure(() => u.rpc.getSlot().send());
      expect(u.reachable()).toBe(false);
      // Still down at the first probe (200 ms): it fails and the breaker opens again, for 400 ms.
      await new Promise((r) => setTimeout(r, 500));
      expect(u.reachable()).toBe(false);
      relay.up();
      const back = performance.now();
      while (!u.reachable()) {
        expect(performance.now() - back, "never probed: no call came").toBeLessThan(5000);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(u.breakers()[0].state).toBe("closed");
    } finally {
      await relay.close();
    }
  }, 30_000);

  it("uses a node back from a short outage again within about a second (the first cool-down), not after 10 s", async () => {
    const relay = await startRelay(new URL(localnet.rpcUrl));
    try {
      // The defaults but for the run that opens it: the first cool-down is 1 s, the longest 10 s.
      const u = upstream([relay.url], { maxRetries: 0, breaker: { consecutiveFailures: 2 } });
      relay.down();
      for (let i = 0; i < 2; i++) await timedFailure(() => u.rpc.getSlot().send());
      expect(u.breakers()[0].state).toBe("open");
      relay.up();
      const back = performance.now();
      for (;;) {
        const answered = await u.rpc
          .getSlot()
          .send()
          .then(() => true)
          .catch(() => false);
        if (answered) break;
        expect(performance.now() - back, "still skipping the node that is back").toBeLessThan(5000);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(u.breakers()[0].state).toBe("closed");
    } finally {
      await relay.close();
    }
  }, 30_000);
});
