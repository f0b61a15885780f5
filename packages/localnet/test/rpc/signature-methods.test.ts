/**
 * getSignaturesForAddress from the localnet's own history, against a recorded mainnet answer's
 * shape: newest first, before / until / limit, failed transactions with their error, memos as
 * agave formats them, and agave's refusals.
 */
import { generateKeyPairSigner, type Address, type KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixture, shapeDiff } from "../accounts/helpers.ts";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr" as Address;

let net: TestLocalnet;
let payer: KeyPairSigner;
const sent: string[] = [];
let failed: string;

beforeAll(async () => {
  net = await startTestLocalnet();
  payer = await fundedSigner(net);
  const to = await generateKeyPairSigner();
  const send = async (instructions: Parameters<typeof signedTransaction>[1], skipPreflight = false) => {
    const bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
    const tx = await signedTransaction(payer, instructions, bh);
    const res = await net.call("sendTransaction", [
      tx.base64,
      { encoding: "base64", skipPreflight, preflightCommitment: "processed" },
    ]);
    expect(res.error, JSON.stringify(res.error)).toBeUndefined();
    await waitFor("landed", async () => (await net.call("getSignatureStatuses", [[tx.signature]])).result.value[0]);
    return tx.signature;
  };
  sent.push(await send([getTransferSolInstruction({ source: payer, destination: to.address, amount: 1_000_000n })]));
  sent.push(
    await send([
      { programAddress: MEMO_PROGRAM, accounts: [], data: new TextEncoder().encode("hello") },
      { programAddress: MEMO_PROGRAM, accounts: [], data: new TextEncoder().encode("wörld") },
    ]),
  );
  failed = await send(
    [getTransferSolInstruction({ source: payer, destination: to.address, amount: 10n ** 18n })],
    true,
  );
  sent.push(failed);
  sent.push(await send([getTransferSolInstruction({ source: payer, destination: to.address, amount: 2_000_000n })]));
  // All confirmed.
  await waitFor("confirmed", async () => {
    const statuses = (await net.call("getSignatureStatuses", [sent])).result.value;
    return statuses.every((s: { confirmationStatus: string } | null) => s && s.confirmationStatus !== "processed");
  });
}, 30_000);
afterAll(async () => {
  await net?.stop();
});

const list = async (config: Record<string, unknown> = {}) =>
  net.call("getSignaturesForAddress", [payer.address, { commitment: "confirmed", ...config }]);

describe("getSignaturesForAddress", () => {
  it("lists the address's transactions newest first, in the recorded node's shape", async () => {
    const { result } = await list();
    const mine = result.map((r: { signature: string }) => r.signature);
    // The airdrop that funded the payer comes last (oldest).
    expect(mine.slice(0, 4)).toEqual([...sent].reverse());
    expect(result).toHaveLength(5);
    const recorded = fixture("rpc/getSignaturesForAddress_with_errors.json").result;
    // agave 4.4 adds transactionIndex (the recorded answer predates it): the position in its block.
    const { transactionIndex, ...rest } = result[0];
    expect(shapeDiff(rest, recorded[0])).toEqual([]);
    for (const entry of result) {
      const { signatures } = (
        await net.call("getBlock", [
          entry.slot,
          { commitment: "confirmed", transactionDetails: "signatures", rewards: false },
        ])
      ).result;
      expect(entry.transactionIndex).toBe(signatures.indexOf(entry.signature));
    }
    expect(typeof transactionIndex).toBe("number");
    for (const entry of result) expect(["confirmed", "finalized"]).toContain(entry.confirmationStatus);
    const failedEntry = result.find((r: { signature: string }) => r.signature === failed);
    expect(failedEntry.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    const memoEntry = result.find((r: { signature: string }) => r.signature === sent[1]);
    // agave's extract_and_fmt_memos: "[<bytes>] <text>" per memo instruction, joined by "; ".
    expect(memoEntry.memo).toBe("[5] hello; [6] wörld");
    expect(result[0].memo).toBeNull();
    const block = (
      await net.call("getBlock", [
        result[0].slot,
        { commitment: "confirmed", transactionDetails: "none", rewards: false },
      ])
    ).result;
    expect(result[0].blockTime).toBe(block.blockTime);
  });

  it("pages with limit, before and until (both exclusive)", async () => {
    expect((await list({ limit: 1 })).result.map((r: { signature: string }) => r.signature)).toEqual([sent[3]]);
    const before = (await list({ before: sent[3], limit: 2 })).result.map((r: { signature: string }) => r.signature);
    expect(before).toEqual([sent[2], sent[1]]);
    const until = (await list({ until: sent[1] })).result.map((r: { signature: string }) => r.signature);
    expect(until).toEqual([sent[3], sent[2]]);
  });

  it("waits for finality at the default commitment and refuses processed", async () => {
    const finalized = await net.call("getSignaturesForAddress", [payer.address]);
    for (const entry of finalized.result) expect(entry.confirmationStatus).toBe("finalized");
    expect((await list({ commitment: "processed" })).error).toEqual({
      code: -32602,
      message: "Method does not support commitment below `confirmed`",
    });
  });

  it("refuses a limit outside 1-1,000, bad addresses and signatures, and an unreached minContextSlot", async () => {
    for (const limit of [0, 1001])
      expect((await list({ limit })).error).toEqual({ code: -32602, message: "Invalid limit; max 1000" });
    expect((await net.call("getSignaturesForAddress", ["xyz"])).error.code).toBe(-32602);
    expect((await list({ before: "abc" })).error.code).toBe(-32602);
    expect((await list({ minContextSlot: 10_000_000 })).error.code).toBe(-32016);
    const stranger = await generateKeyPairSigner();
    expect((await net.call("getSignaturesForAddress", [stranger.address])).result).toEqual([]);
  });
});

describe("getSignatureStatuses", () => {
  it("reads the bank at the config's commitment and checks minContextSlot, as agave 4.4 does", async () => {
    const to = await generateKeyPairSigner();
    const bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
    const tx = await signedTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: to.address, amount: 3_000_000n })],
      bh,
    );
    await net.call("sendTransaction", [tx.base64, { encoding: "base64", preflightCommitment: "processed" }]);
    const landed = await waitFor(
      "processed",
      async () => (await net.call("getSignatureStatuses", [[tx.signature]])).result.value[0],
    );
    const atFinalized = (await net.call("getSignatureStatuses", [[tx.signature], { commitment: "finalized" }])).result;
    const finalizedAfter = (await net.call("getSlot", [{ commitment: "finalized" }])).result;
    // The finalized bank's slot is the context (3.0 answered from the processed bank).
    expect(atFinalized.context.slot).toBeLessThanOrEqual(finalizedAfter);
    // A signature the finalized bank has not seen is null there.
    if (landed.slot > atFinalized.context.slot) expect(atFinalized.value[0]).toBeNull();
    else expect(atFinalized.value[0].slot).toBe(landed.slot);
    expect((await net.call("getSignatureStatuses", [[tx.signature], { minContextSlot: 1e12 }])).error).toMatchObject({
      code: -32016,
      message: "Minimum context slot has not been reached",
    });
  });
});

describe("base58 with maxSupportedTransactionVersion >= 1", () => {
  it("is refused by getBlock and getTransaction, as agave 4.4 does (0 is still served)", async () => {
    const refusal = {
      code: -32602,
      message: "base58 encoding is not supported with maxSupportedTransactionVersion >= 1",
    };
    const status = (await net.call("getSignatureStatuses", [[sent[0]]])).result.value[0];
    for (const encoding of ["base58", "binary"]) {
      const config = { encoding, maxSupportedTransactionVersion: 1, commitment: "confirmed" };
      expect((await net.call("getBlock", [status.slot, config])).error).toEqual(refusal);
      expect((await net.call("getTransaction", [sent[0], config])).error).toEqual(refusal);
    }
    const served = await net.call("getTransaction", [
      sent[0],
      { encoding: "base58", maxSupportedTransactionVersion: 0, commitment: "confirmed" },
    ]);
    expect(served.error).toBeUndefined();
    expect(served.result.transaction[1]).toBe("base58");
  });
});
