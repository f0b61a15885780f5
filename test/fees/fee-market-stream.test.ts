/**
 * The fee market fed by the Geyser block stream (geyser-blocks.ts) on the real localnet with priced traffic,
 * through a TCP relay that the test takes down and brings back:
 * - on the stream, the window moves block by block with no JSON-RPC call (no getSlot, no getBlock);
 * - with the stream killed, the levels keep coming from blocks, now read with getBlock (the fallback);
 * - with the stream back, it reconnects from the slot after the last it saw and getBlock stops again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFeeMarket } from "../../src/fees/fee-market.ts";
import type { FeeMarket } from "../../src/fees/fee-market.ts";
import { createGeyserBlocks } from "../../src/upstream/geyser-blocks.ts";
import type { GeyserBlocks } from "../../src/upstream/geyser-blocks.ts";
import { startChainFixture } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";
import { startRelay } from "../upstream/tcp-relay.ts";

const until = async (condition: () => boolean, what: string, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not met in time`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

let chain: ChainFixture;
let relay: Awaited<ReturnType<typeof startRelay>>;
let stream: GeyserBlocks;
let market: FeeMarket;
const health: boolean[] = [];

beforeAll(async () => {
  chain = await startChainFixture({ slotMs: 100, traffic: true });
  relay = await startRelay(new URL(chain.localnet.geyserUrl!));
  stream = createGeyserBlocks({
    url: relay.url,
    baseDelayMs: 50,
    maxDelayMs: 200,
    onHealth: (healthy) => health.push(healthy),
  });
  // No check ticks while the stream is healthy (the default is every 5 s): any getBlock is then the fallback's.
  market = createFeeMarket({ upstream: chain.upstream, stream, streamCheckMs: 600_000, pollIntervalMs: 100 });
  market.start();
}, 60_000);

afterAll(async () => {
  await market?.stop();
  stream?.close();
  await relay?.close(); // cuts the client's idle HTTP/2 session, which would keep it open
  await chain?.stop();
});

const getBlocks = () => chain.calls.get("getBlock") ?? 0;
/** The follower's calls: the tip, then the blocks up to it. */
const followerCalls = () => getBlocks() + (chain.calls.get("getSlot") ?? 0);
const newestBlock = () => market.status().follower.lastBlockSlot ?? 0n;

describe("fee market on the Geyser block stream", () => {
  it("moves with the stream's blocks with no JSON-RPC call", async () => {
    await until(() => stream.healthy() && market.global().source === "blocks", "stream up and levels from blocks");
    // Past the start: the stream's first blocks may come before the first tick's backfill ends, which leaves a
    // gap that one more tick fills (by design); what is measured is the steady state after it.
    const started = stream.stats().blocks;
    await until(() => stream.stats().blocks >= started + 5, "five blocks on the stream");
    const calls = followerCalls();
    const from = newestBlock();
    const streamed = stream.stats().blocks;
    // Ten blocks (the localnet may skip slots: blocks, not slots, are counted).
    await until(
      () => stream.stats().blocks >= streamed + 10 && newestBlock() === stream.stats().lastSlot,
      "ten more blocks",
    );
    expect(newestBlock()).toBeGreaterThanOrEqual(from + 10n);
    expect(followerCalls()).toBe(calls);
    const estimate = market.global();
    expect(estimate.source).toBe("blocks");
    expect(estimate.priority).toBeDefined();
    expect(estimate.slot).toBe(newestBlock());
  }, 30_000);

  it("keeps its levels from blocks read with getBlock when the stream is killed, and goes back when it returns", async () => {
    relay.down();
    await until(() => !stream.healthy(), "stream down");
    const calls = getBlocks();
    const from = newestBlock();
    await until(() => newestBlock() >= from + 10n, "ten more blocks without the stream");
    expect(getBlocks()).toBeGreaterThan(calls); // read by the fallback
    expect(market.global().source).toBe("blocks");
    expect(market.global().priority).toBeDefined();
    expect(health).toEqual([true, false]);

    const lastStreamed = stream.stats().lastSlot!;
    relay.up();
    await until(() => stream.healthy(), "stream back");
    expect(stream.stats().lastFromSlot).toBe(lastStreamed + 1n);
    // The slots read meanwhile are not taken twice; then the stream alone moves the window again.
    await until(() => newestBlock() > (stream.stats().lastSlot ?? 0n) - 1n, "the stream catching up");
    await new Promise((r) => setTimeout(r, 300)); // a tick under way when the stream came back may still read
    const back = followerCalls();
    const resumed = newestBlock();
    await until(() => newestBlock() >= resumed + 10n, "ten more blocks on the stream");
    expect(followerCalls()).toBe(back);
    expect(health).toEqual([true, false, true]);
  }, 60_000);
});
