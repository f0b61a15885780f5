/**
 * solana-test-validator's epoch schedule: without `--slots-per-epoch`, `EpochSchedule::without_warmup()`
 * (432,000 slots from epoch 0); with it, `EpochSchedule::custom(n, n, false)`; never LiteSVM's
 * warm-up. Checked against the schedules agave's own crate builds (test/decoder-oracle,
 * `epochSchedules`), through getEpochSchedule, the EpochSchedule sysvar, getEpochInfo, the leader
 * schedule's length and the epoch getSlotLeaders names past the end.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestLocalnet, type TestLocalnet } from "../helpers.ts";

const ORACLE = JSON.parse(readFileSync(new URL("../decoder-oracle/expected.json", import.meta.url), "utf8")) as {
  epochSchedules: Record<"default" | "slotsPerEpoch64", Record<string, unknown>>;
};

describe("the epoch schedule", () => {
  let net: TestLocalnet;
  let custom: TestLocalnet;
  beforeAll(async () => {
    [net, custom] = await Promise.all([startTestLocalnet(), startTestLocalnet({ slotsPerEpoch: 64, slotMs: 5 })]);
  }, 60_000);
  afterAll(() => Promise.all([net?.stop(), custom?.stop()]));

  it("is agave's EpochSchedule::without_warmup() by default", async () => {
    expect((await net.call("getEpochSchedule")).result).toEqual(ORACLE.epochSchedules.default);
    const sysvar = (
      await net.call("getAccountInfo", ["SysvarEpochSchedu1e111111111111111111111111", { encoding: "jsonParsed" }])
    ).result.value.data.parsed.info;
    expect(sysvar).toEqual(ORACLE.epochSchedules.default);
    const info = (await net.call("getEpochInfo", [{ commitment: "processed" }])).result;
    expect(info).toMatchObject({ epoch: 0, slotsInEpoch: 432_000, slotIndex: info.absoluteSlot });
    const schedule = (await net.call("getLeaderSchedule", [null, { commitment: "processed" }])).result;
    expect(Object.values(schedule)[0]).toHaveLength(432_000);
    // The root's epoch is 0, so epoch 1 (its leader-schedule epoch) is known and epoch 2 is not.
    expect((await net.call("getSlotLeaders", [432_000, 1])).result).toHaveLength(1);
    expect((await net.call("getSlotLeaders", [864_000, 1])).error).toEqual({
      code: -32602,
      message: "Invalid slot range: leader schedule for epoch 2 is unavailable",
    });
  });

  it("is EpochSchedule::custom(n, n, false) with --slots-per-epoch", async () => {
    expect((await custom.call("getEpochSchedule")).result).toEqual(ORACLE.epochSchedules.slotsPerEpoch64);
    const info = (await custom.call("getEpochInfo", [{ commitment: "processed" }])).result;
    expect(info.slotsInEpoch).toBe(64);
    expect(info.epoch).toBe(Math.floor(info.absoluteSlot / 64));
    expect(info.slotIndex).toBe(info.absoluteSlot % 64);
  });
});
