/**
 * getSupply and getLargestAccounts over the whole chain: every lamport circulates (a development
 * genesis has no non-circulating accounts), and the largest accounts include the cluster's stake.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestLocalnet, type TestLocalnet } from "../helpers.ts";

let net: TestLocalnet;
beforeAll(async () => {
  net = await startTestLocalnet();
}, 30_000);
afterAll(async () => {
  await net?.stop();
});

describe("supply", () => {
  it("counts every account's lamports as circulating", async () => {
    const { value } = (await net.call("getSupply", [{ commitment: "processed" }])).result;
    expect(BigInt(value.total)).toBe(BigInt(value.circulating));
    expect(value.nonCirculating).toBe(0);
    expect(value.nonCirculatingAccounts).toEqual([]);
    // At least the stake account's million SOL and the identity's 500.
    expect(BigInt(value.total)).toBeGreaterThan(1_000_500n * 10n ** 9n);
    const stakes = (
      await net.call("getProgramAccounts", ["Stake11111111111111111111111111111111111111", { encoding: "base64" }])
    ).result;
    const largest = (await net.call("getLargestAccounts", [{ commitment: "processed" }])).result.value;
    expect(largest.length).toBeLessThanOrEqual(20);
    expect(largest.map((a: { address: string }) => a.address)).toContain(stakes[0].pubkey);
    const sum = largest.reduce((n: bigint, a: { lamports: number | bigint }) => n + BigInt(a.lamports), 0n);
    expect(sum).toBeLessThanOrEqual(BigInt(value.total));
    for (let i = 1; i < largest.length; i++)
      expect(BigInt(largest[i - 1].lamports) >= BigInt(largest[i].lamports)).toBe(true);
    expect((await net.call("getLargestAccounts", [{ filter: "nonCirculating" }])).result.value).toEqual([]);
    expect((await net.call("getLargestAccounts", [{ filter: "other" }])).error.code).toBe(-32602);
  });
});
