/**
 * The transactions core against a real localnet (LiteSVM in a child process) through Solgate's real
 * upstream: sends that confirm with the exact fee, fail in simulation or on chain, expire, are
 * deduplicated, or come back from a stale blockhash or a bad signature.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPairSigner } from "@solana/kit";
import type { Blockhash, KeyPairSigner, Signature } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { SolgateError } from "../../src/errors.ts";
import { createTransactions } from "../../src/transactions/transactions.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Transactions } from "../../src/transactions/transactions.ts";
import { startChainFixture, transferTransaction } from "./chain-fixture.ts";
import type { ChainFixture } from "./chain-fixture.ts";

let chain: ChainFixture;
let core: Transactions;
let payer: KeyPairSigner;
const errors: unknown[] = [];

async function failure(promise: Promise<unknown>): Promise<SolgateError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SolgateError);
  return error as SolgateError;
}

beforeAll(async () => {
  chain = await startChainFixture();
  core = createTransactions({
    upstream: chain.upstream,
    pollIntervalMs: 25,
    rebroadcastIntervalMs: 150,
    heartbeatIntervalMs: 100,
    onError: (e) => errors.push(e),
  });
  core.start();
  payer = await chain.funded(100);
});

afterAll(async () => {
  core?.stop();
  await chain?.stop();
});

describe("SendTransaction core on a real localnet", () => {
  it("confirms a transfer with its slot and exactly the fee the chain charged", async () => {
    const to = (await generateKeyPairSigner()).address;
    for (const budget of [undefined, { units: 1_000, microLamports: 2_500_000n }]) {
      const before = await chain.balance(payer.address);
      const tx = await transferTransaction({
        payer,
        to,
        lamports: 1_000_000n,
        blockhash: await chain.latestBlockhash(),
        budget,
      });
      const result = await core.send({ wire: tx.wire });
      // A confirm-and-wait send answers once the transaction is at least confirmed: on a fast chain (25 ms
      // slots, finalized 6 slots later) a loaded machine may first see it finalized, which is the answer then.
      expect(result.state).toMatch(/^(confirmed|finalized)$/);
      expect(result.signature).toBe(tx.signature);
      expect(result.slot).toBeGreaterThan(0n);
      const after = await chain.balance(payer.address);
      expect(result.fee).toBe(before - after - 1_000_000n);
      expect(result.fee).toBe(budget ? 5_000n + 2_500n : 5_000n);
      expect(result.computeUnitPrice).toBe(budget ? 2_500_000n : 0n);
      // No fee market here: the level's price is unknown, so it is left unset.
      expect(result.requestedComputeUnitPrice).toBeUndefined();
    }
  });

  it("answers submitted at once with confirm false, then status and a watch follow it to finalized", async () => {
    const tx = await transferTransaction({ payer, blockhash: await chain.latestBlockhash() });
    const result = await core.send({
      wire: tx.wire,
      confirm: false,
      priorityFee: { kind: "microLamports", microLamports: 7n },
    });
    // At once: the answer is the submission (a send that waited for the chain would say confirmed or later).
    expect(result.state).toBe("submitted");
    expect(result.requestedComputeUnitPrice).toBe(7n);
    expect((await core.status(tx.signature)).state).toBe("submitted");

    const states: string[] = [];
    for await (const event of core.watch(tx.signature)) {
      if (event.kind === "record") states.push(event.record.state);
    }
    // Each change the core sees, in order: confirmed in between unless the chain finalized it before the next look.
    expect([
      ["submitted", "confirmed", "finalized"],
      ["submitted", "finalized"],
    ]).toContainEqual(states);
    const final = await core.status(tx.signature);
    expect(final).toMatchObject({ state: "finalized", fee: 5_000n });
  });

  it("fails a doomed transfer in simulation with logs and charges nothing", async () => {
    const poor = await chain.funded(1);
    const before = await chain.balance(poor.address);
    const tx = await transferTransaction({
      payer: poor,
      lamports: 5n * 10n ** 9n,
      blockhash: await chain.latestBlockhash(),
    });
    const error = await failure(core.send({ wire: tx.wire }));
    expect(error.reason).toBe("SIMULATION_FAILED");
    expect(error.details.logs).toEqual(expect.arrayContaining([expect.stringMatching(/insufficient lamports/)]));
    expect(error.details).toMatchObject({ errorCode: "InstructionError", instructionIndex: 0, customCode: 1 });
    expect(error.details.unitsConsumed).toBeDefined();
    await new Promise((r) => setTimeout(r, 200));
    expect(await chain.balance(poor.address)).toBe(before);
    await expect(core.status(tx.signature)).rejects.toMatchObject({ reason: "NOT_FOUND" });
  });

  it("lands the same doomed transfer as failed, fee charged, when preflight is skipped", async () => {
    const poor = await chain.funded(1);
    const before = await chain.balance(poor.address);
    const tx = await transferTransaction({
      payer: poor,
      lamports: 5n * 10n ** 9n,
      blockhash: await chain.latestBlockhash(),
    });
    const result = await core.send({ wire: tx.wire, skipPreflight: true });
    expect(result.state).toBe("failed");
    expect(result.error).toMatchObject({ code: "InstructionError", instructionIndex: 0, customCode: 1 });
    expect(result.fee).toBe(5_000n);
    expect(await chain.balance(poor.address)).toBe(before - 5_000n);
  });

  it("refuses a stale blockhash and a bad signature, nothing executed and nothing charged", async () => {
    const old = await chain.latestBlockhash();
    // Wait for the blockhash to lapse: 150 blocks of 25 ms.
    for (;;) {
      const height = await chain.upstream.rpc.getBlockHeight({ commitment: "confirmed" }).send();
      if (height > old.lastValidBlockHeight) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const stale = await transferTransaction({ payer, blockhash: old });
    const before = await chain.balance(payer.address);
    const expired = await failure(core.send({ wire: stale.wire }));
    expect(expired.reason).toBe("BLOCKHASH_EXPIRED");
    expect(expired.message).toMatch(/fresh blockhash.*sign it again/);
    // The node's preflight may have run beside the blockhash lookup (to save a round trip), and refused:
    // the chain never saw the transaction, and nothing was charged.
    const { value } = await chain.upstream.rpc
      .getSignatureStatuses([stale.signature as Signature], { searchTransactionHistory: true })
      .send();
    expect(value[0]).toBeNull();
    expect(await chain.balance(payer.address)).toBe(before);
    // Without a preflight the node would take it silently, so the lookup comes first and nothing is sent.
    chain.resetCalls();
    expect((await failure(core.send({ wire: stale.wire, skipPreflight: true }))).reason).toBe("BLOCKHASH_EXPIRED");
    expect(chain.calls.get("sendTransaction") ?? 0).toBe(0);

    const unknown = await transferTransaction({
      payer,
      blockhash: { blockhash: "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn" as Blockhash, lastValidBlockHeight: 1n },
    });
    expect((await failure(core.send({ wire: unknown.wire }))).reason).toBe("BLOCKHASH_EXPIRED");

    const good = await transferTransaction({ payer, blockhash: await chain.latestBlockhash() });
    const forged = good.wire.slice();
    forged[10] ^= 0xff;
    // Two signers, the second slot a copy of the first signature.
    const second = await generateKeyPairSigner();
    const twoSigners = await transferTransaction({
      payer,
      blockhash: await chain.latestBlockhash(),
      extra: [getTransferSolInstruction({ source: second, destination: payer.address, amount: 1n })],
    });
    expect(twoSigners.wire[0]).toBe(2);
    const duplicated = twoSigners.wire.slice();
    duplicated.set(twoSigners.wire.subarray(1, 65), 65);

    chain.resetCalls();
    const bad = await failure(core.send({ wire: forged }));
    expect(bad.reason).toBe("INVALID_TRANSACTION");
    expect(bad.message).toMatch(/does not verify/);
    const repeated = await failure(core.send({ wire: duplicated }));
    expect(repeated.reason).toBe("INVALID_TRANSACTION");
    expect(repeated.message).toMatch(/repeats an earlier signature/);
    expect(chain.totalCalls()).toBe(0);
  });

  it("sends the same signed transaction once, however often and however concurrently it arrives", async () => {
    const before = await chain.balance(payer.address);
    const tx = await transferTransaction({ payer, lamports: 1_000_000n, blockhash: await chain.latestBlockhash() });
    chain.resetCalls();
    const results = await Promise.all([
      core.send({ wire: tx.wire }),
      core.send({ wire: tx.wire }),
      core.send({ wire: tx.wire, confirm: false }),
    ]);
    expect(new Set(results.map((r) => r.signature)).size).toBe(1);
    expect(chain.calls.get("sendTransaction")).toBe(1);
    const again = await core.send({ wire: tx.wire });
    expect(again.state).toMatch(/confirmed|finalized/);
    expect(chain.calls.get("sendTransaction")).toBe(1);
    expect(await chain.balance(payer.address)).toBe(before - 1_000_000n - 5_000n);
  });

  it("takes a node's 'already processed' as success when Solgate no longer tracks the send", async () => {
    const tx = await transferTransaction({ payer, lamports: 1_000_000n, blockhash: await chain.latestBlockhash() });
    const first = await core.send({ wire: tx.wire });
    expect(first.state).toMatch(/^(confirmed|finalized)$/);
    // A second core (a restarted gateway) knows nothing of the first send.
    const fresh = createTransactions({ upstream: chain.upstream, pollIntervalMs: 25 });
    fresh.start();
    try {
      const before = await chain.balance(payer.address);
      const again = await fresh.send({ wire: tx.wire });
      expect(again.state).toMatch(/confirmed|finalized/);
      expect(again.slot).toBe(first.slot);
      expect(await chain.balance(payer.address)).toBe(before);
    } finally {
      fresh.stop();
    }
  });

  describe("a blockhash Solgate has not seen", () => {
    // A second core with its own upstream, whose attempts are written down in order; its blockhash cache starts empty.
    async function freshCore(rpcUrl = chain.localnet.rpcUrl) {
      const timeline: string[] = [];
      const upstream = createUpstream({
        chain: "localnet",
        rpcUrls: [rpcUrl],
        metrics: {
          onCall: (method) => timeline.push(`call ${method}`),
          onResult: (method) => timeline.push(`result ${method}`),
        },
      });
      const fresh = createTransactions({ upstream, pollIntervalMs: 25 });
      fresh.start();
      return { fresh, timeline, close: async () => (fresh.stop(), await upstream.close()) };
    }

    it("is looked up alongside the submission, not before it, and its lifetime still learnt", async () => {
      const { fresh, timeline, close } = await freshCore();
      // Every answer 40 ms late, as from a provider across a network: the order of calls is then certain.
      await chain.localnet.control({ delayMs: 40 });
      try {
        const blockhash = await chain.latestBlockhash();
        const tx = await transferTransaction({ payer, lamports: 1_000_000n, blockhash });
        const result = await fresh.send({ wire: tx.wire, confirm: false });
        expect(result.state).toBe("submitted");
        expect(timeline.indexOf("call sendTransaction")).toBeGreaterThanOrEqual(0);
        expect(timeline.indexOf("call sendTransaction")).toBeLessThan(timeline.indexOf("result isBlockhashValid"));
        // Exact when it was still the newest blockhash, else bounded by the newest one.
        expect(result.lastValidBlockHeight).toBeGreaterThanOrEqual(blockhash.lastValidBlockHeight);
        await chain.localnet.control({ delayMs: 0 });
        await chain.waitConfirmed(tx.signature);
      } finally {
        await chain.localnet.control({ delayMs: 0 });
        await close();
      }
    });

    it("is submitted at processed commitment when only the processed bank knows it yet", async () => {
      const { fresh, close } = await freshCore();
      // Frozen, the newest block stays processed and never confirmed: its blockhash is processed-only.
      await chain.localnet.control({ freeze: true });
      try {
        const { value } = await chain.upstream.rpc.getLatestBlockhash({ commitment: "processed" }).send();
        const { value: atConfirmed } = await chain.upstream.rpc
          .isBlockhashValid(value.blockhash, { commitment: "confirmed" })
          .send();
        expect(atConfirmed).toBe(false);
        const tx = await transferTransaction({ payer, lamports: 1_000_000n, blockhash: value });
        const result = await fresh.send({ wire: tx.wire, confirm: false });
        expect(result).toMatchObject({ state: "submitted", lastValidBlockHeight: value.lastValidBlockHeight });
        await chain.localnet.control({ freeze: false });
        await chain.waitConfirmed(tx.signature);
      } finally {
        await chain.localnet.control({ freeze: false });
        await close();
      }
    });

    it("is submitted at processed when only the processed bank knows it, even when the lookup beside it fails", async () => {
      // Between the core and the node, a proxy that answers every isBlockhashValid with HTTP 503 (the one fault
      // the localnet cannot aim at one method): the lookup fails, the submissions pass.
      const proxy = await startProxyRefusing("isBlockhashValid", chain.localnet.rpcUrl);
      const { fresh, timeline, close } = await freshCore(proxy.url);
      await chain.localnet.control({ freeze: true });
      try {
        const { value } = await chain.upstream.rpc.getLatestBlockhash({ commitment: "processed" }).send();
        const tx = await transferTransaction({ payer, lamports: 1_000_000n, blockhash: value });
        const result = await fresh.send({ wire: tx.wire, confirm: false });
        expect(result.state).toBe("submitted");
        expect(proxy.refused()).toBeGreaterThan(0);
        // Refused by the confirmed bank's preflight (too new for it), then taken by the processed bank's.
        expect(timeline.filter((e) => e === "call sendTransaction")).toHaveLength(2);
        await chain.localnet.control({ freeze: false });
        await chain.waitConfirmed(tx.signature);
      } finally {
        await chain.localnet.control({ freeze: false });
        await close();
        await proxy.close();
      }
    });
  });
});

/** An HTTP proxy to `target` that answers JSON-RPC calls of `method` with 503 and forwards the rest. */
async function startProxyRefusing(method: string, target: string) {
  let refused = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (body.toString("utf8").includes(`"method":"${method}"`)) {
      refused++;
      res.writeHead(503).end();
      return;
    }
    const answer = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
    res.writeHead(answer.status, { "content-type": "application/json" }).end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refused: () => refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
