/**
 * The localnet's Geyser server through the official Node client (`@triton-one/yellowstone-grpc`):
 * one block read through both Subscribe and getBlock, transaction statuses and failures, account
 * writes with filters, replay from a slot and its limit, client pings, bad filters, and the unary calls.
 */
import { CommitmentLevel, SlotStatus, txErrDecode } from "@triton-one/yellowstone-grpc";
import { generateKeyPairSigner } from "@solana/kit";
import bs58 from "bs58";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { fundedSigner, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";
import { landedSlot, transfer } from "../pubsub/tx-helpers.ts";
import {
  accountFilter,
  blockFilter,
  connectClient,
  openStream,
  request,
  txFilter,
  type Client,
  type TestStream,
} from "./geyser-client.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const SYSTEM_PROGRAM = "11111111111111111111111111111111";
let net: TestLocalnet;
let client: Client;
const streams: TestStream[] = [];

beforeAll(async () => {
  net = await startTestLocalnet({ slotMs: 25, confirmSlots: 2, finalizeSlots: 5 });
  client = await connectClient(net.handle.geyserUrl!);
});
afterAll(async () => {
  for (const stream of streams) stream.close();
  await net?.stop();
});

async function open(first: Parameters<typeof request>[0]): Promise<TestStream> {
  const stream = await openStream(client, request(first));
  streams.push(stream);
  return stream;
}

const b58 = (bytes: Uint8Array | undefined) => bs58.encode(bytes!);

it("serves the launcher's Geyser URL", () => {
  expect(net.handle.geyserUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
});

it("carries the same block as getBlock: signatures, fees, compute units, balances, slot, parent, blockhash", async () => {
  const payer = await fundedSigner(net);
  const to = (await generateKeyPairSigner()).address;
  const stream = await open({
    slots: { s: {} },
    blocksMeta: { m: {} },
    blocks: { b: blockFilter({ accountInclude: [to] }) },
    transactionsStatus: { ts: txFilter({ accountInclude: [to] }) },
    commitment: CommitmentLevel.CONFIRMED,
  });
  const signature = await transfer(net, payer, to, 2_000_000n);
  const slot = await landedSlot(net, signature);

  const blockUpdate = await stream.next((u) => u.block?.slot === String(slot), 10_000, "the block");
  const block = blockUpdate.block!;
  expect(blockUpdate.filters).toEqual(["b"]);
  const { result: rpc } = await net.call("getBlock", [
    slot,
    { commitment: "confirmed", maxSupportedTransactionVersion: 0, rewards: false },
  ]);
  expect(block.blockhash).toBe(rpc.blockhash);
  expect(block.parentBlockhash).toBe(rpc.previousBlockhash);
  expect(Number(block.parentSlot)).toBe(rpc.parentSlot);
  expect(Number(block.blockHeight!.blockHeight)).toBe(rpc.blockHeight);
  expect(Number(block.blockTime!.timestamp)).toBe(rpc.blockTime);
  expect(Number(block.executedTransactionCount)).toBe(rpc.transactions.length);
  // The filter kept the one transaction naming `to`.
  expect(block.transactions).toHaveLength(1);
  const info = block.transactions[0]!;
  const rpcTx = rpc.transactions.find((t: any) => t.transaction.signatures[0] === signature);
  expect(b58(info.signature)).toBe(signature);
  expect(info.transaction!.signatures.map(b58)).toEqual(rpcTx.transaction.signatures);
  expect(info.transaction!.message!.accountKeys.map(b58)).toEqual(rpcTx.transaction.message.accountKeys);
  expect(b58(info.transaction!.message!.recentBlockhash)).toBe(rpcTx.transaction.message.recentBlockhash);
  expect(Number(info.index)).toBe(rpc.transactions.indexOf(rpcTx));
  const meta = info.meta!;
  expect(Number(meta.fee)).toBe(rpcTx.meta.fee);
  expect(Number(meta.computeUnitsConsumed)).toBe(rpcTx.meta.computeUnitsConsumed);
  expect(Number(meta.costUnits)).toBe(rpcTx.meta.costUnits);
  expect(meta.preBalances.map(Number)).toEqual(rpcTx.meta.preBalances);
  expect(meta.postBalances.map(Number)).toEqual(rpcTx.meta.postBalances);
  expect(meta.logMessages).toEqual(rpcTx.meta.logMessages);
  expect(meta.err).toBeUndefined();
  expect(rpcTx.meta.err).toBeNull();

  const metaUpdate = await stream.next((u) => u.blockMeta?.slot === String(slot), 10_000, "the block meta");
  expect(metaUpdate.filters).toEqual(["m"]);
  expect(metaUpdate.blockMeta!.blockhash).toBe(rpc.blockhash);
  expect(Number(metaUpdate.blockMeta!.parentSlot)).toBe(rpc.parentSlot);
  expect(Number(metaUpdate.blockMeta!.executedTransactionCount)).toBe(rpc.transactions.length);

  const status = await stream.next((u) => u.transactionStatus !== undefined, 10_000, "the status");
  expect(status.filters).toEqual(["ts"]);
  expect(b58(status.transactionStatus!.signature)).toBe(signature);
  expect(Number(status.transactionStatus!.slot)).toBe(slot);
  expect(status.transactionStatus!.err).toBeUndefined();

  // Slot statuses at every level reach a confirmed subscriber, the block only once confirmed.
  const confirmed = await stream.next(
    (u) => u.slot?.slot === String(slot) && u.slot.status === SlotStatus.SLOT_CONFIRMED,
    10_000,
    "the confirmed status",
  );
  expect(confirmed.filters).toEqual(["s"]);
  expect(confirmed.slot!.parent).toBe(String(rpc.parentSlot));
  const statuses = stream.received.filter((u) => u.slot?.slot === String(slot)).map((u) => u.slot!.status);
  expect(statuses).toContain(SlotStatus.SLOT_PROCESSED);
  expect(statuses).not.toContain(SlotStatus.SLOT_CREATED_BANK); // inter-slot updates were not asked for
});

it("reports a failed transaction with its error, to the filters that match it", async () => {
  const payer = await fundedSigner(net, 1_000_000_000n);
  const to = (await generateKeyPairSigner()).address;
  const stream = await open({
    transactions: {
      failed: txFilter({ failed: true, vote: false, accountRequired: [to] }),
      succeeded: txFilter({ failed: false, accountInclude: [to] }),
      excluded: txFilter({ accountExclude: [to] }),
    },
  });
  // More than the payer holds: the transfer fails in execution and still lands, fee charged.
  const signature = await transfer(net, payer, to, 5_000_000_000n, 0, true);
  const update = await stream.next(
    (u) => u.transaction !== undefined && b58(u.transaction.transaction!.signature) === signature,
    10_000,
    "the failed transaction",
  );
  expect(update.filters).toEqual(["failed"]);
  const { result } = await net.call("getSignatureStatuses", [[signature]]);
  const rpcErr = result.value[0].err;
  expect(rpcErr).toEqual({ InstructionError: [0, { Custom: 1 }] });
  // The official client decodes the bincode error bytes to agave's error.
  expect(txErrDecode.decode(update.transaction!.transaction!.meta!.err!.err)).toEqual(rpcErr);
  expect(Number(update.transaction!.transaction!.meta!.fee)).toBeGreaterThan(0);
});

it("streams account writes that pass owner, account, datasize and lamports filters", async () => {
  const payer = await fundedSigner(net);
  const to = (await generateKeyPairSigner()).address;
  const stream = await open({
    accounts: {
      mine: accountFilter({
        account: [to],
        owner: [SYSTEM_PROGRAM],
        filters: [{ datasize: "0" }, { lamports: { eq: "3000000" } }],
      }),
      richer: accountFilter({ account: [to], filters: [{ lamports: { gt: "3000000" } }] }),
      signed: accountFilter({ account: [to], nonemptyTxnSignature: true }),
    },
  });
  const signature = await transfer(net, payer, to, 3_000_000n);
  const update = await stream.next((u) => u.account !== undefined, 10_000, "the account write");
  expect(update.filters.sort()).toEqual(["mine", "signed"]);
  const account = update.account!.account!;
  expect(b58(account.pubkey)).toBe(to);
  expect(b58(account.owner)).toBe(SYSTEM_PROGRAM);
  expect(account.lamports).toBe("3000000");
  expect(b58(account.txnSignature)).toBe(signature);
  expect(Number(update.account!.slot)).toBe(await landedSlot(net, signature));
});

it("replays kept slots from from_slot, and refuses a slot older than the last 150", async () => {
  await waitFor("40 slots", async () => Number((await client.getSlot()).slot) > 40);
  const { firstAvailable } = await client.subscribeReplayInfo();
  const tip = Number((await client.getSlot(CommitmentLevel.PROCESSED)).slot);
  const from = tip - 20;
  expect(Number(firstAvailable)).toBeLessThanOrEqual(from);
  const replayed = await open({ slots: { s: { filterByCommitment: true } }, fromSlot: String(from) });
  // Replayed slots arrive first, in order, each once at this (processed) commitment.
  await replayed.next((u) => u.slot?.slot === String(from + 10), 10_000, "a replayed slot");
  const slots = replayed.received.filter((u) => u.slot).map((u) => Number(u.slot!.slot));
  expect(slots.slice(0, 11)).toEqual(Array.from({ length: 11 }, (_, i) => from + i));

  await waitFor("150 slots", async () => Number((await client.getSlot()).slot) > 160);
  const tooOld = await open({ slots: { s: {} }, fromSlot: "1" });
  const error = await tooOld.failed;
  const first = (await client.subscribeReplayInfo()).firstAvailable;
  expect(Number(first)).toBeGreaterThan(1);
  expect(String(error.cause)).toMatch(/broadcast from 1 is not available, last available: \d+/);
  expect(String(error.cause)).toMatch(/past the valid range/); // OutOfRange, as tonic words it
});

it("answers a client ping with a pong and keeps the filter", async () => {
  const stream = await open({ blocksMeta: { m: {} } });
  await stream.next((u) => u.blockMeta !== undefined, 10_000, "a block meta");
  stream.write(request({ ping: { id: 7 } }));
  const pong = await stream.next((u) => u.pong !== undefined, 10_000, "the pong");
  expect(pong.pong!.id).toBe(7);
  const count = stream.received.length;
  await stream.next((_u) => stream.received.length > count + 1 && stream.received.at(-1)!.blockMeta !== undefined);
});

it("refuses a filter it cannot parse with InvalidArgument", async () => {
  const stream = await open({ transactions: { bad: txFilter({ accountInclude: ["not-a-key!"] }) } });
  const error = await stream.failed;
  expect(String(error.cause)).toMatch(/failed to create filter: Invalid Base58 string/);
  expect(String(error.cause)).toMatch(/invalid argument/i);
});

it("answers the unary calls as the JSON-RPC does", async () => {
  expect((await client.ping(42)).count).toBe(42);
  const latest = await client.getLatestBlockhash(CommitmentLevel.CONFIRMED);
  expect((await client.isBlockhashValid(latest.blockhash, CommitmentLevel.CONFIRMED)).valid).toBe(true);
  const rpcValid = await net.call("isBlockhashValid", [latest.blockhash, { commitment: "confirmed" }]);
  expect(rpcValid.result.value).toBe(true);
  expect((await client.isBlockhashValid(SYSTEM_PROGRAM)).valid).toBe(false);
  const { result: block } = await net.call("getBlock", [
    Number(latest.slot),
    { transactionDetails: "none", commitment: "confirmed" },
  ]);
  expect(block.blockhash).toBe(latest.blockhash);
  expect(Number(latest.lastValidBlockHeight)).toBe(block.blockHeight + 150);
  const rpcSlot = (await net.call("getSlot", [{ commitment: "finalized" }])).result;
  const slot = Number((await client.getSlot(CommitmentLevel.FINALIZED)).slot);
  expect(Math.abs(slot - rpcSlot)).toBeLessThan(20);
  const height = Number((await client.getBlockHeight(CommitmentLevel.FINALIZED)).blockHeight);
  const rpcHeight = (await net.call("getBlockHeight", [{ commitment: "finalized" }])).result;
  expect(Math.abs(height - rpcHeight)).toBeLessThan(20);
  const version = JSON.parse((await client.getVersion()).version);
  expect(version.version.proto).toBe("12.7.0");
});
