/**
 * Commitment progression with configured depths: a transaction is processed in its slot,
 * confirmed `confirmSlots` later and finalized `finalizeSlots` later; reads at each commitment
 * see it only from then on.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { generateKeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "./helpers.ts";

let net: TestLocalnet;
beforeAll(async () => {
  net = await startTestLocalnet({ slotMs: 60, confirmSlots: 2, finalizeSlots: 5 });
});
afterAll(async () => {
  await net?.stop();
});

it("moves a transaction processed -> confirmed -> finalized at the configured depths", async () => {
  const payer = await fundedSigner(net, 1_000_000_000n);
  const to = await generateKeyPairSigner();
  const { value: bh } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
  const tx = await signedTransaction(
    payer,
    [getTransferSolInstruction({ source: payer, destination: to.address, amount: 2_000_000n })],
    bh,
  );
  expect((await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }])).result).toBe(
    tx.signature,
  );

  const seen: string[] = [];
  const observations: { level: string; depth: number; confirmations: number | null; tx: unknown; block: any }[] = [];
  await waitFor(
    "finalized",
    async () => {
      const { result } = await net.call("getSignatureStatuses", [[tx.signature]]);
      const status = result.value[0];
      if (status === null) return false;
      const depth = Number(result.context.slot) - Number(status.slot);
      const level = status.confirmationStatus as string;
      if (seen.at(-1) !== level) {
        seen.push(level);
        const confirmedTx = (
          await net.call("getTransaction", [
            tx.signature,
            { commitment: "confirmed", maxSupportedTransactionVersion: 0 },
          ])
        ).result;
        const block = await net.call("getBlock", [
          status.slot,
          { commitment: "finalized", transactionDetails: "none" },
        ]);
        observations.push({ level, depth, confirmations: status.confirmations, tx: confirmedTx, block });
      }
      // The rule, checked on every observation whatever the timing.
      if (level === "processed") expect(depth).toBeLessThan(2);
      if (level === "confirmed") expect(depth).toBeGreaterThanOrEqual(2);
      if (level === "finalized") expect(depth).toBeGreaterThanOrEqual(5);
      expect(status.confirmations === null).toBe(level === "finalized");
      return level === "finalized";
    },
    15_000,
  );
  expect(seen).toEqual(["processed", "confirmed", "finalized"]);
  const [processed, confirmed, finalized] = observations;
  expect(processed!.tx).toBeNull(); // not yet visible at confirmed
  expect(processed!.block.error.code).toBe(-32004);
  expect(confirmed!.tx).not.toBeNull();
  expect(confirmed!.block.error.code).toBe(-32004); // not yet finalized
  expect(finalized!.block.result.blockhash).toEqual(expect.any(String));
  expect(
    BigInt((await net.call("getTransaction", [tx.signature, { maxSupportedTransactionVersion: 0 }])).result.slot),
  ).toBeGreaterThan(0n);
});

it("notifies signature subscriptions at the requested commitment", async () => {
  const payer = await fundedSigner(net, 1_000_000_000n);
  const { value: bh } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
  const tx = await signedTransaction(
    payer,
    [getTransferSolInstruction({ source: payer, destination: payer.address, amount: 1n })],
    bh,
  );
  const abort = new AbortController();
  const notifications = await net.subscriptions
    .signatureNotifications(tx.signature as never, { commitment: "finalized" })
    .subscribe({ abortSignal: abort.signal });
  await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
  for await (const n of notifications) {
    expect(n.value.err).toBeNull();
    const status = (await net.call("getSignatureStatuses", [[tx.signature]])).result.value[0];
    expect(status.confirmationStatus).toBe("finalized");
    expect(BigInt(n.context.slot)).toBeGreaterThanOrEqual(BigInt(status.slot)); // the finalized slot that includes it
    break;
  }
  abort.abort();
});
