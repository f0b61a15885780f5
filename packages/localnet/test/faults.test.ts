/**
 * Fault injection (set at start or through localnet_setFaults) and the launcher's handling of a
 * localnet that fails to start or dies.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { startLocalnet } from "../src/launcher.ts";
import { NO_FAULTS } from "../src/faults.ts";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "./helpers.ts";

let net: TestLocalnet;
beforeAll(async () => {
  net = await startTestLocalnet();
});
afterAll(async () => {
  await net?.stop();
});
afterEach(async () => {
  await net.handle.control(NO_FAULTS);
});

const processedSlot = async () => BigInt((await net.call("getSlot", [{ commitment: "processed" }])).result);

describe("faults", () => {
  it("drops a seeded fraction of accepted transactions, reproducibly", async () => {
    const payer = await fundedSigner(net, 10_000_000_000n);
    const { value: bh } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
    const round = async (offset: number) => {
      const txs = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          signedTransaction(
            payer,
            [getTransferSolInstruction({ source: payer, destination: payer.address, amount: BigInt(offset + i + 1) })],
            bh,
          ),
        ),
      );
      await net.handle.control({ dropRate: 0.5, seed: 42 });
      for (const tx of txs)
        expect(
          (await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }])).result,
        ).toBe(tx.signature);
      await net.handle.control({ dropRate: 0 });
      const start = await processedSlot();
      await waitFor("slots", async () => (await processedSlot()) > start + 3n);
      const statuses = (await net.call("getSignatureStatuses", [txs.map((t) => t.signature)])).result
        .value as unknown[];
      return statuses.map((s) => s !== null);
    };
    const first = await round(0);
    const second = await round(100);
    const landed = first.filter(Boolean).length;
    expect(landed).toBeGreaterThan(5);
    expect(landed).toBeLessThan(25);
    expect(second).toEqual(first); // same seed, same fate for the n-th send
  });

  it("delays responses, but never control methods", async () => {
    await net.handle.control({ delayMs: 3000 });
    const t = performance.now();
    let healthAnswered = false;
    const health = net.call("getHealth").then((r) => {
      healthAnswered = true;
      return r;
    });
    // Sent after the delayed call, the control call is answered while that one still waits: an order, not a bound.
    expect((await net.call("localnet_getFaults")).result.delayMs).toBe(3000);
    expect(healthAnswered).toBe(false);
    expect((await health).result).toBe("ok");
    expect(performance.now() - t).toBeGreaterThanOrEqual(2990);
  });

  it("answers with HTTP 429 and 503, which kit surfaces as errors", async () => {
    await net.handle.control({ rate429: 1 });
    const limited = await net.post({ jsonrpc: "2.0", id: 1, method: "getSlot" });
    expect(limited.status).toBe(429);
    await expect(net.rpc.getSlot().send()).rejects.toThrow();
    await net.handle.control({ rate429: 0, rate503: 1 });
    expect((await net.post({ jsonrpc: "2.0", id: 1, method: "getSlot" })).status).toBe(503);
    // A batch of control calls only is exempt.
    const control = await net.post([{ jsonrpc: "2.0", id: 1, method: "localnet_status" }]);
    expect(control.status).toBe(200);
  });

  it("stalls requests without answering", async () => {
    await net.handle.control({ stallRate: 1 });
    await expect(
      net.post({ jsonrpc: "2.0", id: 1, method: "getSlot" }, { signal: AbortSignal.timeout(300) }),
    ).rejects.toThrow();
    expect((await net.handle.status()).frozen).toBe(false); // control still answers
  });

  it("serves a lagging view and reports unhealthy beyond 128 slots", async () => {
    await waitFor("slot 300", async () => (await processedSlot()) > 300n, 20_000);
    await net.handle.control({ lagSlots: 60 });
    const status = await net.handle.status();
    const viewed = await processedSlot();
    expect(BigInt(status.processedSlot as number) - viewed).toBeGreaterThanOrEqual(55n);
    expect((await net.call("getHealth")).result).toBe("ok");
    await net.handle.control({ lagSlots: 200 });
    const health = await net.call("getHealth");
    expect(health.error).toEqual({
      code: -32005,
      message: "Node is behind by 200 slots",
      data: { numSlotsBehind: 200 },
    });
  }, 30_000);

  it("freezes block production and resumes it", async () => {
    const payer = await fundedSigner(net, 1_000_000_000n);
    const to = await generateKeyPairSigner();
    await net.handle.control({ freeze: true });
    const frozenAt = await processedSlot();
    const { value: bh } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
    const tx = await signedTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: to.address, amount: 3_000_000n })],
      bh,
    );
    expect(
      (await net.call("sendTransaction", [tx.base64, { encoding: "base64", preflightCommitment: "processed" }])).result,
    ).toBe(tx.signature);
    await new Promise((r) => setTimeout(r, 150));
    expect(await processedSlot()).toBe(frozenAt);
    expect((await net.call("getSignatureStatuses", [[tx.signature]])).result.value[0]).toBeNull();
    await net.handle.control({ freeze: false });
    await waitFor("landed", async () => (await net.call("getSignatureStatuses", [[tx.signature]])).result.value[0]);
    expect(await processedSlot()).toBeGreaterThan(frozenAt);
  });

  it("rejects unknown or out-of-range fault settings", async () => {
    expect((await net.call("localnet_setFaults", [{ dropRate: 2 }])).error.code).toBe(-32602);
    expect((await net.call("localnet_setFaults", [{ nope: true }])).error.code).toBe(-32602);
  });
});

describe("launcher", () => {
  it("applies faults given at start, and reports a localnet that died", async () => {
    const other = await startLocalnet({ slotMs: 20, faults: { rate503: 1 } });
    try {
      const response = await fetch(other.rpcUrl, {
        method: "POST",
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getSlot" }),
      });
      expect(response.status).toBe(503);
      process.kill(other.pid, "SIGKILL");
      const exit = await other.exited;
      expect(exit).toMatchObject({ signal: "SIGKILL", expected: false });
    } finally {
      await other.stop();
    }
  });

  it("rejects when the localnet cannot start, with its error", async () => {
    await expect(startLocalnet({ slotMs: 1 })).rejects.toThrow(/LOCALNET_SLOT_MS/);
  });

  it("stops cleanly", async () => {
    const other = await startLocalnet({ slotMs: 20 });
    const exit = await other.stop();
    expect(exit).toMatchObject({ code: 0, expected: true });
  });
});
