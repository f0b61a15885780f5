/**
 * The congestion profiles: deterministic from the seed, demand above the block limit and the hot accounts'
 * limits (costs recomputed with agave's cost model from the signed bytes), and on the real localnet a storm
 * that saturates its hot account without any block or account going over its limit.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorldManifest } from "../../src/world/world-types.ts";
import bs58 from "bs58";
import { transactionCost } from "../../src/chain/cost-model.ts";
import { createTrafficGenerator, planTraffic } from "../../src/traffic/traffic-generator.ts";
import { parseTrafficConfig, type TrafficOptions } from "../../src/traffic/traffic-options.ts";
import { staticAccountKeys } from "../../src/wire/account-keys.ts";
import { decodeTransaction } from "../../src/wire/decode-transaction.ts";
import { startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

const LIMITS = { blockCostLimit: 60_000_000n, accountCostLimit: 24_000_000n };
const blockhashFor = (i: number) => bs58.encode(Uint8Array.from({ length: 32 }, (_, k) => (i * 31 + k) % 256));

const optionsOf = (profile: string, env: Record<string, string> = {}, limits = LIMITS): TrafficOptions =>
  parseTrafficConfig({ LOCALNET_TRAFFIC: profile, ...env }, false, limits).options;

/** Requested cost per slot: the block's and each write-locked account's, over `slots` slots. */
function demand(options: TrafficOptions, slots: number) {
  const generator = createTrafficGenerator(planTraffic(options), options);
  const perSlot: { block: number; accounts: Map<string, number> }[] = [];
  for (let s = 0; s < slots; s++) {
    const accounts = new Map<string, number>();
    let block = 0;
    for (const generated of generator.next(blockhashFor(s))) {
      const tx = decodeTransaction(generated.wire);
      const keys = staticAccountKeys(tx.message);
      const writable = keys.keys.filter((_, i) => keys.writable[i]);
      const cost = Number(transactionCost(tx.message, writable.length).total);
      block += cost;
      for (const key of writable) accounts.set(key, (accounts.get(key) ?? 0) + cost);
    }
    perSlot.push({ block, accounts });
  }
  return perSlot;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

describe("traffic profiles", () => {
  it("are deterministic from the seed", () => {
    const batch = (options: TrafficOptions) =>
      createTrafficGenerator(planTraffic(options), options)
        .next(blockhashFor(1))
        .map((t) => Buffer.from(t.wire).toString("hex"));
    expect(batch(optionsOf("storm"))).toEqual(batch(optionsOf("storm")));
    expect(batch(optionsOf("storm", { LOCALNET_WORLD_SEED: "other" }))).not.toEqual(batch(optionsOf("storm")));
  });

  it("keep calm light, and ask more than the block and the hot accounts can take in the others", () => {
    const calm = demand(optionsOf("calm"), 5);
    expect(Math.max(...calm.map((s) => s.block))).toBeLessThan(0.1 * Number(LIMITS.blockCostLimit));
    const account = Number(LIMITS.accountCostLimit);
    const expected = { busy: [1, 1.1], congested: [2, 1.3], storm: [1, 2.5] } as const;
    for (const [profile, [hotCount, hotAtLeast]] of Object.entries(expected)) {
      const options = optionsOf(profile);
      const hot = planTraffic(options).hot;
      expect(hot).toHaveLength(hotCount);
      const slots = demand(options, 8);
      expect(mean(slots.map((s) => s.block))).toBeGreaterThan(Number(LIMITS.blockCostLimit));
      for (const address of hot) {
        expect(mean(slots.map((s) => s.accounts.get(address) ?? 0))).toBeGreaterThan(hotAtLeast * account);
      }
      // No wallet (each is write-locked as the fee payer) comes near its own limit.
      for (const wallet of planTraffic(options).wallets) {
        expect(Math.max(...slots.map((s) => s.accounts.get(wallet.address) ?? 0))).toBeLessThan(0.5 * account);
      }
    }
  });

  it("sizes a profile to the configured limits", () => {
    const small = optionsOf("congested", {}, { blockCostLimit: 6_000_000n, accountCostLimit: 2_400_000n });
    const full = optionsOf("congested");
    expect(small.ratePerSlot * 10).toBeGreaterThan(full.ratePerSlot * 0.9);
    expect(small.ratePerSlot * 10).toBeLessThan(full.ratePerSlot * 1.1);
  });
});

describe("a storm on the real localnet (limits scaled down 10x)", () => {
  const limits = { blockCostLimit: 6_000_000n, accountCostLimit: 2_400_000n };
  const hot = planTraffic(optionsOf("storm", {}, limits)).hot[0]!;
  let net: TestLocalnet;
  let dir: string;
  let stderr = "";
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "solgate-storm-test-"));
    net = await startTestLocalnet({
      slotMs: 100,
      world: { collectionSize: 20, tokenHolders: 50, dir },
      traffic: { profile: "storm" },
      blockCostLimit: limits.blockCostLimit,
      onStderr: (text) => {
        stderr += text;
      },
    });
  });
  afterAll(async () => {
    await net?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("names the profile and its hot account in the manifest and the banner", async () => {
    const manifest = JSON.parse(readFileSync(join(dir, "world-manifest.json"), "utf8")) as WorldManifest;
    expect(manifest.traffic?.profile).toBe("storm");
    expect(manifest.traffic?.hotAccounts).toEqual([hot]);
    expect(manifest.traffic?.wallets).toHaveLength(planTraffic(optionsOf("storm", {}, limits)).wallets.length);
    await waitFor("the banners", async () => stderr.includes(`traffic "storm"`) && stderr.includes("localnet: Solana"));
    expect(stderr).toContain(hot);
    expect(stderr).toContain("6000000 CU per block, 2400000 per write-locked account");
  });

  it("fills the hot account to its limit every block, never beyond, and the rest waits", async () => {
    const first = (await net.call("getSlot", [{ commitment: "confirmed" }])).result as number;
    await waitFor(
      "25 blocks of storm",
      async () => ((await net.call("getSlot", [{ commitment: "confirmed" }])).result as number) > first + 25,
      60_000,
    );
    const status = (await net.call("localnet_status")).result;
    expect(status.lastBlock.blockCostLimit).toBe(6_000_000);
    expect(status.lastBlock.accountCostLimit).toBe(2_400_000);
    expect(status.queued).toBeGreaterThan(0);
    const hotCosts: number[] = [];
    for (let slot = first + 3; slot <= first + 25; slot++) {
      const block = (
        await net.call("getBlock", [
          slot,
          { commitment: "confirmed", encoding: "base64", maxSupportedTransactionVersion: 0 },
        ])
      ).result;
      let total = 0;
      const accounts = new Map<string, number>();
      for (const entry of block.transactions) {
        const tx = decodeTransaction(new Uint8Array(Buffer.from(entry.transaction[0], "base64")));
        const keys = staticAccountKeys(tx.message);
        const writable = keys.keys.filter((_, i) => keys.writable[i]);
        const cost = Number(transactionCost(tx.message, writable.length).total);
        total += cost;
        for (const key of writable) accounts.set(key, (accounts.get(key) ?? 0) + cost);
      }
      expect(total).toBeLessThanOrEqual(6_000_000);
      expect(Math.max(...accounts.values())).toBeLessThanOrEqual(2_400_000);
      hotCosts.push(accounts.get(hot) ?? 0);
    }
    // Saturated: in most blocks the hot account took at least 80% of its limit (the next writer did not fit).
    expect(hotCosts.filter((c) => c >= 0.8 * 2_400_000).length).toBeGreaterThan(hotCosts.length * 0.7);
    // Its market is dearer than the block's: hot writers outbid each other.
    const fees = async (accounts: string[]) =>
      ((await net.call("getRecentPrioritizationFees", [accounts])).result as { prioritizationFee: number }[]).map(
        (f) => f.prioritizationFee,
      );
    expect(mean(await fees([hot]))).toBeGreaterThan(mean(await fees([])));
  });
});
