/**
 * blockSubscribe against a launched localnet, raw and through kit: `all` and
 * `mentionsAccountOrProgram`, encodings and detail levels (each notification equal to getBlock at
 * the same slot with the same options), the v0 version error, commitment refusal, unsubscribe.
 */
import { createSolanaRpcSubscriptions_UNSTABLE, devnet, generateKeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fundedSigner, startTestLocalnet, type TestLocalnet } from "../helpers.ts";
import { landedSlot, transfer } from "./tx-helpers.ts";
import { connect, sleep, tipWhen, type WsClient } from "./ws-client.ts";

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

it("notifies the block of a mentioning transaction, encoded as getBlock encodes it", async () => {
  const payer = await fundedSigner(net);
  const to = (await generateKeyPairSigner()).address;
  const config = {
    commitment: "confirmed",
    encoding: "jsonParsed",
    transactionDetails: "full",
    maxSupportedTransactionVersion: 0,
    showRewards: true,
  };
  const mentions = await ws.subscribe("blockSubscribe", [{ mentionsAccountOrProgram: to }, config]);
  const signatures = await ws.subscribe("blockSubscribe", [
    "all",
    { commitment: "finalized", transactionDetails: "signatures" },
  ]);
  const slots = await ws.subscribe("slotSubscribe");
  const signature = await transfer(net, payer, to, 2_000_000n);
  const slot = await landedSlot(net, signature);

  const note = await ws.next(mentions);
  expect(note.method).toBe("blockNotification");
  expect(note.params.result.context).toEqual({ slot });
  expect(note.params.result.value.slot).toBe(slot);
  expect(note.params.result.value.err).toBeNull();
  const { result: block } = await net.call("getBlock", [slot, config]);
  expect(note.params.result.value.block).toEqual({
    ...block,
    transactions: block.transactions.filter((t: any) => t.transaction.signatures[0] === signature),
  });
  expect(note.params.result.value.block.transactions).toHaveLength(1);

  // "all" notifies every finalized slot in order, with the block's signatures and no rewards.
  const finalized = await ws.next(signatures, (n) => n.params.result.value.slot === slot, 10_000);
  expect(finalized.params.result.value.block).toEqual(
    (await net.call("getBlock", [slot, { transactionDetails: "signatures", rewards: false }])).result,
  );
  const notified = ws.received(signatures).map((n) => n.params.result.value.slot);
  expect(notified).toEqual(notified.map((_, i) => notified[0] + i));
  // Each sent with the block that made its slot confirmed (2 deep) or finalized (5 deep).
  expect([tipWhen(ws, slots, note), tipWhen(ws, slots, finalized)]).toEqual([slot + 2, slot + 5]);
  await ws.request("slotUnsubscribe", [slots]);

  // Only slots with a mentioning transaction: one so far.
  await sleep(25 * 4);
  expect(ws.received(mentions)).toHaveLength(1);
  for (const id of [mentions, signatures]) expect((await ws.request("blockUnsubscribe", [id])).result).toBe(true);
  const count = ws.received(signatures).length;
  await landedSlot(net, await transfer(net, payer, to, 1_000_000n));
  await sleep(25 * 8);
  expect(ws.received(mentions)).toHaveLength(1);
  expect(ws.received(signatures)).toHaveLength(count);
});

it("reports a v0 transaction the subscription did not admit as agave's block error", async () => {
  const payer = await fundedSigner(net);
  const to = (await generateKeyPairSigner()).address;
  const id = await ws.subscribe("blockSubscribe", [{ mentionsAccountOrProgram: to }, { commitment: "confirmed" }]);
  const slot = await landedSlot(net, await transfer(net, payer, to, 2_000_000n, 0));
  const note = await ws.next(id);
  expect(note.params.result).toEqual({
    context: { slot },
    value: { slot, block: null, err: { UnsupportedTransactionVersion: 0 } },
  });
  // A legacy one is fine with the defaults (base64, full).
  const legacy = await transfer(net, payer, to, 1_000_000n, "legacy");
  const legacySlot = await landedSlot(net, legacy);
  const ok = await ws.next(id, (n) => n.params.result.value.slot === legacySlot);
  const tx = ok.params.result.value.block.transactions[0];
  expect(tx.transaction[1]).toBe("base64");
  expect(tx.meta.err).toBeNull();
  expect(ok.params.result.value.block.rewards).toBeUndefined();
  await ws.request("blockUnsubscribe", [id]);
});

it("kit's blockNotifications delivers confirmed blocks", async () => {
  const abort = new AbortController();
  // blockSubscribe is behind kit's UNSTABLE client (validators need a flag for it).
  const subscriptions = createSolanaRpcSubscriptions_UNSTABLE(devnet(net.handle.wsUrl));
  const stream = await subscriptions
    .blockNotifications("all", {
      commitment: "confirmed",
      transactionDetails: "none",
      showRewards: false,
      encoding: "base64",
    })
    .subscribe({ abortSignal: abort.signal });
  let previous: bigint | undefined;
  let seen = 0;
  for await (const note of stream) {
    expect(note.value.err).toBeNull();
    expect(note.value.block?.blockhash).toEqual(expect.any(String));
    if (previous !== undefined) expect(note.value.slot).toBe(previous + 1n);
    previous = note.value.slot;
    if (++seen === 3) break;
  }
  abort.abort();
});

it("refuses processed commitment and bad filters with agave's errors", async () => {
  const bad = async (params: unknown[]) => (await ws.request("blockSubscribe", params)).error;
  expect(await bad(["all", { commitment: "processed" }])).toEqual({
    code: -32602,
    message: "Method does not support commitment below `confirmed`",
  });
  expect(await bad([{ mentionsAccountOrProgram: "x" }])).toEqual({
    code: -32602,
    message: "Invalid Request: Invalid mentions_account_or_program provided",
  });
  expect(await bad(["everything"])).toEqual({
    code: -32602,
    message: "Invalid params: unknown variant `everything`, expected `all` or `mentionsAccountOrProgram`.",
  });
  expect(await bad(["all", { transactionDetails: "most" }])).toMatchObject({ code: -32602 });
  // agave 4.4: base58 cannot carry version-1 transactions (checked before the commitment).
  expect(
    await bad(["all", { encoding: "base58", maxSupportedTransactionVersion: 1, commitment: "processed" }]),
  ).toEqual({
    code: -32602,
    message: "base58 encoding is not supported with maxSupportedTransactionVersion >= 1",
  });
});
