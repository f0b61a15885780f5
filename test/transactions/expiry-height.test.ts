/**
 * The exact block height at which each layer calls a blockhash dead, on a real localnet held still
 * (frozen) at every height around the blockhash's last one: the node's `isBlockhashValid` and its
 * preflight, Solgate's blockhash cache, the status engine (its step and its real ticks) and the bundle
 * tracker. agave's rule: a blockhash of block height h is valid for blocks through h + 150; a
 * simulation (the preflight) allows only h + 144, leaving six blocks for forwarding.
 *
 * The invariant for Solgate: `expired` only once the chain has passed the last valid height Solgate
 * told the client (that height may be an upper bound when the blockhash was not fetched through it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address, getBase58Decoder } from "@solana/kit";
import type { Blockhash, KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { isSolgateError } from "../../src/errors.ts";
import { createBlockhashCache } from "../../src/transactions/blockhash-cache.ts";
import type { BlockhashCache } from "../../src/transactions/blockhash-cache.ts";
import { bundleIdOf } from "../../src/transactions/bundles.ts";
import { stepTrackedSend } from "../../src/transactions/tracked-send.ts";
import type { TrackedSend } from "../../src/transactions/transaction-store.ts";
import { createTransactions } from "../../src/transactions/transactions.ts";
import type { Transactions } from "../../src/transactions/transactions.ts";
import type { BlockEngine } from "../../src/upstream/block-engine.ts";
import { createBlockEngine } from "../../src/upstream/block-engine.ts";
import { startChainFixture, transferTransaction } from "./chain-fixture.ts";
import type { ChainFixture } from "./chain-fixture.ts";

/** agave's MAX_PROCESSING_AGE and the preflight's allowance (MAX_PROCESSING_AGE - MAX_TRANSACTION_FORWARDING_DELAY). */
const MAX_AGE = 150n;
const PREFLIGHT_AGE = 144n;

let chain: ChainFixture;
let core: Transactions;
let payer: KeyPairSigner;

beforeAll(async () => {
  chain = await startChainFixture({ slotMs: 60 });
  payer = await chain.funded(10);
}, 60_000);

afterAll(async () => {
  core?.stop();
  await chain?.stop();
});

/** One JSON-RPC call straight to the node, so that the node's own answer is what is read. */
async function node(method: string, params: unknown[]): Promise<{ result?: unknown; error?: { message: string } }> {
  const response = await fetch(chain.localnet.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await response.json()) as { result?: unknown; error?: { message: string } };
}

async function height(commitment: "processed" | "confirmed"): Promise<bigint> {
  return BigInt((await node("getBlockHeight", [{ commitment }])).result as number);
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("the height at which each layer calls a blockhash dead", () => {
  it("is the last valid height for the node, and never before the height Solgate told, for Solgate", async () => {
    // A cache that fetched the blockhash itself knows its exact last valid height.
    const exactCache: BlockhashCache = createBlockhashCache({ rpc: chain.upstream.rpc, commitment: "confirmed" });
    const lifetime = await exactCache.latest({ commitment: "confirmed" });
    const { blockhash } = lifetime;
    const lastValid = lifetime.lastValidBlockHeight;
    const produced = lastValid - MAX_AGE;
    // A few blocks on, a cache that never saw it can only bound it from above (by the newest blockhash's limit).
    await waitFor(
      () => height("confirmed"),
      (h) => h >= produced + 3n,
    );
    const bound = (await createBlockhashCache({ rpc: chain.upstream.rpc, commitment: "confirmed" }).check(blockhash))
      .lastValidBlockHeight;
    expect(bound).toBeGreaterThan(lastValid);

    // From here on nothing that is sent may land: the status engine follows a send that stays unseen, and
    // the preflight probes are refused or dropped.
    await chain.localnet.control({ dropRate: 1 });
    const engine = createBlockEngine({ url: chain.localnet.blockEngineUrl });
    const holding: BlockEngine = {
      tipAccounts: () => engine.tipAccounts(),
      tipFloor: () => engine.tipFloor(),
      sendBundle: async (wires) =>
        bundleIdOf(wires.map((w) => getBase58Decoder().decode(Buffer.from(w, "base64").subarray(1, 65)))),
      inflightStatus: async () => ({ status: "Pending" }),
    };
    core = createTransactions({ upstream: chain.upstream, blockEngine: holding, pollIntervalMs: 25 });
    core.start();
    const tip = (await engine.tipAccounts())[0] as string;
    const bundleTx = await transferTransaction({
      payer,
      blockhash: { blockhash: blockhash as Blockhash, lastValidBlockHeight: lastValid },
      extra: [getTransferSolInstruction({ source: payer, destination: address(tip), amount: 1000n })],
    });
    const bundle = await core.bundles.send([bundleTx.wire]);
    const sendTx = await transferTransaction({
      payer,
      lamports: 2_000_000n,
      blockhash: { blockhash: blockhash as Blockhash, lastValidBlockHeight: lastValid },
    });
    const send = await core.send({ wire: sendTx.wire, confirm: false });
    expect(send.lastValidBlockHeight).toBeDefined();
    const told = { bundle: bundle.lastValidBlockHeight as bigint, send: send.lastValidBlockHeight as bigint };
    expect(told.bundle).toBeGreaterThanOrEqual(lastValid);
    expect(told.send).toBeGreaterThanOrEqual(lastValid);

    let lamports = 3_000_000n;
    const seen: string[] = [];
    const start = lastValid - (MAX_AGE - PREFLIGHT_AGE) - 2n;
    const end = (told.bundle > told.send ? told.bundle : told.send) + 3n;
    await waitFor(
      () => height("processed"),
      (h) => h >= start - 1n,
      60_000,
    );
    let previous = -1n;
    for (;;) {
      // Let one block (or a few: the clock runs while the test reads) through, then hold the chain still.
      await chain.localnet.control({ freeze: false });
      await waitFor(
        () => height("processed"),
        (h) => h > previous,
        10_000,
      );
      await chain.localnet.control({ freeze: true });
      // A block already being made when the freeze came may still appear: read once it is still.
      const h = await waitFor(
        async () => [await height("processed"), await new Promise((r) => setTimeout(r, 80)), await height("processed")],
        ([a, , b]) => a === b,
      ).then(([a]) => a as bigint);
      const hc = await height("confirmed");
      previous = h;

      // The node: valid through produced + 150 at the bank asked, and its preflight through produced + 144.
      const processed = (await node("isBlockhashValid", [blockhash, { commitment: "processed" }])).result as {
        value: boolean;
      };
      const confirmed = (await node("isBlockhashValid", [blockhash, { commitment: "confirmed" }])).result as {
        value: boolean;
      };
      expect(processed.value, `isBlockhashValid(processed) at height ${h}`).toBe(h <= lastValid);
      expect(confirmed.value, `isBlockhashValid(confirmed) at height ${hc}`).toBe(hc <= lastValid);
      lamports += 1n;
      const probe = await transferTransaction({
        payer,
        lamports,
        blockhash: { blockhash: blockhash as Blockhash, lastValidBlockHeight: lastValid },
      });
      const preflight = await node("sendTransaction", [
        Buffer.from(probe.wire).toString("base64"),
        { encoding: "base64", preflightCommitment: "processed" },
      ]);
      const refused = /BlockhashNotFound|Blockhash not found/i.test(preflight.error?.message ?? "");
      expect(refused, `preflight at height ${h}: ${preflight.error?.message}`).toBe(h > produced + PREFLIGHT_AGE);

      // Solgate's cache: from memory with a height just read, and through the node for a blockhash it never saw.
      exactCache.noteBlockHeight(hc);
      const fromMemory = (() => {
        try {
          exactCache.cached(blockhash);
          return "valid";
        } catch (e) {
          if (isSolgateError(e) && e.reason === "BLOCKHASH_EXPIRED") return "expired";
          throw e;
        }
      })();
      expect(fromMemory, `cache from memory at confirmed height ${hc}`).toBe(hc > lastValid ? "expired" : "valid");
      const fresh = await createBlockhashCache({ rpc: chain.upstream.rpc, commitment: "confirmed" })
        .check(blockhash)
        .then(
          () => "valid",
          (e: unknown) => (isSolgateError(e) && e.reason === "BLOCKHASH_EXPIRED" ? "expired" : String(e)),
        );
      // Checked at confirmed, then at processed: dead once both banks are past it.
      expect(fresh, `cache through the node at height ${h} (confirmed ${hc})`).toBe(
        hc > lastValid ? "expired" : "valid",
      );

      // The status engine's step: with the bound it told, expired only past that bound (the node's word that the
      // blockhash lapsed stops the rebroadcasts, not the clock).
      const tracked: TrackedSend = {
        signature: sendTx.signature,
        state: "submitted",
        updatedAt: new Date(),
        wire: sendTx.wire,
        blockhash,
        lastValidBlockHeight: told.send,
        expiryExact: false,
        commitment: "confirmed",
        landed: false,
        lastBroadcastAt: 0,
        broadcasts: 1,
      };
      const step = stepTrackedSend(tracked, null, {
        heightBefore: hc,
        blockhashLapsed: !confirmed.value,
        now: Date.now(),
        rebroadcastIntervalMs: 1000,
      });
      const stepState = step.kind === "transition" ? step.next.state : "submitted";
      expect(stepState, `engine step at confirmed height ${hc}, told ${told.send}`).toBe(
        hc > told.send ? "expired" : "submitted",
      );

      // The real engine and bundle tracker, read while the chain stands at h: never expired at or before what
      // they told.
      const sendState = (await core.status(sendTx.signature)).state;
      const bundleState = (await core.bundles.status(bundle.bundleId)).state;
      if (sendState === "expired")
        expect(h, `send expired at height ${h}, told ${told.send}`).toBeGreaterThan(told.send);
      if (bundleState === "expired")
        expect(h, `bundle expired at height ${h}, told ${told.bundle}`).toBeGreaterThan(told.bundle);
      seen.push(`${h}/${hc}: node ${processed.value}/${confirmed.value} send ${sendState} bundle ${bundleState}`);
      if (h >= end) break;
    }
    await chain.localnet.control({ freeze: false });
    // Past both bounds, both say expired (the engine within a tick or two; the bundle when next read).
    const finalSend = await waitFor(
      () => core.status(sendTx.signature),
      (r) => r.state === "expired",
    );
    expect(finalSend.state).toBe("expired");
    expect((await core.bundles.status(bundle.bundleId)).state).toBe("expired");
    // Every height from the preflight's last to past both bounds was looked at (no block skipped unseen is
    // needed for the assertions, but the walk should cover the edges).
    expect(seen.length, seen.join("\n")).toBeGreaterThan(5);
    if (process.env.SHOW_HEIGHTS === "1")
      console.log(`last valid ${lastValid}, told ${told.send}/${told.bundle}\n${seen.join("\n")}`);
  }, 120_000);
});
