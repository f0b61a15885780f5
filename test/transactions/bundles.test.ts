/**
 * The bundles core against the real localnet's block engine: a good bundle is forwarded whole under
 * Jito's id and lands; every bad one is refused with its reason before anything reaches the engine.
 */
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address, getBase58Decoder } from "@solana/kit";
import type { Address, Blockhash } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { isSolgateError } from "../../src/errors.ts";
import { createTransactions } from "../../src/transactions/transactions.ts";
import { createBlockhashCache } from "../../src/transactions/blockhash-cache.ts";
import { bundleIdOf, createBundles, lookupTablesFromRpc } from "../../src/transactions/bundles.ts";
import type { Bundles } from "../../src/transactions/bundles.ts";
import { createBlockEngine } from "../../src/upstream/block-engine.ts";
import type { BlockEngine } from "../../src/upstream/block-engine.ts";
import { startChainFixture, transferTransaction } from "./chain-fixture.ts";
import type { ChainFixture } from "./chain-fixture.ts";

describe("bundles", () => {
  let chain: ChainFixture;
  let engine: BlockEngine;
  let bundles: Bundles;
  let tip: Address;

  beforeAll(async () => {
    chain = await startChainFixture();
    engine = createBlockEngine({ url: chain.localnet.blockEngineUrl });
    bundles = createBundles({
      engine,
      blockhashes: createBlockhashCache({ rpc: chain.upstream.rpc, commitment: "confirmed" }),
      lookupTables: lookupTablesFromRpc(chain.upstream.rpc),
    });
    tip = address((await engine.tipAccounts())[0] as string);
  }, 60_000);

  afterAll(async () => {
    await chain?.stop();
  });

  async function members(count: number, tipLamports: bigint | undefined) {
    const payer = await chain.funded(1);
    const blockhash = await chain.latestBlockhash();
    return Promise.all(
      Array.from({ length: count }, (_, i) =>
        transferTransaction({
          payer,
          lamports: 1_000_000n + BigInt(i),
          blockhash,
          extra:
            i === count - 1 && tipLamports !== undefined
              ? [getTransferSolInstruction({ source: payer, destination: tip, amount: tipLamports })]
              : [],
        }),
      ),
    );
  }

  async function reasonOf(promise: Promise<unknown>): Promise<string> {
    try {
      await promise;
    } catch (e) {
      if (isSolgateError(e)) return e.reason;
      throw e;
    }
    throw new Error("expected a refusal");
  }

  it("forwards a tipped bundle whole under Jito's id, and it lands", async () => {
    const txs = await members(2, 1000n);
    const outcome = await bundles.send(txs.map((t) => t.wire));
    expect(outcome.bundleId).toBe(bundleIdOf(txs.map((t) => t.signature)));
    let status = await bundles.status(outcome.bundleId);
    const deadline = Date.now() + 20_000;
    expect(outcome.state).toBe("pending");
    while (status.state === "pending" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      status = await bundles.status(outcome.bundleId);
    }
    expect(["landed", "confirmed", "finalized"]).toContain(status.state);
    for (const t of txs) await chain.waitConfirmed(t.signature);
  }, 60_000);

  it("refuses each kind of bad bundle with its own reason, and forwards none of them", async () => {
    const six = await members(6, 1000n);
    const refused: string[][] = [];
    expect(await reasonOf(bundles.send(six.map((t) => t.wire)))).toBe("BUNDLE_TOO_LARGE");
    refused.push(six.map((t) => t.signature));
    expect(await reasonOf(bundles.send([]))).toBe("BUNDLE_TOO_LARGE");

    const [a] = await members(1, 1000n);
    expect(await reasonOf(bundles.send([a!.wire, a!.wire]))).toBe("BUNDLE_DUPLICATE_TRANSACTION");
    refused.push([a!.signature, a!.signature]);

    const untipped = await members(2, undefined);
    expect(await reasonOf(bundles.send(untipped.map((t) => t.wire)))).toBe("BUNDLE_NO_TIP");
    refused.push(untipped.map((t) => t.signature));
    const small = await members(2, 999n);
    expect(await reasonOf(bundles.send(small.map((t) => t.wire)))).toBe("BUNDLE_NO_TIP");
    refused.push(small.map((t) => t.signature));

    // Unsigned: the signature zeroed.
    const [u] = await members(1, 1000n);
    const unsigned = u!.wire.slice();
    unsigned.fill(0, 1, 65);
    expect(await reasonOf(bundles.send([unsigned]))).toBe("INVALID_TRANSACTION");

    // Expired: a blockhash the chain never had.
    const payer = await chain.funded(1);
    const stale = await transferTransaction({
      payer,
      blockhash: { blockhash: "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi" as Blockhash, lastValidBlockHeight: 0n },
      extra: [getTransferSolInstruction({ source: payer, destination: tip, amount: 1000n })],
    });
    expect(await reasonOf(bundles.send([stale.wire]))).toBe("BLOCKHASH_EXPIRED");
    refused.push([stale.signature]);

    // None reached the engine: it does not know their ids.
    for (const signatures of refused) {
      expect((await engine.inflightStatus(bundleIdOf(signatures))).status).toBe("Invalid");
    }
  }, 60_000);

  it("through the transactions core: refused with BUNDLES_UNAVAILABLE without a block engine, sent with one", async () => {
    const without = createTransactions({ upstream: chain.upstream });
    const txs = await members(1, 1000n);
    expect(await reasonOf(without.bundles.send(txs.map((t) => t.wire)))).toBe("BUNDLES_UNAVAILABLE");
    const withEngine = createTransactions({ upstream: chain.upstream, blockEngine: engine });
    const outcome = await withEngine.bundles.send(txs.map((t) => t.wire));
    expect(outcome.bundleId).toBe(bundleIdOf(txs.map((t) => t.signature)));
  }, 60_000);

  it("a bundle the engine dropped reads INVALID with its reason; a watch ends there", async () => {
    const core = createTransactions({ upstream: chain.upstream, blockEngine: engine, pollIntervalMs: 25 });
    await chain.localnet.control({ bundleDropRate: 1 });
    try {
      const txs = await members(2, 1000n);
      const sent = await core.bundles.send(txs.map((t) => t.wire));
      const status = await core.bundles.status(sent.bundleId);
      expect(status.state).toBe("invalid");
      expect(status.engineStatus).toBe("Invalid");
      expect(status.reason).toMatch(/does not hold/);
      const events: string[] = [];
      for await (const e of core.bundles.watch(sent.bundleId)) if (e.kind === "record") events.push(e.record.state);
      expect(events).toEqual(["invalid"]);
    } finally {
      await chain.localnet.control({ bundleDropRate: 0 });
    }
  }, 60_000);

  it("a bundle still pending when its blockhash lapses reads EXPIRED, and a watch follows it there", async () => {
    // An engine that takes the bundle and holds it Pending for ever (as a mainnet engine may when the bundle
    // never wins an auction): the localnet's own engine runs or fails every bundle, so this one is a stand-in.
    const holding: BlockEngine = {
      tipAccounts: () => engine.tipAccounts(),
      tipFloor: () => engine.tipFloor(),
      sendBundle: async (wires) =>
        bundleIdOf(
          wires.map((w) => {
            const bytes = Buffer.from(w, "base64");
            return getBase58Decoder().decode(bytes.subarray(1, 65));
          }),
        ),
      inflightStatus: async () => ({ status: "Pending" }),
    };
    const core = createTransactions({ upstream: chain.upstream, blockEngine: holding, pollIntervalMs: 25 });
    const txs = await members(1, 1000n);
    const sent = await core.bundles.send(txs.map((t) => t.wire));
    expect(sent.lastValidBlockHeight).toBeGreaterThan(0n);
    const states: string[] = [];
    for await (const e of core.bundles.watch(sent.bundleId)) if (e.kind === "record") states.push(e.record.state);
    expect(states).toEqual(["pending", "expired"]);
    const status = await core.bundles.status(sent.bundleId);
    expect(status.state).toBe("expired");
    expect(status.reason).toMatch(/lapsed before the bundle landed/);
    // The chain passed the bundle's last valid height: its newest bank, which judged the lapse (the confirmed
    // one may still be a block behind).
    const height = await chain.upstream.rpc.getBlockHeight({ commitment: "processed" }).send();
    expect(height).toBeGreaterThan(sent.lastValidBlockHeight as bigint);
  }, 60_000);

  it("an engine that does not answer is BLOCK_ENGINE_UNAVAILABLE, nothing half-sent", async () => {
    // A port nothing listens on (taken, then closed).
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const dead = createBlockEngine({ url: `http://127.0.0.1:${port}`, timeoutMs: 1000 });
    const core = createTransactions({ upstream: chain.upstream, blockEngine: dead });
    const txs = await members(1, 1000n);
    expect(await reasonOf(core.bundles.send(txs.map((t) => t.wire)))).toBe("BLOCK_ENGINE_UNAVAILABLE");
    expect(await reasonOf(core.bundles.status("a".repeat(64)))).toBe("BLOCK_ENGINE_UNAVAILABLE");
  }, 60_000);
});
