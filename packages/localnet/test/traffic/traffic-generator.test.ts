/**
 * The traffic generator: signed transactions that kit and the chain's gate both decode, priced
 * from a spread with a heavy tail, hot accounts dearer, some failing; and run against a real chain
 * (LiteSVM in-process, blocks produced by hand) through the chain's one transaction queue.
 */
import { verify, createPublicKey } from "node:crypto";
import { describe, expect, it } from "vitest";
import bs58 from "bs58";
import { getCompiledTransactionMessageDecoder, getTransactionDecoder, type Address } from "@solana/kit";
import { createChain } from "../../src/chain/chain.ts";
import { DEFAULT_LOCALNET_CONFIG } from "../../src/config.ts";
import { decodeTransaction } from "../../src/wire/decode-transaction.ts";
import { createAccountIndex } from "../../src/accounts/index.ts";
import { createTrafficGenerator, planTraffic } from "../../src/traffic/traffic-generator.ts";
import { DEFAULT_TRAFFIC_OPTIONS, parseTrafficConfig } from "../../src/traffic/traffic-options.ts";
import { startTraffic } from "../../src/traffic/traffic-runner.ts";
import { COMPUTE_BUDGET_PROGRAM } from "../../src/traffic/transfer-transaction.ts";

const BLOCKHASH = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY";
const quantile = (values: bigint[], q: number) =>
  [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[Math.floor(q * (values.length - 1))];

describe("traffic generator", () => {
  const plan = planTraffic(DEFAULT_TRAFFIC_OPTIONS);

  it("signs transactions that kit and the chain's gate decode, with the price and limit it reports", () => {
    const generator = createTrafficGenerator(plan, DEFAULT_TRAFFIC_OPTIONS);
    const batch = generator.next(BLOCKHASH);
    expect(batch).toHaveLength(DEFAULT_TRAFFIC_OPTIONS.ratePerSlot);
    for (const tx of batch) {
      const decoded = decodeTransaction(tx.wire);
      expect(decoded.message.recentBlockhash).toBe(BLOCKHASH);
      expect(decoded.message.staticKeys[0]).toBe(tx.payer);
      expect(decoded.message.staticKeys[1]).toBe(tx.recipient);
      const kitTx = getTransactionDecoder().decode(tx.wire);
      const message = getCompiledTransactionMessageDecoder().decode(kitTx.messageBytes);
      if (message.version !== "legacy") throw new Error("expected a legacy message");
      expect(message.staticAccounts[3]).toBe(COMPUTE_BUDGET_PROGRAM as Address);
      const budget = message.instructions
        .filter((ix) => ix.programAddressIndex === 3)
        .map((ix) => Buffer.from(ix.data!));
      expect(budget[0][0]).toBe(2);
      expect(budget[0].readUInt32LE(1)).toBe(tx.unitLimit);
      if (tx.unitPrice > 0n) expect(budget[1].readBigUInt64LE(1)).toBe(tx.unitPrice);
      else expect(budget).toHaveLength(1);
      const publicKey = createPublicKey({
        key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(bs58.decode(tx.payer)).toString("base64url") },
        format: "jwk",
      });
      expect(
        verify(null, kitTx.messageBytes as unknown as Uint8Array, publicKey, kitTx.signatures[tx.payer as Address]!),
      ).toBe(true);
    }
  });

  it("is deterministic and never repeats a transaction", () => {
    const a = createTrafficGenerator(plan, DEFAULT_TRAFFIC_OPTIONS);
    const b = createTrafficGenerator(plan, DEFAULT_TRAFFIC_OPTIONS);
    const seen = new Set<string>();
    for (let slot = 0; slot < 20; slot++) {
      const x = a.next(BLOCKHASH);
      const y = b.next(BLOCKHASH);
      expect(x.map((t) => Buffer.from(t.wire).toString("hex"))).toEqual(
        y.map((t) => Buffer.from(t.wire).toString("hex")),
      );
      for (const t of x) seen.add(Buffer.from(t.wire.subarray(1, 65)).toString("hex"));
    }
    expect(seen.size).toBe(20 * DEFAULT_TRAFFIC_OPTIONS.ratePerSlot);
  });

  it("draws most prices low with a heavy tail, hot ones dearer, a few unpriced, a few failing", () => {
    const generator = createTrafficGenerator(plan, { ...DEFAULT_TRAFFIC_OPTIONS, ratePerSlot: 200 });
    const all = Array.from({ length: 20 }, () => generator.next(BLOCKHASH)).flat();
    const cold = all.filter((t) => !t.hot).map((t) => t.unitPrice);
    const hot = all.filter((t) => t.hot).map((t) => t.unitPrice);
    const median = quantile(cold, 0.5);
    expect(Number(median)).toBeGreaterThan(2_000);
    expect(Number(median)).toBeLessThan(12_000);
    expect(quantile(cold, 0.99)).toBeGreaterThan(median * 20n); // heavy tail
    expect(cold.filter((p) => p === 0n).length / cold.length).toBeGreaterThan(0.02);
    expect(quantile(hot, 0.5)).toBeGreaterThan(median * 4n);
    expect(hot.every((p) => p >= BigInt(DEFAULT_TRAFFIC_OPTIONS.hotFloorPrice))).toBe(true);
    const failing = all.filter((t) => t.failing).length / all.length;
    expect(failing).toBeGreaterThan(0.02);
    expect(failing).toBeLessThan(0.1);
    expect(new Set(all.map((t) => t.recipient)).size).toBe(plan.hot.length + plan.cold.length);
  });

  it("reads its settings from the environment, off by default in tests", () => {
    expect(parseTrafficConfig({}, false).enabled).toBe(false);
    const c = parseTrafficConfig(
      { LOCALNET_TRAFFIC: "1", LOCALNET_TRAFFIC_RATE: "3", LOCALNET_TRAFFIC_SPREAD: "0.5" },
      false,
    );
    expect(c.enabled).toBe(true);
    expect(c.options).toMatchObject({ ratePerSlot: 3, spread: 0.5 });
    expect(() => parseTrafficConfig({ LOCALNET_TRAFFIC_RATE: "many" })).toThrow(/LOCALNET_TRAFFIC_RATE/u);
    // The collection traffic's chance per slot: 0.5 unless told, 0 turns it off, never above 1.
    expect(parseTrafficConfig({}).options.collectionOpsPerSlot).toBe(0.5);
    expect(parseTrafficConfig({ LOCALNET_COLLECTION_TRAFFIC: "0" }).options.collectionOpsPerSlot).toBe(0);
    expect(() => parseTrafficConfig({ LOCALNET_COLLECTION_TRAFFIC: "2" })).toThrow(/LOCALNET_COLLECTION_TRAFFIC/u);
  });
});

describe("traffic on a real chain", () => {
  it("lands every slot through the chain's queue: fees charged, failures recorded, hot accounts dearer", async () => {
    const chain = await createChain({ ...DEFAULT_LOCALNET_CONFIG, slotMs: 1_000_000 });
    const index = createAccountIndex(chain.svm);
    const options = { ...DEFAULT_TRAFFIC_OPTIONS, ratePerSlot: 30 };
    const plan = planTraffic(options);
    index.seedAccounts(plan.accounts as never);
    const runner = startTraffic(chain, createTrafficGenerator(plan, options), (err) => {
      throw err;
    });
    chain.produceBlock(); // the first batch is built on this block's hash
    const blocks = Array.from({ length: 8 }, () => chain.produceBlock()!);
    runner.stop();
    expect(runner.submitted).toBe(9 * 30);
    const txs = blocks.flatMap((b) => b.transactions);
    expect(txs).toHaveLength(8 * 30);
    const failed = txs.filter((t) => t.outcome.err !== null);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((t) => JSON.stringify(t.outcome.err).includes("InstructionError"))).toBe(true);
    expect(new Set(txs.map((t) => t.unitPrice)).size).toBeGreaterThan(100);
    // per block, the cheapest transaction that write-locked a hot account beats the block's floor
    for (const block of blocks) {
      const hotMins = plan.hot.map((h) => block.accountMinUnitPrice.get(h)).filter((p) => p !== undefined);
      expect(hotMins.length).toBeGreaterThan(0);
      for (const p of hotMins) expect(p!).toBeGreaterThanOrEqual(BigInt(options.hotFloorPrice));
      expect(block.minUnitPrice!).toBeLessThan(BigInt(options.hotFloorPrice));
    }
    const wallet = chain.executor.readAccount(plan.wallets[0].address)!;
    expect(wallet.lamports).toBeLessThan(1_000_000_000_000n); // fees (and transfers) paid
  });
});
