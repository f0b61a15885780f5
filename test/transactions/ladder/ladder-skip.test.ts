/**
 * The climb past rungs the blocks have all refused far above (ladder-climb.ts `nextRung`, `SKIP_MARGIN`): a market
 * that moved past several rungs at once. The model says every block since the first rung's submission cleared at
 * 500. The ladder [100, 120, 300, 700] must go from its first rung past 120 (every block cleared above twice its
 * price) to 300, which the blocks refused but not by that margin (a market swinging around a rung may come back to
 * it), and from there, refused, to 700. The real localnet holds the nonce account and counts the slots; the model
 * and a send path that never delivers are the faults.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OddsAt } from "../../../src/fees/fee-odds.ts";
import type { Ladders } from "../../../src/transactions/ladder/ladders.ts";
import { startChainFixture } from "../chain-fixture.ts";
import type { ChainFixture } from "../chain-fixture.ts";
import { recordingLadders, transferRungsOnFreshNonce, waitFor } from "./ladder-fixture.ts";

let chain: ChainFixture;
let ladders: Ladders;
let submitted: string[] = [];
let newest = 0n;
let polling: NodeJS.Timeout | undefined;

/**
 * The model: within k slots a price lands with 1 - (1 - q)^k (q = 0.1 a slot under 500, 0.5 from it), so that a rung
 * that waited keeps its odds in the time left and only the blocks' refusal moves the climb. The blocks: every one
 * after `afterSlot` cleared at 500, refusing every price under that.
 */
const moved = (k: number): OddsAt => ({
  withinSlots: k,
  odds: (price: bigint) => 1 - (1 - (price >= 500n ? 0.5 : 0.1)) ** k,
  cheapest: () => undefined,
  cheapestAbove: () => undefined,
  curve: () => [],
  refusedSince(afterSlot: bigint, price: bigint) {
    const blocks = newest > afterSlot ? Number(newest - afterSlot) : 0;
    return { refused: price < 500n ? blocks : 0, blocks };
  },
  clearedRecently: () => undefined,
});

beforeAll(async () => {
  chain = await startChainFixture({ slotMs: 50 });
  const poll = async () => {
    newest = BigInt(await chain.upstream.rpc.getSlot({ commitment: "processed" }).send());
    polling = setTimeout(() => void poll().catch(() => {}), 20);
  };
  await poll();
  ({ ladders, submitted } = recordingLadders(chain, moved));
}, 60_000);

afterAll(async () => {
  clearTimeout(polling);
  ladders?.stop();
  await chain?.stop();
});

describe("the climb past rungs every block refused", () => {
  it("skips the rungs every block cleared far above, and only those", async () => {
    const rungs = await transferRungsOnFreshNonce(chain, [100n, 120n, 300n, 700n]);
    const taken = await ladders.send({ wires: rungs, deadlineSlots: 40, target: 0.9 });
    const ended = await waitFor(
      () => ladders.status(taken.id),
      (ladder) => ladder.rungs[3].submittedSlot !== undefined || ladder.state !== "pending",
      30_000,
    );
    expect(ended.rungs.map((rung) => rung.submittedSlot !== undefined)).toEqual([true, false, true, true]);
    expect(submitted).toHaveLength(3);
  }, 60_000);
});
