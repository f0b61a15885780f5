/**
 * A Geyser block stream that comes back after more slots than the server replays (the localnet keeps 150, as
 * the plugin's `replay_stored_slots`), end to end on the real localnet (25 ms slots: 150 slots in ~4 s):
 * the reconnect with `from_slot` is refused OutOfRange, the stream subscribes again from the tip, and the
 * fee market fills the gap between the last block it took and the stream's first new one over JSON-RPC
 * (getBlock), losing no slot, its levels still from blocks (priced traffic); then the stream alone moves the
 * window again.
 * Scheduled ticks are switched off (one every 10 minutes), so that no polling fills the gap during the outage:
 * only the gap the stream's first block reveals can make the market read it.
 */
import { createSolanaRpc } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFeeMarket } from "../../src/fees/fee-market.ts";
import type { FeeMarket } from "../../src/fees/fee-market.ts";
import { createGeyserBlocks } from "../../src/upstream/geyser-blocks.ts";
import type { GeyserBlocks } from "../../src/upstream/geyser-blocks.ts";
import { startChainFixture } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";
import { startRelay } from "../upstream/tcp-relay.ts";
import type { TcpRelay } from "../upstream/tcp-relay.ts";

const until = async (condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not met in time`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** Slots the localnet's Geyser server keeps for `from_slot` (packages/localnet geyser-options.ts). */
const REPLAY_SLOTS = 150n;

let chain: ChainFixture;
let relay: TcpRelay;
let stream: GeyserBlocks;
let market: FeeMarket;
const health: boolean[] = [];

beforeAll(async () => {
  chain = await startChainFixture({ slotMs: 25, traffic: true });
  relay = await startRelay(new URL(chain.localnet.geyserUrl!));
  stream = createGeyserBlocks({
    url: relay.url,
    baseDelayMs: 50,
    maxDelayMs: 200,
    onHealth: (healthy) => health.push(healthy),
  });
  market = createFeeMarket({
    upstream: chain.upstream,
    stream,
    pollIntervalMs: 600_000,
    streamCheckMs: 600_000,
    // The whole gap is read (it is longer than the default catch-up of 20 slots), and the stream's blocks
    // that come while it is read wait for it rather than being dropped.
    maxCatchUpSlots: 1_000,
    backfillSlots: 20,
    maxPendingStreamBlocks: 2_000,
    blockConcurrency: 8,
  });
  market.start();
}, 60_000);

afterAll(async () => {
  await market?.stop();
  stream?.close();
  await relay?.close(); // cuts the client's idle HTTP/2 session, which would keep it open
  await chain?.stop();
});

const getBlocks = () => chain.calls.get("getBlock") ?? 0;
const followerCalls = () => getBlocks() + (chain.calls.get("getSlot") ?? 0);
const follower = () => market.status().follower;
const newestBlock = () => follower().lastBlockSlot ?? 0n;

describe("fee market on a Geyser block stream that comes back beyond the server's replay", () => {
  it("resubscribes from the tip after OutOfRange and fills the gap over JSON-RPC, losing no slot", async () => {
    await until(
      () => stream.healthy() && newestBlock() > 0n && newestBlock() === stream.stats().lastSlot,
      "stream up and the window on its blocks",
    );
    // Uncounted reads of the node's slot (the fixture's upstream counts the market's calls).
    const node = createSolanaRpc(chain.localnet.rpcUrl);
    relay.down();
    await until(() => !stream.healthy(), "stream down");
    // Read once down: a block already in this side's socket may still have come after the cut.
    const lastStreamed = stream.stats().lastSlot!;
    // More slots than the server replays, so that `from_slot` = last + 1 is out of its range.
    await until(
      async () => (await node.getSlot({ commitment: "processed" }).send()) > lastStreamed + REPLAY_SLOTS + 20n,
      "the chain past the replay range",
    );
    // Nothing polled meanwhile: the window still ends at the last streamed block.
    expect(newestBlock()).toBe(lastStreamed);
    const blocksBefore = getBlocks();
    const droppedBefore = follower().droppedSlots;
    const reconnectsBefore = stream.stats().reconnects;

    relay.up();
    await until(() => stream.healthy(), "stream back");
    await until(
      () => newestBlock() >= (stream.stats().lastSlot ?? 0n) && newestBlock() > lastStreamed + REPLAY_SLOTS,
      "the window caught up with the stream",
    );
    // The reconnect with from_slot was refused (OutOfRange) and the next one came without it, from the tip.
    expect(stream.stats().reconnects).toBeGreaterThanOrEqual(reconnectsBefore + 2);
    expect(stream.stats().lastFromSlot).toBeUndefined();
    // The gap (more than the replay range) was read with getBlock, and no slot was lost or counted twice.
    expect(getBlocks() - blocksBefore).toBeGreaterThan(Number(REPLAY_SLOTS));
    expect(follower().droppedSlots).toBe(droppedBefore);
    expect(follower().nextSlot).toBe(newestBlock() + 1n);
    expect(market.global().source).toBe("blocks");
    expect(health).toEqual([true, false, true]);

    // Then the stream alone moves the window again.
    await new Promise((r) => setTimeout(r, 300)); // a gap tick still reading may end with one more call
    const calls = followerCalls();
    const resumed = newestBlock();
    await until(() => newestBlock() >= resumed + 10n, "ten more blocks on the stream");
    expect(followerCalls()).toBe(calls);
  }, 90_000);
});
