/**
 * getRecentPrioritizationFees as agave 3.0's prioritization-fee cache answers it, on the real localnet:
 * only included transactions count, an unpriced one makes the block's minimum 0, a transaction asking a
 * compute-unit limit of 0 does not count, a block where nothing counted has no entry, blocks enter once
 * confirmed, and an account's figure is max(block minimum, the account's minimum).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPairSigner, type Address, type Instruction, type KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

let net: TestLocalnet;
beforeAll(async () => {
  net = await startTestLocalnet({ slotMs: 20 });
});
afterAll(async () => {
  await net?.stop();
});

const blockhash = async () => (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;

async function sendTogether(txs: { base64: string }[]) {
  await net.handle.control({ freeze: true });
  try {
    for (const tx of txs) await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
  } finally {
    await net.handle.control({ freeze: false });
  }
}

async function confirmedSlot(signature: string): Promise<number> {
  const s = await waitFor(`${signature} confirmed`, async () => {
    const status = (await net.call("getSignatureStatuses", [[signature]])).result.value[0];
    return status && status.confirmationStatus !== "processed" ? status : null;
  });
  return s.slot as number;
}

type Fee = { slot: number; prioritizationFee: number };
const fees = async (accounts: string[] = []): Promise<Fee[]> =>
  (await net.call("getRecentPrioritizationFees", [accounts])).result;

function transfer(payer: KeyPairSigner, to: Address, extra: Instruction[], bh: Awaited<ReturnType<typeof blockhash>>) {
  return signedTransaction(
    payer,
    [...extra, getTransferSolInstruction({ source: payer, destination: to, amount: 1_000_000n })],
    bh,
  );
}

describe("getRecentPrioritizationFees (agave's prioritization-fee cache)", () => {
  it("counts an unpriced transaction as 0 and keeps a written account's higher minimum", async () => {
    const payer = await fundedSigner(net);
    const hot = (await generateKeyPairSigner()).address;
    const cold = (await generateKeyPairSigner()).address;
    const bh = await blockhash();
    const priced = await transfer(payer, hot, [getSetComputeUnitPriceInstruction({ microLamports: 500n })], bh);
    const unpriced = await transfer(payer, cold, [], bh);
    await sendTogether([priced, unpriced]);
    const slot = await confirmedSlot(priced.signature);
    expect(await confirmedSlot(unpriced.signature)).toBe(slot);
    const at = async (accounts: string[]) => (await fees(accounts)).find((f) => f.slot === slot)?.prioritizationFee;
    expect(await at([])).toBe(0);
    expect(await at([hot])).toBe(500);
    // The payer's minimum (0) is not above the block's: pruned, so it answers the block's.
    expect(await at([payer.address])).toBe(0);
    expect(await at([cold, hot])).toBe(500);
  });

  it("leaves out a transaction that asks for a compute-unit limit of 0, and a block where nothing counted", async () => {
    const payer = await fundedSigner(net);
    const bh = await blockhash();
    const zero = await transfer(
      payer,
      (await generateKeyPairSigner()).address,
      [getSetComputeUnitLimitInstruction({ units: 0 }), getSetComputeUnitPriceInstruction({ microLamports: 777n })],
      bh,
    );
    await sendTogether([zero]);
    const slot = await confirmedSlot(zero.signature);
    // It was included (and failed for want of compute units, its fee charged)...
    const block = await net.call("getBlock", [slot, { commitment: "confirmed", transactionDetails: "signatures" }]);
    expect(block.result.signatures).toEqual([zero.signature]);
    // ...but the cache did not count it, so the block has no entry.
    expect((await fees()).map((f) => f.slot)).not.toContain(slot);
  });

  it("answers only confirmed blocks where something counted, at most 150, oldest first", async () => {
    const payer = await fundedSigner(net);
    for (let i = 0; i < 3; i++) {
      const tx = await transfer(
        payer,
        (await generateKeyPairSigner()).address,
        [getSetComputeUnitPriceInstruction({ microLamports: BigInt(10 + i) })],
        await blockhash(),
      );
      await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
      await confirmedSlot(tx.signature);
    }
    const answer = await fees();
    const confirmed = (await net.call("getSlot", [{ commitment: "confirmed" }])).result as number;
    expect(answer.length).toBeGreaterThan(3);
    expect(answer.length).toBeLessThanOrEqual(150);
    expect(answer.every((f, i) => i === 0 || f.slot > answer[i - 1]!.slot)).toBe(true);
    expect(answer.at(-1)!.slot).toBeLessThanOrEqual(confirmed);
    // 20 ms slots with no traffic: most blocks are empty, and none of them is listed.
    for (const { slot } of answer) {
      const block = await net.call("getBlock", [slot, { commitment: "confirmed", transactionDetails: "signatures" }]);
      expect(block.result.signatures.length).toBeGreaterThan(0);
    }
    expect(answer.at(-1)!.slot - answer[0]!.slot).toBeGreaterThan(answer.length);
  });
});
