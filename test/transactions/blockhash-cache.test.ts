/**
 * The blockhash cache against a real localnet (25 ms slots, in its own process, so its chain moves on while
 * this process's event loop is blocked): a blockhash just read is never refused, whatever the commitment it
 * was read at and however long this process stalled; a block height read before a stall is not taken as
 * fresh after it (its answer waited in the socket while the chain moved on), so a blockhash that lapsed
 * meanwhile is never called valid from memory.
 */
import diagnostics from "node:diagnostics_channel";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SolgateError } from "../../src/errors.ts";
import { createBlockhashCache } from "../../src/transactions/blockhash-cache.ts";
import { startChainFixture } from "./chain-fixture.ts";
import type { ChainFixture } from "./chain-fixture.ts";

let chain: ChainFixture;

beforeAll(async () => {
  chain = await startChainFixture();
});

afterAll(async () => {
  await chain?.stop();
});

/** Blocks this process's event loop (as a loaded gateway does) for `ms`. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `call` with a stall of `ms` right after its HTTP request has left (undici's `bodySent`, the fetch
 * the upstream uses): the node answers at once, and the answer waits in the socket until the stall ends.
 */
async function withStallAfterSend<T>(ms: number, call: () => Promise<T>): Promise<T> {
  let armed = true;
  const onSent = () => {
    if (!armed) return;
    armed = false;
    stall(ms);
  };
  diagnostics.subscribe("undici:request:bodySent", onSent);
  try {
    return await call();
  } finally {
    diagnostics.unsubscribe("undici:request:bodySent", onSent);
    expect(armed).toBe(false);
  }
}

async function nodeHeight(commitment: "processed" | "confirmed" = "processed"): Promise<bigint> {
  return chain.upstream.rpc.getBlockHeight({ commitment }).send();
}

describe("blockhash cache on a real localnet, with this process stalled", () => {
  it("accepts a blockhash just read at finalized, confirmed or processed, before and after a stall", async () => {
    const cache = createBlockhashCache({ rpc: chain.upstream.rpc, heightMaxAgeMs: 1000 });
    // A height noted, then the loop blocked for 40 blocks: nothing remembered may make a new blockhash look old.
    await cache.latest({ commitment: "processed" });
    stall(1000);
    for (const commitment of ["finalized", "confirmed", "processed"] as const) {
      const { value } = await chain.upstream.rpc.getLatestBlockhash({ commitment }).send();
      const validity = await cache.check(value.blockhash);
      expect(validity.lastValidBlockHeight).toBeGreaterThanOrEqual(value.lastValidBlockHeight);
      // Read through the cache too (remembered exactly): answered from memory or by the node, never refused.
      const viaCache = await cache.latest({ commitment });
      expect(await cache.check(viaCache.blockhash)).toMatchObject({
        lastValidBlockHeight: viaCache.lastValidBlockHeight,
        exact: true,
      });
    }
  });

  it("bounds a blockhash read at processed from above, even when the confirmed bank takes it in during the check", async () => {
    // The check's first request (the newest confirmed blockhash, read alongside) leaves before the stall and is
    // answered at once; its isBlockhashValid at confirmed leaves after it, when the confirmed bank has moved
    // past the client's block (300 ms: 12 slots). That earlier read is older than the client's blockhash unless
    // the confirmed bank had already taken it in: five tries, each on a new cache and blockhash.
    for (let i = 0; i < 5; i++) {
      const cache = createBlockhashCache({ rpc: chain.upstream.rpc });
      const { value } = await chain.upstream.rpc.getLatestBlockhash({ commitment: "processed" }).send();
      const validity = await withStallAfterSend(300, () => cache.check(value.blockhash));
      expect(validity.lastValidBlockHeight).toBeGreaterThanOrEqual(value.lastValidBlockHeight);
    }
  });

  it("does not take a height read before a stall as fresh after it: a blockhash lapsed meanwhile is not called valid", async () => {
    const heightMaxAgeMs = 1000;
    const cache = createBlockhashCache({ rpc: chain.upstream.rpc, heightMaxAgeMs });
    const old = await cache.latest({ commitment: "confirmed" });
    // Wait until `old` has ~100 blocks left (2.5 s at 25 ms slots), well above the no-call margin of 10 even
    // if this poll comes back late.
    while ((await nodeHeight()) < old.lastValidBlockHeight - 100n) await sleep(10);
    // A height reading asked for now, whose answer this process reads only after a 2.5 s stall (~100 blocks).
    const reading = await withStallAfterSend(2500, () => cache.latest({ commitment: "processed" }));
    const noted = reading.lastValidBlockHeight - 150n;
    // What the cache says from memory, right after the stall.
    let fromMemory: unknown;
    try {
      fromMemory = cache.cached(old.blockhash);
    } catch (error) {
      fromMemory = error;
    }
    // The reading was taken before the stall: by itself it leaves `old` comfortably valid...
    expect(noted + 10n).toBeLessThanOrEqual(old.lastValidBlockHeight);
    // ...but it is 2.5 s old (more than heightMaxAgeMs), so only the node may say: nothing from memory.
    expect(fromMemory).toBeUndefined();
    // And once the node has moved past `old`'s last valid height, the check (which asks it) says so. (The
    // confirmed bank: the one the check asks first; one block behind processed, it still knows `old` then.)
    while ((await nodeHeight("confirmed")) <= old.lastValidBlockHeight) await sleep(25);
    const error = await cache.check(old.blockhash).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SolgateError);
    expect((error as SolgateError).reason).toBe("BLOCKHASH_EXPIRED");
  });

  it("answers from memory with a height read just now, and refuses from memory a blockhash past it", async () => {
    const cache = createBlockhashCache({ rpc: chain.upstream.rpc, heightMaxAgeMs: 1000 });
    const old = await cache.latest({ commitment: "confirmed" });
    const fresh = await cache.latest({ commitment: "processed" });
    // Fresh height, fresh blockhash: known without a call.
    chain.resetCalls();
    expect(cache.cached(fresh.blockhash)).toMatchObject({
      lastValidBlockHeight: fresh.lastValidBlockHeight,
      exact: true,
    });
    expect(chain.totalCalls()).toBe(0);
    // Once `old` has lapsed, a height just read refuses it from memory, with the heights.
    while ((await nodeHeight("confirmed")) <= old.lastValidBlockHeight) await sleep(25);
    await cache.latest({ commitment: "processed" });
    expect(() => cache.cached(old.blockhash)).toThrow(
      expect.objectContaining({
        reason: "BLOCKHASH_EXPIRED",
        details: expect.objectContaining({ blockhash: old.blockhash }),
      }),
    );
  });
  it("takes a height the status engine notes as of when it asked for it", async () => {
    const cache = createBlockhashCache({ rpc: chain.upstream.rpc, heightMaxAgeMs: 1000 });
    // Read at finalized: remembered with its exact limit, but no height noted.
    const finalized = await cache.latest({ commitment: "finalized" });
    expect(cache.cached(finalized.blockhash)).toBeUndefined();
    const height = await chain.upstream.rpc.getBlockHeight({ commitment: "confirmed" }).send();
    // Asked 1.5 s ago (its answer read only now): older than heightMaxAgeMs, so not enough to answer from memory.
    cache.noteBlockHeight(height, 1500);
    expect(cache.cached(finalized.blockhash)).toBeUndefined();
    cache.noteBlockHeight(height, 0);
    expect(cache.cached(finalized.blockhash)).toMatchObject({
      lastValidBlockHeight: finalized.lastValidBlockHeight,
      exact: true,
    });
  });
});
