/**
 * Bundles under the `congested` traffic profile (real localnet child, background traffic sending more
 * than the blocks hold, small limits so it stays cheap): a high tip outbids the traffic's fees and lands
 * at once; a minimum tip is outbid and waits behind it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address, generateKeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getSetComputeUnitLimitInstruction } from "@solana-program/compute-budget";
import { JitoJsonRpcClient } from "jito-js-rpc";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

let net: TestLocalnet;
let jito: JitoJsonRpcClient;
beforeAll(async () => {
  net = await startTestLocalnet({
    slotMs: 100,
    world: false,
    traffic: { profile: "congested" },
    blockCostLimit: 3_000_000,
  });
  jito = new JitoJsonRpcClient(net.handle.blockEngineUrl);
});
afterAll(async () => {
  await net?.stop();
});

describe("bundles under the congested profile", () => {
  it("a high tip lands in the next block while the blocks are full; a minimum tip is outbid", async () => {
    const payer = await fundedSigner(net, 50_000_000_000n);
    const [tipAccount] = (await jito.getTipAccounts()).result as string[];
    // The blocks are full: transactions wait in the buffer.
    await waitFor(
      "full blocks",
      async () => {
        const status = (await net.handle.status()) as any;
        // Several blocks' worth waiting (not only the hot accounts' overflow).
        return status.queued >= 1_000 && status.lastBlock.cost > status.lastBlock.blockCostLimit * 0.8;
      },
      30_000,
    );
    const bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
    const bundle = async (tip: bigint, amount: bigint) => {
      const tx = await signedTransaction(
        payer,
        [
          // A large compute-unit request: the transfer's own reward per unit is then far below the traffic's.
          getSetComputeUnitLimitInstruction({ units: 1_000_000 }),
          getTransferSolInstruction({ source: payer, destination: (await generateKeyPairSigner()).address, amount }),
          getTransferSolInstruction({ source: payer, destination: address(tipAccount!), amount: tip }),
        ],
        bh,
      );
      return (await jito.sendBundle([[tx.base64], { encoding: "base64" }])).result as string;
    };
    // Both sent while the chain stands still, so they compete for the same next block.
    await net.handle.control({ freeze: true });
    let sentAt: number;
    let low: string;
    let high: string;
    try {
      sentAt = Number((await net.call("getSlot", [{ commitment: "processed" }])).result);
      low = await bundle(1_000n, 1_000_001n);
      high = await bundle(1_000_000_000n, 1_000_002n);
    } finally {
      await net.handle.control({ freeze: false });
    }
    const highStatus = await waitFor(
      "the high tip",
      async () => {
        const v = ((await jito.getInFlightBundleStatuses([[high]])).result as any).value[0];
        return v.status === "Landed" ? v : null;
      },
      20_000,
    );
    // The first block after the freeze: the traffic waiting in the buffer does not delay it.
    expect(highStatus.landed_slot).toBe(sentAt + 1);
    const lowStatus = ((await jito.getInFlightBundleStatuses([[low]])).result as any).value[0];
    // Outbid by the traffic: not in that first block.
    if (lowStatus.status === "Landed") expect(lowStatus.landed_slot).toBeGreaterThan(highStatus.landed_slot);
    else expect(["Pending", "Failed"]).toContain(lowStatus.status);
  }, 60_000);
});
