/**
 * How old a blockhash may be, by method, as agave has it: `getLatestBlockhash` gives the block's height + 150
 * (MAX_PROCESSING_AGE) at every commitment; `isBlockhashValid` holds up to that height; the preflight of
 * `sendTransaction` (and simulation) refuses it with BlockhashNotFound six blocks earlier, past 144
 * (MAX_PROCESSING_AGE - MAX_TRANSACTION_FORWARDING_DELAY: room to forward it to a leader). So a client that
 * holds one blockhash for a minute of sends at 400 ms slots is refused after ~57.6 s, while isBlockhashValid
 * still says yes. The chain is frozen for each sample, so that every answer of a sample is about one height.
 */
import { getTransferSolInstruction } from "@solana-program/system";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundedSigner, signedTransaction, startTestLocalnet, type TestLocalnet } from "../helpers.ts";

let net: TestLocalnet;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  // 50 ms slots: a sample (freeze, reads, a send, thaw) lets at most a block or two pass even on a loaded machine.
  net = await startTestLocalnet({ slotMs: 50, confirmSlots: 1, finalizeSlots: 6 });
});

afterAll(async () => {
  await net?.handle.control({ freeze: false });
  await net?.stop();
});

describe("blockhash age by method", () => {
  it("gives the read block's height + 150 at every commitment", async () => {
    // Past the genesis block at every commitment.
    while ((await net.rpc.getBlockHeight({ commitment: "finalized" }).send()) < 10n) await sleep(10);
    await net.handle.control({ freeze: true });
    try {
      for (const commitment of ["processed", "confirmed", "finalized"] as const) {
        const { context, value } = await net.rpc.getLatestBlockhash({ commitment }).send();
        const height = await net.rpc.getBlockHeight({ commitment }).send();
        expect(value.lastValidBlockHeight).toBe(height + 150n);
        if (commitment !== "processed") {
          const block = await net.rpc
            .getBlock(context.slot, { commitment, transactionDetails: "none", rewards: false })
            .send();
          expect({ blockhash: block!.blockhash, blockHeight: block!.blockHeight }).toEqual({
            blockhash: value.blockhash,
            blockHeight: height,
          });
        }
        // Valid at its own commitment and at every later bank, unknown to an earlier one.
        for (const at of ["processed", "confirmed", "finalized"] as const) {
          const atHeight = await net.rpc.getBlockHeight({ commitment: at }).send();
          const { value: valid } = await net.rpc.isBlockhashValid(value.blockhash, { commitment: at }).send();
          expect({ commitment, at, valid }).toEqual({ commitment, at, valid: atHeight >= height });
        }
      }
    } finally {
      await net.handle.control({ freeze: false });
    }
  });

  it("accepts a send's preflight up to 144 blocks of age, and says valid up to 150", async () => {
    const payer = await fundedSigner(net, 1_000_000_000n);
    const { value } = await net.rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
    const produced = value.lastValidBlockHeight - 150n;
    const seen = new Map<bigint, { preflight: boolean; valid: boolean }>();
    let lamports = 1n;
    for (const deadline = Date.now() + 30_000; ; ) {
      await net.handle.control({ freeze: true });
      const age = (await net.rpc.getBlockHeight({ commitment: "processed" }).send()) - produced;
      const { value: valid } = await net.rpc.isBlockhashValid(value.blockhash, { commitment: "processed" }).send();
      const tx = await signedTransaction(
        payer,
        [getTransferSolInstruction({ source: payer, destination: payer.address, amount: lamports++ })],
        value,
      );
      const sent = await net.call("sendTransaction", [
        tx.base64,
        { encoding: "base64", preflightCommitment: "processed" },
      ]);
      if (sent.error !== undefined) {
        expect(sent.error).toMatchObject({ code: -32002, data: { err: "BlockhashNotFound" } });
      }
      seen.set(age, { preflight: sent.error === undefined, valid });
      await net.handle.control({ freeze: false });
      if (age > 151n || Date.now() > deadline) break;
      // Near the boundaries, one block or none per sample; far from them, let the chain run.
      if (age < 140n) await sleep(100);
    }
    for (const [age, answer] of seen) {
      expect({ age, ...answer }).toEqual({ age, preflight: age <= 144n, valid: age <= 150n });
    }
    // The samples straddle both limits, including an age where the two methods disagree.
    const ages = [...seen.keys()];
    expect(ages.some((a) => a <= 144n)).toBe(true);
    expect(ages.some((a) => a > 144n && a <= 150n)).toBe(true);
    expect(ages.some((a) => a > 150n)).toBe(true);
  }, 60_000);
});
