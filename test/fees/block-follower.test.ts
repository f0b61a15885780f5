/**
 * The follower taking blocks pushed by a stream (`accept`): in order, over skipped slots shown by the parent
 * link, stale ones ignored, and a gap (a parent not read) left for a tick unless forced. No node is needed:
 * `accept` makes no call, so the follower's RPC throws on use.
 */
import { describe, expect, it } from "vitest";
import { createBlockFollower } from "../../src/fees/block-follower.ts";
import type { PricedTransaction } from "../../src/fees/block-transactions.ts";
import { createFeeWindow } from "../../src/fees/fee-window.ts";
import type { FeeMarketRpc } from "../../src/fees/fee-market.ts";

const noRpc = new Proxy({} as FeeMarketRpc, {
  get: (_target, method) => () => {
    throw new Error(`unexpected call: ${String(method)}`);
  },
});

const priced = (...prices: bigint[]): PricedTransaction[] => prices.map((price) => ({ price, writable: ["A"] }));
const block = (slot: bigint, parentSlot: bigint, ...prices: bigint[]) => ({
  slot,
  parentSlot,
  prices: { transactions: priced(...prices), votes: 0, unreadable: 0 },
});

describe("block follower: blocks from a stream", () => {
  it("starts at the first block, follows parents over skipped slots, and ignores what it has", () => {
    const window = createFeeWindow({ windowSlots: 4 });
    const follower = createBlockFollower({ rpc: noRpc, window });
    expect(follower.accept(block(10n, 9n, 100n))).toBe("added");
    expect(follower.accept(block(11n, 10n, 200n))).toBe("added");
    // 12 and 13 skipped on this fork: the window slides over them.
    expect(follower.accept(block(14n, 11n, 300n))).toBe("added");
    expect(follower.accept(block(13n, 11n, 999n))).toBe("stale");
    expect(follower.accept(block(14n, 11n, 999n))).toBe("stale");
    const state = follower.state();
    expect(state.nextSlot).toBe(15n);
    expect(state.lastBlockSlot).toBe(14n);
    expect(state.tipSlot).toBe(14n);
    expect(state.droppedSlots).toBe(0n);
    // Window (10, 14]: the block of slot 10 has left it.
    expect(window.stats()).toMatchObject({ blocks: 2, samples: 2 });
    expect(window.account("A")?.sampleSize).toBe(2);
  });

  it("stops at a gap unless forced, then counts the unread slots as dropped", () => {
    const window = createFeeWindow({ windowSlots: 150 });
    const follower = createBlockFollower({ rpc: noRpc, window });
    follower.accept(block(10n, 9n, 100n));
    // The parent, 12, was never seen: 11 and 12 are missing, not skipped.
    expect(follower.accept(block(13n, 12n, 300n))).toBe("gap");
    expect(follower.state().nextSlot).toBe(11n);
    expect(window.stats().blocks).toBe(1);
    expect(follower.accept(block(13n, 12n, 300n), true)).toBe("added");
    expect(follower.state()).toMatchObject({ nextSlot: 14n, droppedSlots: 2n, lastBlockSlot: 13n });
    expect(window.stats().blocks).toBe(2);
  });
});
