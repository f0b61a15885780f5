/**
 * The climb when the odds model is over-confident (a market that moved since the model's window, as after a fee jump):
 * the model says every rung lands with 0.95 at any k, but the market refuses every rung (a send path that never
 * delivers). The current rung's odds in the time left must count the slots it has already waited in vain: the ladder
 * must climb to its top rung before the deadline instead of sitting on its first rung until it expires. The real
 * localnet holds the nonce account and reads the slots; the model and the send path are the two faults.
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

/** Odds of 0.95 at every price and every k: a model that has not seen the market move. */
const confident: OddsAt = {
  withinSlots: 4,
  odds: () => 0.95,
  cheapest: () => undefined,
  cheapestAbove: () => undefined,
  curve: () => [],
} as unknown as OddsAt;

beforeAll(async () => {
  chain = await startChainFixture({ slotMs: 50 });
  ({ ladders, submitted } = recordingLadders(chain, () => confident));
}, 60_000);

afterAll(async () => {
  ladders?.stop();
  await chain?.stop();
});

describe("the climb on an over-confident model", () => {
  it("climbs past rungs that waited in vain and submits the top rung before the deadline", async () => {
    const rungs = await transferRungsOnFreshNonce(chain, [100n, 200n, 400n, 800n]);
    const taken = await ladders.send({ wires: rungs, deadlineSlots: 20, target: 0.9 });
    const ended = await waitFor(
      () => ladders.status(taken.id),
      (ladder) => ladder.state === "expired",
      30_000,
    );
    const top = ended.rungs[ended.rungs.length - 1];
    expect(ended.rungs.map((rung) => rung.submittedSlot !== undefined)).toEqual([true, true, true, true]);
    expect(top.submittedSlot).toBeLessThan(ended.deadlineSlot);
    expect(submitted).toHaveLength(4);
  }, 60_000);
});
