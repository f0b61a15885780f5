/**
 * Statuses from the Geyser stream. The memory's rules (a status only as strong as its delivery and its slot,
 * errors decoded exactly or not at all, silence trusted within one epoch) on their own; the bincode decoder
 * against the localnet's encoder; then the transactions core on the real localnet and its Yellowstone server:
 * sends (confirm false included) move to confirmed and finalized on the stream alone, a failed one carries the
 * node's error, a recently seen signature's status costs no getSignatureStatuses, and with the stream gone the
 * node is asked again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Signature } from "@solana/kit";
import { encodeTransactionError } from "../../packages/localnet/src/geyser/convert.ts";
import { createTransactions } from "../../src/transactions/transactions.ts";
import type { Transactions } from "../../src/transactions/transactions.ts";
import { ASK_THE_NODE, createStreamStatuses } from "../../src/transactions/stream-status.ts";
import { decodeTransactionErrorBincode } from "../../src/transactions/transaction-error-bincode.ts";
import { describeTransactionError } from "../../src/transactions/transaction-error.ts";
import { createGeyserSource } from "../../src/upstream/geyser-source.ts";
import type { GeyserSource } from "../../src/upstream/geyser-source.ts";
import { startChainFixture, transferTransaction } from "./chain-fixture.ts";
import type { ChainFixture } from "./chain-fixture.ts";

describe("TransactionError from bincode", () => {
  const errors = [
    "BlockhashNotFound",
    "InsufficientFundsForFee",
    "AccountInUse",
    "CommitCancelled",
    { InstructionError: [0, { Custom: 1 }] },
    { InstructionError: [3, { Custom: 0xffffffff }] },
    { InstructionError: [2, "ComputationalBudgetExceeded"] },
    { InstructionError: [1, "BuiltinProgramsMustConsumeComputeUnits"] },
    { DuplicateInstruction: 4 },
    { InsufficientFundsForRent: { account_index: 2 } },
    { ProgramExecutionTemporarilyRestricted: { account_index: 7 } },
  ] as const;

  it("reads every shape the localnet's Yellowstone server writes back to the node's JSON value", () => {
    for (const err of errors) {
      const bytes = encodeTransactionError(err as never);
      expect(decodeTransactionErrorBincode(bytes)).toEqual(err);
      expect(describeTransactionError(decodeTransactionErrorBincode(bytes))).toEqual(describeTransactionError(err));
    }
  });

  it("refuses what it cannot read exactly: unknown tags, short or trailing bytes", () => {
    const custom = encodeTransactionError({ InstructionError: [0, { Custom: 1 }] });
    expect(decodeTransactionErrorBincode(Uint8Array.from([200, 0, 0, 0]))).toBeUndefined();
    expect(decodeTransactionErrorBincode(Uint8Array.from([8, 0, 0, 0, 0, 200, 0, 0, 0]))).toBeUndefined();
    expect(decodeTransactionErrorBincode(custom.subarray(0, 10))).toBeUndefined();
    expect(decodeTransactionErrorBincode(Uint8Array.from([...custom, 0]))).toBeUndefined();
    expect(decodeTransactionErrorBincode(Uint8Array.from([7, 0, 0, 0, 1]))).toBeUndefined();
    expect(decodeTransactionErrorBincode(new Uint8Array(2))).toBeUndefined();
  });
});

describe("stream status memory", () => {
  const SIG = "sig-a";
  const memory = (healthy = true) => createStreamStatuses({ healthy: () => healthy, maxSignatures: 3, maxSlots: 4 });

  it("says what was delivered at the commitment it was delivered at, raised only by its own slot", () => {
    const m = memory();
    expect(m.lookup(SIG)).toBeUndefined();
    m.note({ kind: "transaction", signature: SIG, slot: 10n, err: undefined, commitment: "confirmed" });
    expect(m.lookup(SIG)).toEqual({ slot: 10n, err: null, confirmationStatus: "confirmed" });
    m.note({ kind: "slot", slot: 11n, status: "finalized" });
    expect(m.lookup(SIG)).toMatchObject({ confirmationStatus: "confirmed" });
    m.note({ kind: "slot", slot: 10n, status: "processed" }); // never lowers
    expect(m.lookup(SIG)).toMatchObject({ confirmationStatus: "confirmed" });
    m.note({ kind: "slot", slot: 10n, status: "finalized" });
    expect(m.lookup(SIG)).toEqual({ slot: 10n, err: null, confirmationStatus: "finalized" });
  });

  it("finalizes a signature it never delivered only through the slot the node put it in", () => {
    const m = memory();
    m.note({ kind: "slot", slot: 20n, status: "finalized" });
    expect(m.lookup("other")).toBeUndefined();
    expect(m.lookup("other", 20n)).toEqual({ slot: 20n, err: null, confirmationStatus: "finalized" });
    expect(m.lookup("other", 21n)).toBeUndefined();
  });

  it("carries a failure's error, asks the node for one it cannot read, forgets a dead slot's", () => {
    const m = memory();
    const failed = encodeTransactionError({ InstructionError: [0, { Custom: 1 }] });
    m.note({ kind: "transaction", signature: "f", slot: 5n, err: failed, commitment: "confirmed" });
    expect(m.lookup("f")).toEqual({
      slot: 5n,
      err: { InstructionError: [0, { Custom: 1 }] },
      confirmationStatus: "confirmed",
    });
    m.note({
      kind: "transaction",
      signature: "g",
      slot: 5n,
      err: Uint8Array.from([99, 0, 0, 0]),
      commitment: "confirmed",
    });
    expect(m.lookup("g")).toBe(ASK_THE_NODE);
    m.note({ kind: "transaction", signature: "p", slot: 6n, err: undefined, commitment: "processed" });
    expect(m.lookup("p")).toMatchObject({ confirmationStatus: "processed" });
    m.note({ kind: "slot", slot: 6n, status: "dead" });
    expect(m.lookup("p")).toBeUndefined();
  });

  it("tells listeners of a delivery and of its slot finalizing; starts an epoch at each change of health", () => {
    const m = memory();
    const told: string[] = [];
    m.onChange((s) => told.push(s));
    m.note({ kind: "transaction", signature: SIG, slot: 1n, err: undefined, commitment: "confirmed" });
    m.note({ kind: "slot", slot: 1n, status: "finalized" });
    expect(told).toEqual([SIG, SIG]);
    const epoch = m.epoch();
    m.note({ kind: "health", healthy: false });
    m.note({ kind: "health", healthy: true });
    expect(m.epoch()).toBe(epoch + 2);
  });

  it("keeps only the newest signatures and slots", () => {
    const m = memory();
    for (let i = 0; i < 5; i++) {
      m.note({ kind: "transaction", signature: `s${i}`, slot: BigInt(i), err: undefined, commitment: "confirmed" });
    }
    expect(m.stats()).toMatchObject({ signatures: 3, slots: 4 });
    expect(m.lookup("s0")).toBeUndefined();
    expect(m.lookup("s4")).toMatchObject({ slot: 4n });
  });
});

describe("the transactions core on the real localnet's Geyser stream", () => {
  let chain: ChainFixture;
  let geyser: GeyserSource;
  let core: Transactions;
  const errors: unknown[] = [];

  beforeAll(async () => {
    chain = await startChainFixture();
    geyser = createGeyserSource({ url: chain.localnet.geyserUrl!, baseDelayMs: 50 });
    core = createTransactions({
      upstream: { rpc: chain.upstream.rpc, geyser },
      // No poll comes in the test's time: whatever moves, the stream moved.
      pollIntervalMs: 600_000,
      heartbeatIntervalMs: 100,
      onError: (e) => errors.push(e),
    });
    core.start();
    const deadline = Date.now() + 20_000;
    while (!geyser.healthy()) {
      if (Date.now() > deadline) throw new Error("the stream did not come up");
      await new Promise((r) => setTimeout(r, 20));
    }
  }, 60_000);

  afterAll(async () => {
    core?.stop();
    geyser?.close();
    await chain?.stop();
  });

  const until = async (condition: () => Promise<boolean>, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error("condition not met in time");
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  async function nodeStatus(signature: string) {
    const { value } = await chain.upstream.rpc.getSignatureStatuses([signature as Signature]).send();
    return value[0];
  }

  it("moves a confirm: false send to confirmed, then finalized, on the stream alone, as the node says", async () => {
    const tx = await transferTransaction({ payer: await chain.funded(1), blockhash: await chain.latestBlockhash() });
    const sent = await core.send({ wire: tx.wire, confirm: false });
    expect(sent.state).toBe("submitted");
    chain.resetCalls();
    await until(async () => (await core.status(tx.signature)).state === "finalized");
    // Polling every 10 minutes could not have done it; the stream's statuses did, without asking the node.
    expect(chain.calls.get("getSignatureStatuses") ?? 0).toBe(0);
    expect(core.stats().streamStatuses).toBeGreaterThan(0);
    const record = await core.status(tx.signature);
    const node = await nodeStatus(tx.signature);
    expect(node?.confirmationStatus).toBe("finalized");
    expect(record.slot).toBe(node?.slot);
    expect(record.error).toBeUndefined();
  });

  it("lands a failing send (preflight skipped) as failed with the error the node reports", async () => {
    const poor = await chain.funded(1);
    const tx = await transferTransaction({
      payer: poor,
      lamports: 5n * 10n ** 9n,
      blockhash: await chain.latestBlockhash(),
    });
    await core.send({ wire: tx.wire, confirm: false, skipPreflight: true });
    chain.resetCalls();
    await until(async () => (await core.status(tx.signature)).state === "failed");
    expect(chain.calls.get("getSignatureStatuses") ?? 0).toBe(0);
    const record = await core.status(tx.signature);
    const node = await nodeStatus(tx.signature);
    expect(record.error).toEqual(describeTransactionError(node?.err));
    expect(record.error).toMatchObject({ code: "InstructionError", instructionIndex: 0, customCode: 1 });
    expect(record.fee).toBe(5_000n);
  });

  it("answers a recently seen signature Solgate did not send from the stream: no getSignatureStatuses", async () => {
    const payer = await chain.funded(1); // an airdrop, confirmed: seen on the stream
    const tx = await transferTransaction({ payer, blockhash: await chain.latestBlockhash() });
    await chain.upstream.rpc
      .sendTransaction(Buffer.from(tx.wire).toString("base64") as never, { encoding: "base64" })
      .send();
    await chain.waitConfirmed(tx.signature);
    await until(async () => core.stats().streamLookups > 0 || (await core.status(tx.signature)).state !== "submitted");
    chain.resetCalls();
    const lookups = core.stats().streamLookups;
    const records = [];
    for (let i = 0; i < 20; i++) records.push(await core.status(tx.signature));
    expect(chain.calls.get("getSignatureStatuses") ?? 0).toBe(0);
    expect(chain.calls.get("getTransaction") ?? 0).toBeLessThanOrEqual(1); // the fee, once
    expect(core.stats().streamLookups - lookups).toBe(20);
    const node = await nodeStatus(tx.signature);
    const last = records.at(-1)!;
    expect(["confirmed", "finalized"]).toContain(last.state);
    expect(last.slot).toBe(node?.slot);
    expect(last.fee).toBe(5_000n);
  });
});

describe("a watched signature confirmed before the stream heard of it", () => {
  it("is finalized when the stream says its slot is, though the stream never delivered it", async () => {
    // Finality 2 s after confirmation: time to start the stream between the two.
    const chain = await startChainFixture({ slotMs: 100, confirmSlots: 1, finalizeSlots: 20 });
    const geysers: GeyserSource[] = [];
    let core: Transactions | undefined;
    try {
      const tx = await transferTransaction({ payer: await chain.funded(1), blockhash: await chain.latestBlockhash() });
      await chain.upstream.rpc
        .sendTransaction(Buffer.from(tx.wire).toString("base64") as never, { encoding: "base64" })
        .send();
      await chain.waitConfirmed(tx.signature);
      const geyser = createGeyserSource({ url: chain.localnet.geyserUrl!, baseDelayMs: 50 });
      geysers.push(geyser);
      core = createTransactions({ upstream: { rpc: chain.upstream.rpc, geyser }, pollIntervalMs: 200 });
      core.start();
      while (!geyser.healthy()) await new Promise((r) => setTimeout(r, 20));
      const states: string[] = [];
      const abort = new AbortController();
      for await (const event of core.watch(tx.signature, abort.signal)) {
        if (event.kind !== "record") continue;
        states.push(event.record.state);
        if (event.record.state === "finalized") break;
      }
      abort.abort();
      expect(states[0]).toBe("confirmed"); // it was confirmed, not yet final, when the watch began
      expect(states.at(-1)).toBe("finalized");
      const { value } = await chain.upstream.rpc.getSignatureStatuses([tx.signature as Signature]).send();
      expect(value[0]?.confirmationStatus).toBe("finalized");
    } finally {
      core?.stop();
      for (const g of geysers) g.close();
      await chain.stop();
    }
  }, 60_000);
});
