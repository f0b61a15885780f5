/**
 * logsSubscribe against a launched localnet, raw and through kit: `all` and `{mentions}` filters,
 * the `{signature, err, logs}` value, commitment timing, failed transactions, unsubscribe, errors.
 */
import { generateKeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fundedSigner, startTestLocalnet, type TestLocalnet } from "../helpers.ts";
import { landedSlot, transfer } from "./tx-helpers.ts";
import { connect, sleep, tipWhen, type WsClient } from "./ws-client.ts";

const SYSTEM = "11111111111111111111111111111111";
let net: TestLocalnet;
let ws: WsClient;
beforeAll(async () => {
  net = await startTestLocalnet({ slotMs: 25, confirmSlots: 2, finalizeSlots: 5 });
  ws = await connect(net.handle.wsUrl);
});
afterAll(async () => {
  ws?.close();
  await net?.stop();
});

it("sends each mentioning transaction's logs at the commitment, and all of them for `all`", async () => {
  const payer = await fundedSigner(net);
  const to = (await generateKeyPairSigner()).address;
  const mentions = await ws.subscribe("logsSubscribe", [{ mentions: [to] }, { commitment: "confirmed" }]);
  const all = await ws.subscribe("logsSubscribe", ["all", { commitment: "processed" }]);
  const slots = await ws.subscribe("slotSubscribe");
  const signature = await transfer(net, payer, to, 2_000_000n);
  const slot = await landedSlot(net, signature);
  const note = await ws.next(mentions);
  expect(note).toEqual({
    jsonrpc: "2.0",
    method: "logsNotification",
    params: {
      result: {
        context: { slot },
        value: { signature, err: null, logs: [`Program ${SYSTEM} invoke [1]`, `Program ${SYSTEM} success`] },
      },
      subscription: mentions,
    },
  });
  // The logs are getTransaction's.
  const tx = await net.call("getTransaction", [
    signature,
    { commitment: "confirmed", maxSupportedTransactionVersion: 0 },
  ]);
  expect(note.params.result.value.logs).toEqual(tx.result.meta.logMessages);
  const processedNote = await ws.next(all, (n) => n.params.result.value.signature === signature);
  // Each sent with the block that made the slot visible at its commitment (confirmed: 2 deep).
  expect([tipWhen(ws, slots, processedNote), tipWhen(ws, slots, note)]).toEqual([slot, slot + 2]);
  await ws.request("slotUnsubscribe", [slots]);

  // A failed transaction (more lamports than the payer has) is reported with its error.
  const poor = await fundedSigner(net, 1_000_000_000n);
  const failed = await transfer(net, poor, to, 5_000_000_000n, 0, true);
  const failedNote = await ws.next(mentions, (n) => n.params.result.value.signature === failed);
  expect(failedNote.params.result.value.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
  expect(failedNote.params.result.value.logs).toContain(`Program ${SYSTEM} failed: custom program error: 0x1`);
  ws.received(mentions).length = 0;
  for (const id of [mentions, all]) expect((await ws.request("logsUnsubscribe", [id])).result).toBe(true);
  const afterAll = ws.received(all).length;
  await landedSlot(net, await transfer(net, payer, to, 1_000_000n));
  await sleep(25 * 6);
  expect(ws.received(mentions)).toHaveLength(0);
  expect(ws.received(all)).toHaveLength(afterAll);
});

it("kit's logsNotifications delivers a mentioning transaction", async () => {
  const payer = await fundedSigner(net);
  const to = (await generateKeyPairSigner()).address;
  const abort = new AbortController();
  const stream = await net.subscriptions
    .logsNotifications({ mentions: [to] }, { commitment: "confirmed" })
    .subscribe({ abortSignal: abort.signal });
  const signature = await transfer(net, payer, to, 2_000_000n);
  for await (const note of stream) {
    expect(note.value.signature).toBe(signature);
    expect(note.value.err).toBeNull();
    expect(note.value.logs).toContain(`Program ${SYSTEM} success`);
    break;
  }
  abort.abort();
});

it("answers bad logsSubscribe params with agave's errors", async () => {
  const bad = async (params: unknown[]) => (await ws.request("logsSubscribe", params)).error;
  expect(await bad([{ mentions: [SYSTEM, SYSTEM] }])).toEqual({
    code: -32602,
    message: "Invalid Request: Only 1 address supported",
  });
  expect(await bad([{ mentions: ["nope"] }])).toEqual({
    code: -32602,
    message: "Invalid Request: Invalid mentions provided",
  });
  expect(await bad(["some"])).toEqual({
    code: -32602,
    message: "Invalid params: unknown variant `some`, expected one of `all`, `allWithVotes`, `mentions`.",
  });
  expect(await bad([])).toEqual({ code: -32602, message: "`params` should have at least 1 argument(s)" });
  expect(await ws.subscribe("logsSubscribe", ["allWithVotes"])).toEqual(expect.any(Number));
});
