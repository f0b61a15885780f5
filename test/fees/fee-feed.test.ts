/**
 * The fee feed's publication rules (a change of levels, odds or source; at most one per slot; heartbeats
 * when idle) and its watches (current estimate at once, a slow reader skips to the newest, shared objects).
 */
import { describe, expect, it } from "vitest";
import { createFeeFeed } from "../../src/fees/fee-feed.ts";
import type { FeeFeedEvent } from "../../src/fees/fee-feed.ts";
import type { FeeEstimate, FeeSource } from "../../src/fees/fee-estimate.ts";

function estimate(slot: bigint, medium: bigint, source: FeeSource = "blocks", extra: object = {}): FeeEstimate {
  return {
    priority: {
      low: 1n,
      medium,
      high: medium * 2n,
      veryHigh: medium * 3n,
      recommended: medium,
      unit: "microLamportsPerComputeUnit",
    },
    baseFee: { lamportsPerSignature: 5000n, signatures: 1, lamports: 5000n },
    updatedAt: new Date(Number(slot) * 400),
    source,
    slot,
    windowSlots: 150,
    sampleSize: Number(slot),
    writableAccounts: [],
    ...extra,
  };
}

/** Reads `n` events from a watch, then stops it. */
async function take(watch: AsyncGenerator<FeeFeedEvent>, n: number): Promise<FeeFeedEvent[]> {
  const got: FeeFeedEvent[] = [];
  for await (const event of watch) {
    got.push(event);
    if (got.length === n) break;
  }
  return got;
}

describe("publication", () => {
  it("publishes a change of the levels in a newer slot, and nothing when only the slot moves", () => {
    const feed = createFeeFeed();
    expect(feed.offer(estimate(10n, 100n))).toBe(true);
    expect(feed.offer(estimate(11n, 100n))).toBe(false); // same levels, new slot, sample and time
    expect(feed.latest()!.slot).toBe(10n);
    expect(feed.offer(estimate(12n, 120n))).toBe(true);
    expect(feed.latest()!.slot).toBe(12n);
  });

  it("publishes at most one estimate per slot; a change held back goes out with the next slot", () => {
    const feed = createFeeFeed();
    feed.offer(estimate(10n, 100n));
    expect(feed.offer(estimate(10n, 150n))).toBe(false);
    expect(feed.latest()!.priority!.medium).toBe(100n);
    expect(feed.offer(estimate(11n, 150n))).toBe(true);
    expect(feed.latest()!.priority!.medium).toBe(150n);
  });

  it("publishes a change of source at once, and a change in fields it does not know (odds)", () => {
    const feed = createFeeFeed();
    feed.offer(estimate(10n, 100n));
    expect(feed.offer(estimate(10n, 100n, "recentPrioritizationFees"))).toBe(true);
    feed.offer(estimate(11n, 100n, "blocks", { odds: [0.5] }));
    expect(feed.offer(estimate(12n, 100n, "blocks", { odds: [0.6] }))).toBe(true);
    expect(feed.offer(estimate(13n, 100n, "blocks", { odds: [0.6] }))).toBe(false);
  });

  it("publishes a change of the tip levels in a newer slot, not a new read of the same ones", () => {
    const tips = (p50: bigint, at: number, sampleSize = 0) => ({
      tips: {
        p25: 1_000n,
        p50,
        p75: p50,
        p95: p50,
        p99: p50,
        source: "blockEngine",
        sampleSize,
        updatedAt: new Date(at),
      },
    });
    const feed = createFeeFeed();
    feed.offer(estimate(10n, 100n));
    expect(feed.offer(estimate(11n, 100n, "blocks", tips(5_000n, 1)))).toBe(true); // levels became known
    expect(feed.offer(estimate(12n, 100n, "blocks", tips(5_000n, 2, 7)))).toBe(false); // read again, same levels
    expect(feed.offer(estimate(12n, 100n, "blocks", tips(9_000n, 3)))).toBe(true);
    expect(feed.offer(estimate(12n, 100n, "blocks", tips(12_000n, 4)))).toBe(false); // same slot: waits
    expect(feed.latest()!.tips!.p50).toBe(9_000n);
    expect(feed.offer(estimate(13n, 100n, "blocks", tips(12_000n, 4)))).toBe(true);
    expect(feed.latest()!.tips!.p50).toBe(12_000n);
    expect(feed.offer(estimate(14n, 100n))).toBe(true); // levels unknown again
    expect(feed.latest()!.tips).toBeUndefined();
  });

  it("sends a heartbeat with the newest slot after the interval without events", async () => {
    let clock = 0;
    const feed = createFeeFeed({ heartbeatMs: 1000, now: () => clock });
    feed.offer(estimate(10n, 100n));
    const watch = feed.watch(new AbortController().signal);
    expect((await watch.next()).value).toMatchObject({ kind: "estimate" });
    clock = 999;
    expect(feed.offer(estimate(12n, 100n))).toBe(false);
    clock = 1000;
    expect(feed.offer(estimate(13n, 100n))).toBe(true);
    expect(await take(watch, 1)).toEqual([{ kind: "heartbeat", slot: 13n }]);
  });
});

describe("watches", () => {
  it("starts with the current estimate, then gets every publication, sharing the event objects", async () => {
    const feed = createFeeFeed();
    feed.offer(estimate(10n, 100n));
    const a = feed.watch(new AbortController().signal);
    const b = feed.watch(new AbortController().signal);
    const firstA = await a.next();
    const firstB = await b.next();
    expect(firstA.value).toBe(firstB.value);
    expect(feed.watchers()).toBe(2);
    const nextA = a.next();
    const nextB = b.next();
    feed.offer(estimate(11n, 200n));
    const [secondA, secondB] = await Promise.all([nextA, nextB]);
    expect(secondA.value).toBe(secondB.value);
    expect(secondA.value).toMatchObject({ kind: "estimate", estimate: { slot: 11n } });
    await a.return(undefined);
    await b.return(undefined);
    expect(feed.watchers()).toBe(0);
  });

  it("gives a slow reader the newest estimate, not each one it missed", async () => {
    const feed = createFeeFeed();
    feed.offer(estimate(10n, 100n));
    const watch = feed.watch(new AbortController().signal);
    await watch.next();
    for (let slot = 11n; slot <= 20n; slot++) feed.offer(estimate(slot, slot * 10n));
    const next = await watch.next();
    expect(next.value).toMatchObject({ kind: "estimate", estimate: { slot: 20n } });
    await watch.return(undefined);
  });

  it("ends when its signal aborts, also while waiting", async () => {
    const feed = createFeeFeed();
    const abort = new AbortController();
    const watch = feed.watch(abort.signal);
    const pending = watch.next();
    expect(feed.watchers()).toBe(1);
    abort.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(feed.watchers()).toBe(0);
  });
});
