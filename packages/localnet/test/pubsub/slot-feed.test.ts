/**
 * slotSubscribe, slotsUpdatesSubscribe, rootSubscribe and signatureSubscribe against a launched
 * localnet: shapes, ordering against the configured commitment depths, unsubscribe.
 */
import { generateKeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fundedSigner, startTestLocalnet, type TestLocalnet } from "../helpers.ts";
import { landedSlot, transfer } from "./tx-helpers.ts";
import { connect, sleep, type WsClient } from "./ws-client.ts";

const CONFIRM = 2;
const FINALIZE = 5;
let net: TestLocalnet;
let ws: WsClient;
beforeAll(async () => {
  net = await startTestLocalnet({ slotMs: 25, confirmSlots: CONFIRM, finalizeSlots: FINALIZE });
  ws = await connect(net.handle.wsUrl);
});
afterAll(async () => {
  ws?.close();
  await net?.stop();
});

it("slot, root and slot-update notifications follow the commitment depths", async () => {
  const slots = await ws.subscribe("slotSubscribe");
  const roots = await ws.subscribe("rootSubscribe");
  const updates = await ws.subscribe("slotsUpdatesSubscribe");
  await ws.next(roots, () => ws.received(roots).length >= 3);
  const slotNote = ws.received(slots).at(-1)!;
  expect(slotNote.params.result).toEqual({
    parent: slotNote.params.result.slot - 1,
    root: slotNote.params.result.slot - FINALIZE,
    slot: slotNote.params.result.slot,
  });
  const rootSlots = ws.received(roots).map((n) => n.params.result);
  for (const r of rootSlots) expect(typeof r).toBe("number");
  expect(rootSlots).toEqual(rootSlots.map((_, i) => rootSlots[0] + i));
  // Each root arrives with the slot FINALIZE past it.
  const firstRoot = ws.received(roots)[0]!;
  const announced = ws.log.slice(0, ws.log.indexOf(firstRoot)).filter((n) => n.params.subscription === slots);
  expect(announced.at(-1)!.params.result.slot).toBe(firstRoot.params.result + FINALIZE);

  const byType = (type: string) =>
    ws
      .received(updates)
      .filter((n) => n.params.result.type === type)
      .map((n) => n.params.result);
  const created = byType("createdBank")[0];
  expect(created).toEqual({
    type: "createdBank",
    parent: created.slot - 1,
    slot: created.slot,
    timestamp: expect.any(Number),
  });
  expect(Math.abs(created.timestamp - Date.now())).toBeLessThan(60_000);
  expect(byType("completed")[0]).toEqual({ type: "completed", slot: created.slot, timestamp: expect.any(Number) });
  expect(byType("frozen")[0]).toEqual({
    type: "frozen",
    slot: created.slot,
    timestamp: expect.any(Number),
    stats: {
      numTransactionEntries: 0,
      numSuccessfulTransactions: 0,
      numFailedTransactions: 0,
      maxTransactionsPerEntry: 0,
    },
  });
  const confirmedAt = byType("optimisticConfirmation")[0];
  expect(confirmedAt).toEqual({
    type: "optimisticConfirmation",
    slot: confirmedAt.slot,
    timestamp: expect.any(Number),
  });
  const rootUpdate = byType("root")[0];
  expect(rootUpdate).toEqual({ type: "root", slot: rootSlots[0], timestamp: expect.any(Number) });
  // optimisticConfirmation for slot s comes in the same batch as createdBank for s + CONFIRM.
  const list = ws.received(updates).map((n) => n.params.result);
  const at = list.findIndex((u) => u.type === "optimisticConfirmation");
  const batchCreated = list
    .slice(0, at)
    .filter((u) => u.type === "createdBank")
    .at(-1);
  expect(batchCreated.slot).toBe(list[at].slot + CONFIRM);

  for (const id of [slots, roots, updates])
    expect(
      (
        await ws.request(
          id === slots ? "slotUnsubscribe" : id === roots ? "rootUnsubscribe" : "slotsUpdatesUnsubscribe",
          [id],
        )
      ).result,
    ).toBe(true);
  const counts = [slots, roots, updates].map((id) => ws.received(id).length);
  await sleep(25 * 6);
  expect([slots, roots, updates].map((id) => ws.received(id).length)).toEqual(counts);
});

it("frozen stats count a block's successful and failed transactions", async () => {
  const updates = await ws.subscribe("slotsUpdatesSubscribe");
  const payer = await fundedSigner(net, 1_000_000_000n);
  const to = (await generateKeyPairSigner()).address;
  const bad = await transfer(net, payer, to, 5_000_000_000n, 0, true);
  const slot = await landedSlot(net, bad);
  const frozen = await ws.next(updates, (n) => n.params.result.type === "frozen" && n.params.result.slot === slot);
  expect(frozen.params.result.stats).toEqual({
    numTransactionEntries: 1,
    numSuccessfulTransactions: 0,
    numFailedTransactions: 1,
    maxTransactionsPerEntry: 1,
  });
  await ws.request("slotsUpdatesUnsubscribe", [updates]);
});

it("signatureSubscribe notifies once at its commitment and then ends", async () => {
  const payer = await fundedSigner(net);
  const to = (await generateKeyPairSigner()).address;
  const signature = await transfer(net, payer, to, 1_000_000n);
  const id = await ws.subscribe("signatureSubscribe", [
    signature,
    { commitment: "confirmed", enableReceivedNotification: false },
  ]);
  const slot = await landedSlot(net, signature);
  const note = await ws.next(id);
  expect(note).toEqual({
    jsonrpc: "2.0",
    method: "signatureNotification",
    params: { result: { context: { slot: expect.any(Number) }, value: { err: null } }, subscription: id },
  });
  // Context: the confirmed slot when it was sent, which the transaction's slot had reached.
  expect(note.params.result.context.slot).toBeGreaterThanOrEqual(slot);
  expect((await net.call("getSignatureStatuses", [[signature]])).result.value[0].confirmationStatus).not.toBe(
    "processed",
  );
  // The subscription ended with its notification.
  expect((await ws.request("signatureUnsubscribe", [id])).error).toEqual({
    code: -32602,
    message: "Invalid subscription id.",
  });
  expect((await ws.request("signatureSubscribe", ["abc"])).error).toEqual({
    code: -32602,
    message: "Invalid Request: Invalid signature provided",
  });
  expect((await ws.request("slotSubscribe", [1])).error).toEqual({
    code: -32602,
    message: "Invalid params: invalid length 1, expected fewer elements in array.",
  });
});

it("an unsubscribe only reaches the connection's own subscriptions", async () => {
  const other = await connect(net.handle.wsUrl);
  const id = await other.subscribe("slotSubscribe");
  expect((await ws.request("slotUnsubscribe", [id])).error).toEqual({
    code: -32602,
    message: "Invalid subscription id.",
  });
  // Any unsubscribe method ends any of the connection's subscriptions, as agave's.
  expect((await other.request("accountUnsubscribe", [id])).result).toBe(true);
  other.close();
});
