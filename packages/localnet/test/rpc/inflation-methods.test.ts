/**
 * Inflation as a development genesis sets it (`Inflation::default()`), with agave's parameter
 * handling: getInflationGovernor takes `Option<CommitmentConfig>` (so `{}` is refused), the rate
 * follows the epoch, and getInflationReward answers per address once the epoch-boundary block
 * exists (the localnet pays no rewards: null), agave's errors before.
 */
import { generateKeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

let net: TestLocalnet;
beforeAll(async () => {
  // Epochs of 32 slots, so epoch 1 begins within the test.
  net = await startTestLocalnet({ slotsPerEpoch: 32 });
}, 30_000);
afterAll(async () => {
  await net?.stop();
});

describe("inflation", () => {
  it("answers the governor, and refuses a config without commitment as agave's serde does", async () => {
    const { result } = await net.call("getInflationGovernor");
    expect(result).toEqual({ initial: 0.08, terminal: 0.015, taper: 0.15, foundation: 0.05, foundationTerm: 7 });
    expect((await net.call("getInflationGovernor", [{ commitment: "confirmed" }])).result).toEqual(result);
    expect((await net.call("getInflationGovernor", [{}])).error).toEqual({
      code: -32602,
      message: "Invalid params: missing field `commitment`.",
    });
  });

  it("reports the rate of the current epoch, split between validators and the foundation", async () => {
    const { result } = await net.call("getInflationRate");
    const epoch = (await net.call("getEpochInfo")).result.epoch;
    expect(result.epoch).toBe(epoch);
    expect(result.total).toBeLessThanOrEqual(0.08);
    expect(result.total).toBeGreaterThan(0.079); // the first year tapers by 15%
    expect(result.foundation).toBeCloseTo(result.total * 0.05, 15);
    expect(result.validator).toBeCloseTo(result.total - result.foundation, 15);
    expect((await net.call("getInflationRate", [{}])).error.code).toBe(-32602);
  });

  it("answers getInflationReward with agave's errors before the epoch boundary and null after", async () => {
    const stranger = await generateKeyPairSigner();
    const vote = (await net.call("getVoteAccounts", [{ commitment: "processed" }])).result.current[0].votePubkey;
    const future = await net.call("getInflationReward", [[vote], { epoch: 1000 }]);
    expect(future.error.code).toBe(-32004);
    expect(future.error.message).toMatch(/^Block not available for slot \d+$/);
    // Epoch 0's rewards live in epoch 1's first block (slot 32 with 32-slot epochs).
    await waitFor("epoch 1 finalized", async () => (await net.call("getSlot")).result > 40, 20_000);
    const rewards = await net.call("getInflationReward", [[vote, stranger.address], { epoch: 0 }]);
    expect(rewards.result).toEqual([null, null]);
    expect((await net.call("getInflationReward", [["bad"]])).error.code).toBe(-32602);
    // agave 4.4: at most 32 addresses, refused before they are read ("bad" entries included).
    expect((await net.call("getInflationReward", [[...Array(32).fill(vote), "bad"]])).error).toEqual({
      code: -32602,
      message: "Too many inputs provided; max 32",
    });
    expect((await net.call("getInflationReward", [Array(32).fill(vote), { epoch: 0 }])).result).toHaveLength(32);
    expect((await net.call("getInflationReward", [[vote], { commitment: "processed" }])).error.message).toBe(
      "Method does not support commitment below `confirmed`",
    );
  });
});
