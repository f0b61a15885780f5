/**
 * accountSubscribe and programSubscribe against a launched localnet, over raw WebSocket and through
 * kit's `createSolanaRpcSubscriptions`: notification shapes (checked against a recorded mainnet
 * notification and against getAccountInfo at the same commitment), commitment timing, encodings,
 * filters, and that unsubscribing stops notifications.
 */
import { readFileSync } from "node:fs";
import { generateKeyPairSigner, type Address } from "@solana/kit";
import { getCreateAccountInstruction, getTransferSolInstruction } from "@solana-program/system";
import { getInitializeMint2Instruction } from "@solana-program/token";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";
import { landedSlot, transfer } from "./tx-helpers.ts";
import { connect, sleep, tipWhen, type WsClient } from "./ws-client.ts";

const SYSTEM = "11111111111111111111111111111111";
const TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const recorded = JSON.parse(
  readFileSync(
    new URL("../../../../test/fixtures/solana/rpc/ws_accountNotification_jsonParsed.json", import.meta.url),
    "utf8",
  ),
);

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

function keyShape(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return typeof value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, keyShape((value as Record<string, unknown>)[k])]),
  );
}

it("notifies an account change at each commitment, in agave's shape, and stops after unsubscribe", async () => {
  const payer = await fundedSigner(net);
  const to = (await generateKeyPairSigner()).address;
  const processed = await ws.subscribe("accountSubscribe", [to, { encoding: "base64", commitment: "processed" }]);
  const confirmed = await ws.subscribe("accountSubscribe", [to, { encoding: "base64+zstd", commitment: "confirmed" }]);
  const finalized = await ws.subscribe("accountSubscribe", [to]); // defaults: finalized, binary
  const slots = await ws.subscribe("slotSubscribe");
  const signature = await transfer(net, payer, to, 5_000_000n);
  const slot = await landedSlot(net, signature);

  const atProcessed = await ws.next(processed);
  const atConfirmed = await ws.next(confirmed);
  const atFinalized = await ws.next(finalized);
  // Shape: the envelope and the value's fields are the recorded mainnet notification's.
  expect(
    keyShape({
      ...atProcessed,
      params: { ...atProcessed.params, result: { ...atProcessed.params.result, value: {} } },
    }),
  ).toEqual(
    keyShape({ ...recorded, params: { ...recorded.params, result: { ...recorded.params.result, value: {} } } }),
  );
  expect(Object.keys(atProcessed.params.result.value).sort()).toEqual(Object.keys(recorded.params.result.value).sort());
  expect(atProcessed.params.result.value).toEqual({
    lamports: 5_000_000,
    data: ["", "base64"],
    owner: SYSTEM,
    executable: false,
    rentEpoch: 18446744073709551615n,
    space: 0,
  });
  expect(atFinalized.params.result.value.data).toBe(""); // binary: a legacy base58 string
  expect(atConfirmed.params.result.value.data[1]).toBe("base64+zstd");
  // Commitment: each arrives with the block that makes the slot visible at that level (2 and 5 deep).
  expect([tipWhen(ws, slots, atProcessed), tipWhen(ws, slots, atConfirmed), tipWhen(ws, slots, atFinalized)]).toEqual([
    slot,
    slot + 2,
    slot + 5,
  ]);
  await ws.request("slotUnsubscribe", [slots]);
  expect(Number(atProcessed.params.result.context.slot)).toBe(slot);
  expect(Number(atConfirmed.params.result.context.slot)).toBe(slot);
  expect(Number(atFinalized.params.result.context.slot)).toBe(slot);
  // The notification is what getAccountInfo answers at that commitment.
  const info = await net.call("getAccountInfo", [to, { encoding: "base64", commitment: "finalized" }]);
  expect(info.result.value).toEqual(atProcessed.params.result.value);

  for (const id of [processed, confirmed, finalized])
    expect((await ws.request("accountUnsubscribe", [id])).result).toBe(true);
  const before = [processed, confirmed, finalized].map((id) => ws.received(id).length);
  await landedSlot(net, await transfer(net, payer, to, 1_000_000n));
  await sleep(25 * 8);
  expect([processed, confirmed, finalized].map((id) => ws.received(id).length)).toEqual(before);
  // A second unsubscribe: agave's error.
  expect((await ws.request("accountUnsubscribe", [processed])).error).toEqual({
    code: -32602,
    message: "Invalid subscription id.",
  });
});

it("confirmed notifications come confirmSlots after the change, not before", async () => {
  const payer = await fundedSigner(net);
  const to = (await generateKeyPairSigner()).address;
  const confirmed = await ws.subscribe("accountSubscribe", [to, { encoding: "base64", commitment: "confirmed" }]);
  const slotSub = await ws.subscribe("slotSubscribe");
  const slot = await landedSlot(net, await transfer(net, payer, to, 3_000_000n));
  const note = await ws.next(confirmed);
  // When it arrived, the newest slot announced before it was confirmSlots (2) past the transaction's.
  const at = ws.log.indexOf(note);
  const tipThen = Math.max(
    ...ws.log
      .slice(0, at)
      .filter((n) => n.params.subscription === slotSub)
      .map((n) => Number(n.params.result.slot)),
  );
  expect(tipThen).toBe(slot + 2);
  expect(Number(note.params.result.context.slot)).toBe(slot);
  await ws.request("slotUnsubscribe", [slotSub]);
  await ws.request("accountUnsubscribe", [confirmed]);
});

it("jsonParsed notifications of a token account carry the recorded notification's parsed shape", async () => {
  const payer = await fundedSigner(net);
  const mint = await generateKeyPairSigner();
  const id = await ws.subscribe("accountSubscribe", [
    mint.address,
    { encoding: "jsonParsed", commitment: "processed" },
  ]);
  const rent = BigInt((await net.call("getMinimumBalanceForRentExemption", [82])).result);
  const { value: bh } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
  const tx = await signedTransaction(
    payer,
    [
      getCreateAccountInstruction({
        payer,
        newAccount: mint,
        lamports: rent,
        space: 82n,
        programAddress: TOKEN as Address,
      }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: payer.address }),
    ],
    bh,
  );
  expect(
    (await net.call("sendTransaction", [tx.base64, { encoding: "base64", preflightCommitment: "processed" }])).result,
  ).toBe(tx.signature);
  const note = await ws.next(id);
  const value = note.params.result.value;
  // The recorded mainnet notification is a token account; ours a mint: same envelope and data keys.
  expect(Object.keys(value.data).sort()).toEqual(Object.keys(recorded.params.result.value.data).sort());
  expect(Object.keys(value.data.parsed).sort()).toEqual(Object.keys(recorded.params.result.value.data.parsed).sort());
  expect(value.data).toEqual({
    program: "spl-token",
    parsed: {
      type: "mint",
      info: { decimals: 6, freezeAuthority: null, isInitialized: true, mintAuthority: payer.address, supply: "0" },
    },
    space: 82,
  });
  expect(value).toEqual(
    (await net.call("getAccountInfo", [mint.address, { encoding: "jsonParsed", commitment: "processed" }])).result
      .value,
  );
  await ws.request("accountUnsubscribe", [id]);
});

it("base58 over 128 bytes is agave's encode_bs58 text, not an error", async () => {
  const payer = await fundedSigner(net);
  const big = await generateKeyPairSigner();
  const legacy = await ws.subscribe("accountSubscribe", [big.address, { commitment: "processed" }]);
  const base58 = await ws.subscribe("accountSubscribe", [big.address, { encoding: "base58", commitment: "processed" }]);
  const rent = BigInt((await net.call("getMinimumBalanceForRentExemption", [200])).result);
  const { value: bh } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
  const tx = await signedTransaction(
    payer,
    [
      getCreateAccountInstruction({
        payer,
        newAccount: big,
        lamports: rent,
        space: 200n,
        programAddress: SYSTEM as Address,
      }),
    ],
    bh,
  );
  expect(
    (await net.call("sendTransaction", [tx.base64, { encoding: "base64", preflightCommitment: "processed" }])).result,
  ).toBe(tx.signature);
  expect((await ws.next(legacy)).params.result.value.data).toBe("error: data too large for bs58 encoding");
  expect((await ws.next(base58)).params.result.value).toMatchObject({
    data: ["error: data too large for bs58 encoding", "base58"],
    space: 200,
  });
  // The HTTP side refuses the same request outright.
  expect(
    (await net.call("getAccountInfo", [big.address, { encoding: "base58", commitment: "processed" }])).error.code,
  ).toBe(-32600);
  for (const id of [legacy, base58]) await ws.request("accountUnsubscribe", [id]);
});

it("kit's accountNotifications receives the change and its abort unsubscribes", async () => {
  const payer = await fundedSigner(net);
  const to = (await generateKeyPairSigner()).address;
  const abort = new AbortController();
  const stream = await net.subscriptions
    .accountNotifications(to, { commitment: "confirmed", encoding: "base64" })
    .subscribe({ abortSignal: abort.signal });
  await transfer(net, payer, to, 7_000_000n);
  for await (const note of stream) {
    expect(note.value.lamports).toBe(7_000_000n);
    expect(note.value.data).toEqual(["", "base64"]);
    expect(note.value.owner).toBe(SYSTEM);
    expect(typeof note.context.slot).toBe("bigint");
    break;
  }
  abort.abort();
});

it("programSubscribe notifies the program's changed accounts that pass the filters", async () => {
  const payer = await fundedSigner(net);
  const created = await generateKeyPairSigner();
  const otherTo = (await generateKeyPairSigner()).address;
  const sized = await ws.subscribe("programSubscribe", [
    SYSTEM,
    {
      encoding: "base64",
      commitment: "processed",
      filters: [{ dataSize: 16 }, { memcmp: { offset: 0, bytes: "1111" } }],
    },
  ]);
  const missing = await ws.subscribe("programSubscribe", [
    SYSTEM,
    { encoding: "base64", commitment: "processed", filters: [{ dataSize: 16 }, { memcmp: { offset: 0, bytes: "2" } }] },
  ]);
  const all = await ws.subscribe("programSubscribe", [SYSTEM, { encoding: "jsonParsed", commitment: "confirmed" }]);
  const { value: bh } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
  const rent = (await net.call("getMinimumBalanceForRentExemption", [16])).result as number;
  const tx = await signedTransaction(
    payer,
    [
      getCreateAccountInstruction({
        payer,
        newAccount: created,
        lamports: BigInt(rent),
        space: 16n,
        programAddress: SYSTEM as Address,
      }),
      getTransferSolInstruction({ source: payer, destination: otherTo, amount: 2_000_000n }),
    ],
    bh,
  );
  expect(
    (await net.call("sendTransaction", [tx.base64, { encoding: "base64", preflightCommitment: "processed" }])).result,
  ).toBe(tx.signature);
  const slot = await landedSlot(net, tx.signature);

  const note = await ws.next(sized);
  expect(note.method).toBe("programNotification");
  expect(note.params.result).toEqual({
    context: { slot },
    value: {
      pubkey: created.address,
      account: {
        lamports: rent,
        data: [Buffer.alloc(16).toString("base64"), "base64"],
        owner: SYSTEM,
        executable: false,
        rentEpoch: 18446744073709551615n,
        space: 16,
      },
    },
  });
  // Unfiltered, jsonParsed, confirmed: the payer, the new account and the recipient, each once.
  // Unfiltered, jsonParsed, confirmed: the payer, the new account and the recipient, each once, in
  // the transaction's slot (other System accounts the chain itself writes may come too).
  const inSlot = () => ws.received(all).filter((n) => Number(n.params.result.context.slot) === slot);
  await waitFor("three program notifications", async () => inSlot().length >= 3);
  const pubkeys = inSlot()
    .map((n) => n.params.result.value.pubkey)
    .filter((k: string) => [payer.address, created.address, otherTo].includes(k as Address))
    .sort();
  expect(pubkeys).toEqual([payer.address, created.address, otherTo].sort());
  for (const n of ws.received(all)) expect(n.params.result.value.account.owner).toBe(SYSTEM);
  await sleep(25 * 4);
  expect(ws.received(sized)).toHaveLength(1);
  expect(ws.received(missing)).toHaveLength(0);

  for (const id of [sized, missing, all]) expect((await ws.request("programUnsubscribe", [id])).result).toBe(true);
  const countAtUnsubscribe = ws.received(all).length;
  await landedSlot(net, await transfer(net, payer, otherTo, 1_000_000n));
  await sleep(25 * 6);
  expect(ws.received(all)).toHaveLength(countAtUnsubscribe);
});

it("kit's programNotifications with a dataSize filter", async () => {
  const payer = await fundedSigner(net);
  const to = (await generateKeyPairSigner()).address;
  const abort = new AbortController();
  const stream = await net.subscriptions
    .programNotifications(SYSTEM as Address, {
      commitment: "confirmed",
      encoding: "base64",
      filters: [{ dataSize: 0n }],
    })
    .subscribe({ abortSignal: abort.signal });
  await transfer(net, payer, to, 4_000_000n);
  const seen = new Set<string>();
  for await (const note of stream) {
    expect(note.value.account.space).toBe(0n);
    seen.add(note.value.pubkey);
    if (seen.has(to)) break;
  }
  abort.abort();
});

it("answers bad subscribe params with agave's -32602 errors", async () => {
  const bad = async (method: string, params: unknown[]) => (await ws.request(method, params)).error;
  expect(await bad("accountSubscribe", ["not-a-key"])).toEqual({
    code: -32602,
    message: "Invalid Request: Invalid pubkey provided",
  });
  expect(await bad("accountSubscribe", [])).toEqual({
    code: -32602,
    message: "`params` should have at least 1 argument(s)",
  });
  expect(await bad("accountSubscribe", [SYSTEM, { encoding: "hex" }])).toEqual({
    code: -32602,
    message:
      "Invalid params: unknown variant `hex`, expected one of `binary`, `base58`, `base64`, `jsonParsed`, `base64+zstd`.",
  });
  expect(await bad("accountSubscribe", [SYSTEM, { commitment: "max" }])).toMatchObject({ code: -32602 });
  expect(
    await bad("programSubscribe", [
      SYSTEM,
      { filters: [{ dataSize: 1 }, { dataSize: 1 }, { dataSize: 1 }, { dataSize: 1 }, { dataSize: 1 }] },
    ]),
  ).toEqual({
    code: -32602,
    message: "Too many filters provided; max 4",
  });
  expect(await bad("programSubscribe", ["xyz"])).toEqual({
    code: -32602,
    message: "Invalid Request: Invalid pubkey provided",
  });
  expect(await bad("accountUnsubscribe", ["1"])).toEqual({
    code: -32602,
    message: 'Invalid params: invalid type: string "1", expected u64.',
  });
  expect(await bad("accountUnsubscribe", [987654])).toEqual({ code: -32602, message: "Invalid subscription id." });
  expect(await bad("voteSubscribe", [])).toEqual({ code: -32601, message: "Method not found" });
});
