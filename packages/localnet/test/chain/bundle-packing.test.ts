/**
 * Bundles in the block packing (real localnet with small limits, so a dozen transfers fill several
 * blocks): a bundle competes with transactions by (tip + fees) per compute unit, as a unit; and the extra
 * send-only ports drop at their own rates.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { address, generateKeyPairSigner, type Address, type Instruction, type KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { JitoJsonRpcClient } from "jito-js-rpc";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

const BLOCK_LIMIT = 200_000;

let net: TestLocalnet;
let jito: JitoJsonRpcClient;
let tipAccounts: string[];
beforeAll(async () => {
  net = await startTestLocalnet({
    blockCostLimit: BLOCK_LIMIT,
    accountCostLimit: BLOCK_LIMIT,
    sendPorts: [{ dropRate: 0.9 }, { dropRate: 0.5 }, { dropRate: 0 }],
  });
  jito = new JitoJsonRpcClient(net.handle.blockEngineUrl);
  tipAccounts = (await jito.getTipAccounts()).result as string[];
});
afterAll(async () => {
  await net?.stop();
});

const blockhash = async () => (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;

/** A transfer with a compute budget (30,000 units at `price`), optionally tipping. */
async function transfer(
  payer: KeyPairSigner,
  to: Address,
  amount: bigint,
  price: bigint,
  bh: { blockhash: string; lastValidBlockHeight: bigint },
  tip = 0n,
) {
  const instructions: Instruction[] = [
    getSetComputeUnitLimitInstruction({ units: 30_000 }),
    getSetComputeUnitPriceInstruction({ microLamports: price }),
    getTransferSolInstruction({ source: payer, destination: to, amount }),
  ];
  if (tip > 0n) {
    instructions.push(getTransferSolInstruction({ source: payer, destination: address(tipAccounts[2]!), amount: tip }));
  }
  return signedTransaction(payer, instructions, bh);
}

async function slotsOf(signatures: string[]): Promise<(number | null)[]> {
  const r = await net.call("getSignatureStatuses", [signatures]);
  return r.result.value.map((s: { slot: number } | null) => s?.slot ?? null);
}

describe("bundles in the block packing", () => {
  it("a higher-tipped bundle lands before lower ones when blocks are full; a low tip waits behind fees", async () => {
    const payers = await Promise.all(Array.from({ length: 4 }, () => fundedSigner(net)));
    const tipper = await fundedSigner(net);
    const bh = await blockhash();
    // 12 transfers at 1,000,000 micro-lamports per unit: about 4 fill a 200,000-unit block.
    const regular = await Promise.all(
      Array.from({ length: 12 }, async (_, i) =>
        transfer(payers[i % 4]!, (await generateKeyPairSigner()).address, 1_000_000n + BigInt(i), 1_000_000n, bh),
      ),
    );
    // Bundles: no priority fee, only a tip: 5,000,000 (high), 500,000 (middle) and 1,000 lamports (low).
    const tips = [1_000n, 500_000n, 5_000_000n];
    const bundles = await Promise.all(
      tips.map(async (tip, i) =>
        transfer(tipper, (await generateKeyPairSigner()).address, 2_000_000n + BigInt(i), 0n, bh, tip),
      ),
    );
    await net.handle.control({ freeze: true });
    const frozenAt = Number((await net.call("getSlot", [{ commitment: "processed" }])).result);
    try {
      for (const tx of regular) {
        const r = await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
        expect(r.error).toBeUndefined();
      }
      // Sent last (lowest tip first): arrival order does not decide, priority does.
      for (const tx of bundles) {
        const r = await jito.sendBundle([[tx.base64], { encoding: "base64" }]);
        expect(typeof r.result).toBe("string");
      }
    } finally {
      await net.handle.control({ freeze: false });
    }
    const all = [...regular, ...bundles].map((t) => t.signature);
    await waitFor("all landed", async () => (await slotsOf(all)).every((s) => s !== null), 20_000);
    const regularSlots = (await slotsOf(regular.map((t) => t.signature))) as number[];
    const [low, middle, high] = (await slotsOf(bundles.map((t) => t.signature))) as number[];
    const firstBlock = frozenAt + 1;
    // The regular transfers needed several blocks.
    expect(Math.max(...regularSlots)).toBeGreaterThan(firstBlock + 1);
    // High and middle outbid every transfer: first block. The low tip is below the transfers' fee per
    // unit: it waits until they are all in.
    expect(high).toBe(firstBlock);
    expect(middle).toBe(firstBlock);
    expect(low!).toBeGreaterThanOrEqual(Math.max(...regularSlots));
  });

  it("checks a bundle against the block limit as a unit: 4 members that fit land in one block, 5 that never fit expire", async () => {
    const payer = await fundedSigner(net);
    const bh = await blockhash();
    // Each member costs 17,710 + 30,000 units (+ the tip's write lock on the first): 4 fit 200,000, 5 do not.
    const members = async (n: number, salt: bigint) =>
      Promise.all(
        Array.from({ length: n }, async (_, i) =>
          transfer(payer, (await generateKeyPairSigner()).address, salt + BigInt(i), 1n, bh, i === 0 ? 5_000n : 0n),
        ),
      );
    const fits = await members(4, 3_000_000n);
    const tooBig = await members(5, 4_000_000n);
    const fitsId = (await jito.sendBundle([fits.map((t) => t.base64), { encoding: "base64" }])).result as string;
    const tooBigId = (await jito.sendBundle([tooBig.map((t) => t.base64), { encoding: "base64" }])).result as string;
    const landed = await waitFor("the 4-member bundle", async () => {
      const v = ((await jito.getInFlightBundleStatuses([[fitsId]])).result as any).value[0];
      return v.status === "Landed" ? v : null;
    });
    expect(new Set(await slotsOf(fits.map((t) => t.signature)))).toEqual(new Set([landed.landed_slot]));
    // The 5-member bundle waits whole (never split over blocks) until its blockhash expires (150 blocks).
    const failed = await waitFor(
      "the 5-member bundle to expire",
      async () => {
        const v = ((await jito.getInFlightBundleStatuses([[tooBigId]])).result as any).value[0];
        return v.status === "Failed" ? v : null;
      },
      30_000,
    );
    expect(failed.reason).toMatch(/expired/);
    expect(await slotsOf(tooBig.map((t) => t.signature))).toEqual([null, null, null, null, null]);
  });

  it("the block engine's sendTransaction (no bundleOnly) also bids as a bundle by its tip, as Jito's does", async () => {
    // Jito's sendTransaction sends the transaction as a regular one AND submits it as a bundle (bundleOnly:
    // the bundle alone). So a tipped transaction sent there competes by its tip; the same sent to the node
    // competes by its fees alone.
    const payers = await Promise.all(Array.from({ length: 4 }, () => fundedSigner(net)));
    const tipper = await fundedSigner(net);
    const bh = await blockhash();
    const regular = await Promise.all(
      Array.from({ length: 12 }, async (_, i) =>
        transfer(payers[i % 4]!, (await generateKeyPairSigner()).address, 5_000_000n + BigInt(i), 1_000_000n, bh),
      ),
    );
    // No priority fee, a 5,000,000-lamport tip: it outbids every transfer as a bundle, and none as a transaction.
    const viaEngine = await transfer(tipper, (await generateKeyPairSigner()).address, 6_000_000n, 0n, bh, 5_000_000n);
    const viaNode = await transfer(tipper, (await generateKeyPairSigner()).address, 6_000_001n, 0n, bh, 5_000_000n);
    await net.handle.control({ freeze: true });
    const frozenAt = Number((await net.call("getSlot", [{ commitment: "processed" }])).result);
    let bundleHeader: string | null;
    try {
      for (const tx of regular) {
        const r = await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
        expect(r.error).toBeUndefined();
      }
      expect(
        (await net.call("sendTransaction", [viaNode.base64, { encoding: "base64", skipPreflight: true }])).result,
      ).toBe(viaNode.signature);
      const response = await fetch(`${net.handle.blockEngineUrl}/transactions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "sendTransaction",
          params: [viaEngine.base64, { encoding: "base64", skipPreflight: true }],
        }),
      });
      expect(((await response.json()) as any).result).toBe(viaEngine.signature);
      bundleHeader = response.headers.get("x-bundle-id");
    } finally {
      await net.handle.control({ freeze: false });
    }
    const all = [...regular, viaEngine, viaNode].map((t) => t.signature);
    await waitFor("all landed", async () => (await slotsOf(all)).every((s) => s !== null), 20_000);
    const regularSlots = (await slotsOf(regular.map((t) => t.signature))) as number[];
    const [engineSlot, nodeSlot] = (await slotsOf([viaEngine.signature, viaNode.signature])) as number[];
    expect(Math.max(...regularSlots)).toBeGreaterThan(frozenAt + 2);
    // The engine's copy went as a bundle too: first block, its id in x-bundle-id as Jito answers it.
    expect(engineSlot).toBe(frozenAt + 1);
    expect(bundleHeader).toBe(createHash("sha256").update(viaEngine.signature).digest("hex"));
    // The node's copy (no fee per unit) waited behind the transfers.
    expect(nodeSlot!).toBeGreaterThanOrEqual(Math.max(...regularSlots));
    // It landed once: the regular copy, behind it in the buffer, was then a duplicate.
    const landedAt = (await net.call("getSignatureStatuses", [[viaEngine.signature]])).result.value[0];
    expect(landedAt.err).toBeNull();
  });

  it("the block engine's sendTransaction drops at the engine's rate, not the node's", async () => {
    const payer = await fundedSigner(net);
    const bh = await blockhash();
    const sendVia = async (url: string, i: number) => {
      const tx = await transfer(payer, (await generateKeyPairSigner()).address, 3_000_000n + BigInt(i), 1n, bh);
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "sendTransaction",
          params: [tx.base64, { encoding: "base64", skipPreflight: true }],
        }),
      });
      expect(((await response.json()) as any).result).toBe(tx.signature);
      return tx.signature;
    };
    // The node drops every send; the engine's own drop rate (bundleDropRate) is 0.
    await net.handle.control({ dropRate: 1 });
    try {
      const viaNode: string[] = [];
      const viaEngine: string[] = [];
      for (let i = 0; i < 10; i++) {
        viaNode.push(await sendVia(net.handle.rpcUrl, i));
        viaEngine.push(await sendVia(`${net.handle.blockEngineUrl}/transactions`, 100 + i));
      }
      await waitFor("engine sends landed", async () => (await slotsOf(viaEngine)).every((s) => s !== null));
      expect((await slotsOf(viaNode)).filter((s) => s !== null)).toEqual([]);
    } finally {
      await net.handle.control({ dropRate: 0 });
    }
  }, 30_000);

  it("serves the extra send-only ports, each dropping at its own rate", async () => {
    const urls = net.handle.sendUrls;
    expect(urls).toHaveLength(3);
    expect(new Set(urls).size).toBe(3);
    const payer = await fundedSigner(net);
    const landedShare: number[] = [];
    for (const url of urls) {
      const bh = await blockhash();
      const sent: string[] = [];
      for (let i = 0; i < 40; i++) {
        const tx = await transfer(payer, (await generateKeyPairSigner()).address, 1_000_000n + BigInt(i), 1n, bh);
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "sendTransaction",
            params: [tx.base64, { encoding: "base64", skipPreflight: true }],
          }),
        });
        const body = (await response.json()) as any;
        // Accepted either way: a dropped send is answered like a kept one.
        expect(body.result).toBe(tx.signature);
        sent.push(tx.signature);
      }
      // A few slots for the kept ones to land.
      const slot = Number((await net.call("getSlot", [{ commitment: "processed" }])).result);
      await waitFor(
        "slots",
        async () => Number((await net.call("getSlot", [{ commitment: "processed" }])).result) > slot + 10,
      );
      landedShare.push((await slotsOf(sent)).filter((s) => s !== null).length / sent.length);
    }
    // Configured 0.9, 0.5 and 0 drop rates (a seeded draw of 40 each).
    expect(landedShare[0]).toBeLessThan(0.3);
    expect(landedShare[1]).toBeGreaterThan(0.2);
    expect(landedShare[1]).toBeLessThan(0.8);
    expect(landedShare[2]).toBe(1);
    // The control API reports the paths and changes a path's rate at run time.
    const status = (await net.handle.status()) as any;
    expect(status.sendPaths).toEqual([
      { url: urls[0], dropRate: 0.9 },
      { url: urls[1], dropRate: 0.5 },
      { url: urls[2], dropRate: 0 },
    ]);
    expect(await net.handle.setSendPathDropRate(0, 0)).toEqual({ url: urls[0], dropRate: 0 });
    const bh = await blockhash();
    const kept: string[] = [];
    for (let i = 0; i < 10; i++) {
      const tx = await transfer(payer, (await generateKeyPairSigner()).address, 2_000_000n + BigInt(i), 1n, bh);
      await fetch(urls[0]!, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "sendTransaction",
          params: [tx.base64, { encoding: "base64", skipPreflight: true }],
        }),
      });
      kept.push(tx.signature);
    }
    await waitFor("all 10 landed", async () => (await slotsOf(kept)).every((s) => s !== null));
    await expect(net.handle.setSendPathDropRate(3, 0.5)).rejects.toThrow(/no send path 3/);
    // A send-only port serves nothing else.
    const other = await fetch(urls[0]!, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getSlot", params: [] }),
    });
    expect(((await other.json()) as any).error.code).toBe(-32601);
  });
});
