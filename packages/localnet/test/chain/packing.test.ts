/**
 * Block packing on the real localnet (a child process through the launcher, kit-built transactions over
 * JSON-RPC): small limits so a few dozen transactions congest it. Costs are recomputed here from what
 * getBlock returns, with agave's constants written out (cost = 17,710 + the requested limit for these
 * transfers: 720 signature + 2 x 300 write locks + 26 data bytes / 4 + 16,384 loaded data).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPairSigner, type Address, type KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { createRandom } from "../../src/world/seeded-random.ts";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

const BLOCK_LIMIT = 200_000;
const ACCOUNT_LIMIT = 100_000;
/** Fixed part of a transfer's cost with SetComputeUnitLimit and SetComputeUnitPrice. */
const BASE = 720 + 600 + 6 + 16_384;

let net: TestLocalnet;
beforeAll(async () => {
  net = await startTestLocalnet({ blockCostLimit: BLOCK_LIMIT, accountCostLimit: ACCOUNT_LIMIT });
});
afterAll(async () => {
  await net?.stop();
});

interface Sent {
  signature: string;
  base64: string;
  price: bigint;
  units: number;
  payer: Address;
  to: Address;
}

async function transfer(
  payer: KeyPairSigner,
  to: Address,
  units: number,
  price: bigint,
  bh: { blockhash: string; lastValidBlockHeight: bigint },
  amount = 1_000_000n,
): Promise<Sent> {
  const { base64, signature } = await signedTransaction(
    payer,
    [
      getSetComputeUnitLimitInstruction({ units }),
      getSetComputeUnitPriceInstruction({ microLamports: price }),
      getTransferSolInstruction({ source: payer, destination: to, amount }),
    ],
    bh,
  );
  return { signature, base64, price, units, payer: payer.address, to };
}

const blockhash = async () => (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
const height = async () => BigInt((await net.call("getBlockHeight", [{ commitment: "processed" }])).result);

/** Sends all while block production is frozen, so they compete from the same start; returns that height. */
async function sendFrozen(txs: readonly Sent[]): Promise<bigint> {
  await net.handle.control({ freeze: true });
  const frozenAt = await height();
  try {
    for (const tx of txs) {
      const r = await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
      expect(r.error).toBeUndefined();
    }
  } finally {
    await net.handle.control({ freeze: false });
  }
  return frozenAt;
}

async function statuses(txs: readonly Sent[]): Promise<({ slot: number } | null)[]> {
  const out: ({ slot: number } | null)[] = [];
  for (let i = 0; i < txs.length; i += 256) {
    const r = await net.call("getSignatureStatuses", [txs.slice(i, i + 256).map((t) => t.signature)]);
    out.push(...r.result.value);
  }
  return out;
}

/** Where each landed: slot and index in its block (null when it did not land). */
async function placements(txs: readonly Sent[]): Promise<({ slot: number; index: number } | null)[]> {
  const found = await statuses(txs);
  const blocks = new Map<number, string[]>();
  for (const s of found) {
    if (s === null || blocks.has(s.slot)) continue;
    const block = await waitFor(`block ${s.slot} confirmed`, async () => {
      const r = await net.call("getBlock", [s.slot, { commitment: "confirmed", transactionDetails: "signatures" }]);
      return r.result as { signatures: string[] } | null;
    });
    blocks.set(s.slot, block.signatures);
  }
  return txs.map((tx, i) => {
    const s = found[i];
    return s ? { slot: s.slot, index: blocks.get(s.slot)!.indexOf(tx.signature) } : null;
  });
}

const costOf = (tx: Sent) => BASE + tx.units;

describe("block packing (agave 3.0's cost tracker and scheduler)", () => {
  it("never lets a block or an account exceed its limit; what does not fit lands in later blocks", async () => {
    const random = createRandom("packing-limits");
    const payers = await Promise.all(Array.from({ length: 4 }, () => fundedSigner(net)));
    const hot = await Promise.all(Array.from({ length: 3 }, async () => (await generateKeyPairSigner()).address));
    const bh = await blockhash();
    const txs: Sent[] = [];
    for (let i = 0; i < 48; i++) {
      const units = 5_000 + random.int(12) * 5_000;
      const price = BigInt(1 + random.int(100_000));
      txs.push(
        await transfer(
          payers[i % payers.length]!,
          hot[random.int(hot.length)]!,
          units,
          price,
          bh,
          1_000_000n + BigInt(i),
        ),
      );
    }
    await sendFrozen(txs);
    await waitFor("all landed", async () => (await statuses(txs)).every((s) => s !== null), 20_000);
    const placed = await placements(txs);
    const blockCost = new Map<number, number>();
    const accountCost = new Map<string, number>();
    txs.forEach((tx, i) => {
      const { slot } = placed[i]!;
      blockCost.set(slot, (blockCost.get(slot) ?? 0) + costOf(tx));
      for (const account of [tx.payer, tx.to]) {
        const key = `${slot}/${account}`;
        accountCost.set(key, (accountCost.get(key) ?? 0) + costOf(tx));
      }
    });
    const total = txs.reduce((n, tx) => n + costOf(tx), 0);
    expect(Math.max(...blockCost.values())).toBeLessThanOrEqual(BLOCK_LIMIT);
    expect(Math.max(...accountCost.values())).toBeLessThanOrEqual(ACCOUNT_LIMIT);
    // Demand was several blocks' worth, so it spread over at least that many blocks.
    expect(blockCost.size).toBeGreaterThanOrEqual(Math.ceil(total / BLOCK_LIMIT));
    expect(blockCost.size).toBeGreaterThan(3);
  });

  it("makes writers beyond an account's limit wait, and takes the highest priority first, ties by arrival", async () => {
    const payer = await fundedSigner(net);
    const bh = await blockhash();
    // 27,710 each: three fit the payer's 100,000 per block, a fourth does not.
    const prices = [5n, 40n, 12n, 33n, 7n, 21n, 40n, 2n, 18n, 27n, 9n, 14n];
    const txs: Sent[] = [];
    for (const [i, price] of prices.entries()) {
      txs.push(
        await transfer(payer, (await generateKeyPairSigner()).address, 10_000, price * 1_000n, bh, 1_000n + BigInt(i)),
      );
    }
    await sendFrozen(txs);
    await waitFor("all landed", async () => (await statuses(txs)).every((s) => s !== null), 20_000);
    const placed = await placements(txs);
    const perBlock = new Map<number, number>();
    for (const p of placed) perBlock.set(p!.slot, (perBlock.get(p!.slot) ?? 0) + 1);
    expect([...perBlock.values()].every((n) => n <= 3)).toBe(true);
    expect(perBlock.size).toBe(4);
    // Landing order (slot, then index) is the priority order: price descending, the two 40s by arrival.
    const order = txs
      .map((tx, i) => ({ i, price: tx.price, at: placed[i]! }))
      .sort((a, b) => a.at.slot - b.at.slot || a.at.index - b.at.index);
    const expected = txs
      .map((tx, i) => ({ i, price: tx.price }))
      .sort((a, b) => (a.price === b.price ? a.i - b.i : a.price > b.price ? -1 : 1));
    expect(order.map((o) => o.i)).toEqual(expected.map((e) => e.i));
  });

  it("keeps a transaction that never fits waiting until its blockhash is 150 blocks old, then drops it", async () => {
    const payer = await fundedSigner(net);
    const bh = await blockhash();
    const lastValid = bh.lastValidBlockHeight;
    // 97,710 each: one per block fits the payer's limit. More than the blocks left to the blockhash. Prices
    // 100 micro-lamports apart make rewards 8 lamports apart (closer ones can round to the same reward).
    const high: Sent[] = [];
    for (let i = 0; i < 150; i++) {
      high.push(
        await transfer(payer, (await generateKeyPairSigner()).address, 80_000, 1_000_000n + 100n * BigInt(i), bh),
      );
    }
    const low = await transfer(payer, (await generateKeyPairSigner()).address, 80_000, 1n, bh);
    const before = (await net.call("localnet_status")).result.expired as number;
    const start = await sendFrozen([low, ...high]);
    expect(lastValid - start).toBeLessThan(150n);
    expect(lastValid - start).toBeGreaterThan(20n);
    await waitFor("the blockhash to expire", async () => (await height()) > lastValid + 2n, 30_000);
    const found = await statuses(high);
    const landed = found.flatMap((s, i) => (s === null ? [] : [i]));
    // One per block from the first block after the sends until the last valid one, highest prices first.
    expect(landed.length).toBe(Number(lastValid - start));
    expect(landed).toEqual(Array.from({ length: landed.length }, (_, k) => high.length - landed.length + k));
    expect(Math.max(...found.flatMap((s) => (s === null ? [] : [BigInt(s.slot)])).map(Number))).toBeLessThanOrEqual(
      Number(lastValid),
    );
    expect((await statuses([low]))[0]).toBeNull();
    const expired = ((await net.call("localnet_status")).result.expired as number) - before;
    expect(expired).toBe(high.length - landed.length + 1);
  });

  it("combines with the faults: dropped sends never reach the buffer, the rest still wait their turn", async () => {
    const payer = await fundedSigner(net);
    const bh = await blockhash();
    const txs: Sent[] = [];
    for (let i = 0; i < 24; i++) {
      txs.push(await transfer(payer, (await generateKeyPairSigner()).address, 10_000, BigInt(1_000 + i), bh));
    }
    await net.call("localnet_setFaults", [{ dropRate: 0.5, seed: 27 }]);
    try {
      await sendFrozen(txs);
    } finally {
      await net.call("localnet_setFaults", [{ dropRate: 0 }]);
    }
    await waitFor("the kept ones to land", async () => {
      const found = await statuses(txs);
      const status = (await net.call("localnet_status")).result;
      return status.queued === 0 && found.some((f) => f !== null) ? found : null;
    });
    await new Promise((r) => setTimeout(r, 200));
    const landed = (await placements(txs)).filter((p) => p !== null);
    // About half were dropped by the fault; the others were packed three per block (the payer's limit).
    expect(landed.length).toBeGreaterThan(4);
    expect(landed.length).toBeLessThan(20);
    const perBlock = new Map<number, number>();
    for (const p of landed) perBlock.set(p!.slot, (perBlock.get(p!.slot) ?? 0) + 1);
    expect(Math.max(...perBlock.values())).toBeLessThanOrEqual(3);
    expect(perBlock.size).toBe(Math.ceil(landed.length / 3));
  });
});

describe("the bounded buffer", () => {
  let small: TestLocalnet;
  beforeAll(async () => {
    small = await startTestLocalnet({ maxQueue: 5 });
  });
  afterAll(async () => {
    await small?.stop();
  });

  it("drops the lowest priority when full, the newcomer when it is the lowest", async () => {
    const payer = await fundedSigner(small);
    const bh = (await small.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
    const prices = [50n, 10n, 70n, 30n, 90n, 20n, 80n, 5n];
    const txs: Sent[] = [];
    for (const price of prices) {
      txs.push(await transfer(payer, (await generateKeyPairSigner()).address, 10_000, price * 1_000n, bh));
    }
    const before = (await small.call("localnet_status")).result.evicted as number;
    await small.handle.control({ freeze: true });
    try {
      for (const tx of txs)
        await small.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
      expect((await small.call("localnet_status")).result.queued).toBe(5);
    } finally {
      await small.handle.control({ freeze: false });
    }
    const landedPrices = async () => {
      const r = await small.call("getSignatureStatuses", [txs.map((t) => t.signature)]);
      return txs.filter((_, i) => r.result.value[i] !== null).map((t) => t.price / 1_000n);
    };
    await waitFor("the five to land", async () => (await landedPrices()).length === 5);
    await new Promise((r) => setTimeout(r, 100));
    expect((await landedPrices()).sort((a, b) => Number(a - b))).toEqual([30n, 50n, 70n, 80n, 90n]);
    expect(((await small.call("localnet_status")).result.evicted as number) - before).toBe(3);
  });
});
