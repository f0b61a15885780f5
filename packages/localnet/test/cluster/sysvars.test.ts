/**
 * Sysvars as an agave 3.0 node holds them: rent-exempt balances, no Fees sysvar, the 10-byte stake
 * config, `Rent::default()`, and the history sysvars moving with the chain (RecentBlockhashes,
 * SlotHashes, SlotHistory, StakeHistory), read through getAccountInfo as a client would.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

const SYSVARS = [
  "SysvarC1ock11111111111111111111111111111111",
  "SysvarEpochSchedu1e111111111111111111111111",
  "SysvarRecentB1ockHashes11111111111111111111",
  "SysvarRent111111111111111111111111111111111",
  "SysvarS1otHashes111111111111111111111111111",
  "SysvarS1otHistory11111111111111111111111111",
  "SysvarStakeHistory1111111111111111111111111",
  "SysvarLastRestartS1ot1111111111111111111111",
  "SysvarEpochRewards1111111111111111111111111",
];

let net: TestLocalnet;
beforeAll(async () => {
  // Epochs of 32 slots, so an epoch ends within the test.
  net = await startTestLocalnet({ slotsPerEpoch: 32 });
  await waitFor("epoch 1", async () => (await net.call("getSlot", [{ commitment: "processed" }])).result > 40, 20_000);
}, 30_000);
afterAll(async () => {
  await net?.stop();
});

const parsed = async (address: string) =>
  (await net.call("getAccountInfo", [address, { encoding: "jsonParsed", commitment: "processed" }])).result;

describe("sysvars", () => {
  it("hold their rent-exempt minimum, as agave's adjust_sysvar_balance_for_rent makes them", async () => {
    for (const address of SYSVARS) {
      const { value } = await parsed(address);
      expect(value, address).not.toBeNull();
      const minimum = (await net.call("getMinimumBalanceForRentExemption", [value.space])).result;
      expect(value.lamports, address).toBe(minimum);
    }
  });

  it("stamps the clock with the time its epoch began", async () => {
    const clock = (await parsed("SysvarC1ock11111111111111111111111111111111")).value.data.parsed.info;
    expect(clock.epochStartTimestamp).toBeGreaterThan(0);
    expect(clock.epochStartTimestamp).toBeLessThanOrEqual(clock.unixTimestamp);
    expect(clock.leaderScheduleEpoch).toBe(clock.epoch + 1);
  });

  it("has no Fees sysvar, agave 4.4's Rent::default() and a 10-byte stake config in base64 (4.4 no longer parses it)", async () => {
    expect((await parsed("SysvarFees111111111111111111111111111111111")).value).toBeNull();
    expect((await parsed("SysvarRent111111111111111111111111111111111")).value.data.parsed.info).toEqual({
      lamportsPerByte: "6960",
    });
    const config = (await parsed("StakeConfig11111111111111111111111111111111")).value;
    expect(config.space).toBe(10);
    expect(config.owner).toBe("Config1111111111111111111111111111111111111");
    // jsonParsed falls back to base64: agave 4.4's parse_config parses validator info only.
    expect(Array.isArray(config.data)).toBe(true);
    expect(config.data[1]).toBe("base64");
    const bytes = Buffer.from(config.data[0], "base64");
    expect(bytes.length).toBe(10);
    expect([bytes.readDoubleLE(1), bytes[9]]).toEqual([0.25, 12]);
  });

  it("keeps recent blockhashes, slot hashes and slot history with the chain", async () => {
    const recent = await parsed("SysvarRecentB1ockHashes11111111111111111111");
    expect(recent.value.space).toBe(6008);
    const entries = recent.value.data.parsed.info;
    expect(entries.length).toBeGreaterThan(40);
    expect(entries.length).toBeLessThanOrEqual(150);
    const tip = await net.call("getBlock", [
      recent.context.slot - 1,
      { commitment: "confirmed", transactionDetails: "none", rewards: false },
    ]);
    if (tip.result) expect(entries.map((e: { blockhash: string }) => e.blockhash)).toContain(tip.result.blockhash);
    expect(entries[0].feeCalculator).toEqual({ lamportsPerSignature: "5000" });
    const hashes = await parsed("SysvarS1otHashes111111111111111111111111111");
    const slots = hashes.value.data.parsed.info.map((e: { slot: number }) => e.slot);
    expect(slots[0]).toBeLessThan(hashes.context.slot + 1);
    expect(slots.slice(0, 5)).toEqual([slots[0], slots[0] - 1, slots[0] - 2, slots[0] - 3, slots[0] - 4]);
    const history = (await parsed("SysvarS1otHistory11111111111111111111111111")).value.data.parsed.info;
    expect(history.nextSlot).toBeGreaterThan(40);
    expect(history.bits.slice(0, history.nextSlot)).toBe("1".repeat(history.nextSlot));
    expect(history.bits[history.nextSlot]).toBe("0");
  });

  it("records each ended epoch's stake in StakeHistory", async () => {
    const { value } = await parsed("SysvarStakeHistory1111111111111111111111111");
    expect(value.space).toBe(16392);
    const stake = (await net.call("getVoteAccounts", [{ commitment: "processed" }])).result.current[0].activatedStake;
    const epoch = (await net.call("getEpochInfo", [{ commitment: "processed" }])).result.epoch;
    expect(value.data.parsed.info[0]).toEqual({
      epoch: epoch - 1,
      stakeHistory: { activating: 0, deactivating: 0, effective: stake },
    });
  });
});
