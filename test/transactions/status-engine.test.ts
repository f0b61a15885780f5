/**
 * The status engine against a real localnet with faults: rebroadcast under dropped submissions,
 * expiry when nothing ever lands, heartbeats and clean-up of watch streams, and upstream calls that
 * do not grow with the number of watchers.
 */
import { randomBytes } from "node:crypto";
import bs58 from "bs58";
import { afterAll, beforeAll, afterEach, describe, expect, it } from "vitest";
import type { Blockhash, KeyPairSigner } from "@solana/kit";
import { decodeWireTransaction } from "../../src/solana/wire-transaction.ts";
import { createTransactions } from "../../src/transactions/transactions.ts";
import type { Transactions } from "../../src/transactions/transactions.ts";
import type { WatchEvent } from "../../src/transactions/watchers.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import { startChainFixture, transferTransaction } from "./chain-fixture.ts";
import type { ChainFixture } from "./chain-fixture.ts";

let chain: ChainFixture;
let core: Transactions;
let payers: KeyPairSigner[];

beforeAll(async () => {
  chain = await startChainFixture({ slotMs: 25, faults: { seed: 7 } });
  core = createTransactions({
    upstream: chain.upstream,
    pollIntervalMs: 25,
    rebroadcastIntervalMs: 150,
    heartbeatIntervalMs: 100,
  });
  core.start();
  payers = await Promise.all([chain.funded(100), chain.funded(100), chain.funded(100), chain.funded(100)]);
});

afterEach(async () => {
  await chain.localnet.control({ dropRate: 0, freeze: false });
});

afterAll(async () => {
  core?.stop();
  await chain?.stop();
});

async function transfers(count: number) {
  const blockhash = await chain.latestBlockhash();
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      transferTransaction({ payer: payers[i % payers.length], blockhash, lamports: 1_000_000n + BigInt(i) }),
    ),
  );
}

describe("status engine on a real localnet with faults", () => {
  it("lands at least 99% of sends before their blockhash lapses when half of all submissions are dropped", async () => {
    await chain.localnet.control({ dropRate: 0.5 });
    const txs = await transfers(100);
    const results = await Promise.all(txs.map((tx) => core.send({ wire: tx.wire })));
    const confirmed = results.filter((r) => r.state === "confirmed" || r.state === "finalized").length;
    expect(confirmed).toBeGreaterThanOrEqual(99);
    expect(core.stats().rebroadcasts).toBeGreaterThan(0);
  });

  it("ends sends that never land as expired once their last valid block height passes", async () => {
    await chain.localnet.control({ dropRate: 1 });
    const txs = await transfers(3);
    const results = await Promise.all(txs.map((tx) => core.send({ wire: tx.wire })));
    for (const r of results) {
      expect(r.state).toBe("expired");
      expect(r.slot).toBeUndefined();
      expect(r.fee).toBeUndefined();
    }
    // Expired means the blockhash can never land again. (The reported last valid block height may be an upper
    // bound when the blockhash was not fetched through Solgate, so the node's own answer is the one to check.)
    const blockhash = decodeWireTransaction(txs[0].wire).blockhash;
    const { value: stillValid } = await chain.upstream.rpc
      .isBlockhashValid(blockhash as Blockhash, { commitment: "confirmed" })
      .send();
    expect(stillValid).toBe(false);
    expect((await core.status(results[0].signature)).state).toBe("expired");
  });

  it("keeps an idle watch alive with heartbeats while the chain is frozen, and frees it when the client goes away", async () => {
    await chain.localnet.control({ freeze: true });
    const [tx] = await transfers(1);
    await core.send({ wire: tx.wire, confirm: false });
    const controller = new AbortController();
    const events: WatchEvent[] = [];
    const watching = (async () => {
      for await (const event of core.watch(tx.signature, controller.signal)) {
        events.push(event);
        if (events.filter((e) => e.kind === "heartbeat").length === 2) controller.abort();
      }
    })();
    await watching;
    expect(events[0]).toMatchObject({ kind: "record", record: { state: "submitted" } });
    expect(events.slice(1).every((e) => e.kind === "heartbeat")).toBe(true);
    expect(core.stats().watchers).toBe(0);
    // Thawed, the queued transaction lands and the send completes.
    await chain.localnet.control({ freeze: false });
    await chain.waitConfirmed(tx.signature);
  });

  it("follows a transaction sent around Solgate: status and watch read it from the chain, fee included", async () => {
    const [tx] = await transfers(1);
    await chain.upstream.rpc
      .sendTransaction(Buffer.from(tx.wire).toString("base64") as never, { encoding: "base64" })
      .send();
    await chain.waitConfirmed(tx.signature);
    const status = await core.status(tx.signature);
    expect(status.state).toMatch(/confirmed|finalized/);
    expect(status.fee).toBe(5_000n);
    const states: string[] = [];
    for await (const event of core.watch(tx.signature)) if (event.kind === "record") states.push(event.record.state);
    expect(states.at(-1)).toBe("finalized");
    expect(core.stats().watchedSignatures).toBe(0);
  });

  it("answers a burst of status lookups with getSignatureStatuses calls of at most 256 signatures", async () => {
    while (core.stats().inFlight > 0) await new Promise((r) => setTimeout(r, 50));
    const signatures = Array.from({ length: 600 }, () => bs58.encode(randomBytes(64)));
    chain.resetCalls();
    const answers = await Promise.all(
      signatures.map((s) => core.status(s).catch((e: { reason?: string }) => e.reason)),
    );
    expect(new Set(answers)).toEqual(new Set(["NOT_FOUND"]));
    expect(chain.calls.get("getSignatureStatuses")).toBe(3);
  });

  it("polls once per tick however many clients watch the same transactions", async () => {
    await chain.localnet.control({ freeze: true });
    const txs = await transfers(20);
    await Promise.all(txs.map((tx) => core.send({ wire: tx.wire, confirm: false })));
    const callsPerTick = async (watchersPerSignature: number) => {
      const controller = new AbortController();
      const streams = txs.flatMap((tx) =>
        Array.from({ length: watchersPerSignature }, async () => {
          for await (const _ of core.watch(tx.signature, controller.signal));
        }),
      );
      await new Promise((r) => setTimeout(r, 100));
      chain.resetCalls();
      const ticks = core.stats().ticks;
      await new Promise((r) => setTimeout(r, 500));
      const perTick = (chain.calls.get("getSignatureStatuses") ?? 0) / (core.stats().ticks - ticks);
      controller.abort();
      await Promise.all(streams);
      return perTick;
    };
    const few = await callsPerTick(1);
    const many = await callsPerTick(50);
    expect(few).toBeGreaterThan(0.5);
    expect(few).toBeLessThanOrEqual(1);
    expect(many).toBeLessThanOrEqual(few * 1.2);
    expect(core.stats().watchers).toBe(0);
  });
});

describe("status engine fed by the node's signature notifications", () => {
  // Ticks a minute apart: within the test only a notification can bring the tick that settles a send.
  const slowPolling = { pollIntervalMs: 60_000, confirmPollIntervalMs: 60_000, confirmTimeoutMs: 2_000 };

  it("answers a confirm-and-wait send when the node announces it, without waiting for a poll", async () => {
    const fed = createTransactions({ upstream: chain.upstream, ...slowPolling });
    fed.start();
    try {
      const [tx] = await transfers(1);
      const result = await fed.send({ wire: tx.wire });
      expect(result.state).toMatch(/^(confirmed|finalized)$/); // at least confirmed: finalized if the chain got there first
      expect(result.fee).toBe(5_000n);
      expect(fed.stats().ticks).toBeGreaterThanOrEqual(1);
    } finally {
      fed.stop();
    }
  });

  it("polls fast only while no notification is to come", async () => {
    const ticksDuringWait = async (upstream: typeof chain.upstream) => {
      const engine = createTransactions({
        upstream,
        pollIntervalMs: 400,
        confirmPollIntervalMs: 20,
        confirmTimeoutMs: 1_500,
      });
      engine.start();
      try {
        const [tx] = await transfers(1);
        const ticks = engine.stats().ticks;
        expect((await engine.send({ wire: tx.wire })).state).toBe("submitted"); // frozen: it waits out its timeout
        return engine.stats().ticks - ticks;
      } finally {
        engine.stop();
      }
    };
    const httpOnly = createUpstream({ chain: "localnet", rpcUrls: [chain.localnet.rpcUrl], wsUrl: null });
    await chain.localnet.control({ freeze: true });
    try {
      const fed = await ticksDuringWait(chain.upstream);
      const polled = await ticksDuringWait(httpOnly);
      // 1.5 s: about four slow ticks, one on subscription and a few fast ones before it, against about
      // seventy fast ones.
      expect(fed).toBeLessThanOrEqual(15);
      expect(polled).toBeGreaterThan(3 * fed);
    } finally {
      await httpOnly.close();
    }
  });

  it("without a WebSocket, the same send waits for the poll (here: past its confirm timeout)", async () => {
    const httpOnly = createUpstream({ chain: "localnet", rpcUrls: [chain.localnet.rpcUrl], wsUrl: null });
    expect(httpOnly.signatures).toBeUndefined();
    const polled = createTransactions({ upstream: httpOnly, ...slowPolling });
    polled.start();
    try {
      const [tx] = await transfers(1);
      const result = await polled.send({ wire: tx.wire });
      expect(result.state).toBe("submitted");
      expect(polled.stats().ticks).toBe(0);
      await chain.waitConfirmed(tx.signature);
    } finally {
      polled.stop();
      await httpOnly.close();
    }
  });
});
