/**
 * Send paths against the real localnet: its RPC port drops every transaction it accepts (faults), its
 * extra send-only ports (LOCALNET_SEND_PORTS) drop at their own rates, and a dead path refuses
 * connections. A send through Solgate's transactions core lands only because it fans out.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTransactions } from "../../src/transactions/transactions.ts";
import type { Transactions } from "../../src/transactions/transactions.ts";
import { createSendPaths } from "../../src/upstream/send-paths.ts";
import type { SendPaths } from "../../src/upstream/send-paths.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";

describe("send paths", () => {
  let chain: ChainFixture;
  let paths: SendPaths;
  let transactions: Transactions;
  const results: { path: string; outcome: string }[] = [];

  beforeAll(async () => {
    chain = await startChainFixture({ faults: { dropRate: 1 }, sendPorts: [{ dropRate: 1 }, { dropRate: 0 }] });
    expect(chain.localnet.sendUrls).toHaveLength(2);
    paths = createSendPaths({
      paths: [
        { kind: "rpc", url: chain.localnet.sendUrls[0] as string },
        { kind: "rpc", url: chain.localnet.sendUrls[1] as string },
        // Nothing listens there: connection refused.
        { kind: "rpc", url: "http://127.0.0.1:9" },
        // The block engine, auth UUID in the URL.
        { kind: "jito", url: `${chain.localnet.blockEngineUrl}?uuid=00000000-0000-4000-8000-000000000000` },
      ],
      timeoutMs: 2000,
      metrics: { onResult: (path, outcome) => results.push({ path, outcome }) },
    });
    transactions = createTransactions({
      upstream: chain.upstream,
      sendPaths: paths,
      pollIntervalMs: 50,
      rebroadcastIntervalMs: 300,
    });
    transactions.start();
  }, 60_000);

  afterAll(async () => {
    transactions?.stop();
    await chain?.stop();
  });

  it("lands a transaction the chain's own RPC drops, through the one path that does not", async () => {
    const payer = await chain.funded(1);
    const { wire, signature } = await transferTransaction({ payer, blockhash: await chain.latestBlockhash() });
    const outcome = await transactions.send({ wire });
    expect(outcome.signature).toBe(signature);
    expect(["confirmed", "finalized"]).toContain(outcome.state);
    const stats = paths.stats();
    // Every path was tried; the dropping ones accepted too (a drop is silent), the dead one failed.
    expect(stats[0]?.accepted).toBeGreaterThan(0);
    expect(stats[1]?.accepted).toBeGreaterThan(0);
    expect(stats[2]?.accepted).toBe(0);
    // One of the paths that answered was counted first; the dead one never.
    expect(stats.reduce((sum, p) => sum + p.firstAccepted, 0)).toBeGreaterThan(0);
    expect(stats[2]?.firstAccepted).toBe(0);
    expect(Object.keys(stats[2]?.refused ?? {})).toEqual(["network_error"]);
    expect(results.some((r) => r.outcome === "network_error")).toBe(true);
    // The block engine answered (accepted, or refused with a reason such as a missing tip): never unreachable.
    const engine = stats[3];
    expect((engine?.accepted ?? 0) + Object.values(engine?.refused ?? {}).reduce((a, b) => a + b, 0)).toBeGreaterThan(
      0,
    );
    expect(Object.keys(engine?.refused ?? {})).not.toContain("network_error");
    expect(Object.keys(engine?.refused ?? {})).not.toContain("bad_response");
  }, 60_000);

  it("without the paths the same kind of send does not land (the RPC drops it)", async () => {
    const plain = createTransactions({ upstream: chain.upstream, pollIntervalMs: 50, rebroadcastIntervalMs: 300 });
    plain.start();
    try {
      const payer = await chain.funded(1);
      const { wire } = await transferTransaction({ payer, blockhash: await chain.latestBlockhash() });
      const outcome = await plain.send({ wire, confirm: false });
      await new Promise((r) => setTimeout(r, 1500));
      const status = await plain.status(outcome.signature);
      expect(status.state).not.toBe("confirmed");
      expect(status.state).not.toBe("finalized");
    } finally {
      plain.stop();
    }
  }, 60_000);

  it("opens a dead path's breaker after its run of failures, and sends still land", async () => {
    const payer = await chain.funded(1);
    for (let i = 0; i < 5; i++) {
      const { wire } = await transferTransaction({
        payer,
        lamports: 1_000_000n + BigInt(i),
        blockhash: await chain.latestBlockhash(),
      });
      const outcome = await transactions.send({ wire });
      expect(["confirmed", "finalized"]).toContain(outcome.state);
    }
    expect(paths.stats()[2]?.breaker).toBe("open");
    expect(paths.stats()[2]?.refused.breaker_open ?? 0).toBeGreaterThan(0);
  }, 120_000);

  it("simulates once before the fan-out: a failing transaction is refused and no path gets it", async () => {
    const before = paths.stats().map((p) => p.accepted + Object.values(p.refused).reduce((a, b) => a + b, 0));
    const payer = await chain.funded(1);
    // More than the payer holds: fails in simulation.
    const { wire } = await transferTransaction({
      payer,
      lamports: 5_000_000_000n,
      blockhash: await chain.latestBlockhash(),
    });
    await expect(transactions.send({ wire })).rejects.toMatchObject({ reason: "SIMULATION_FAILED" });
    const after = paths.stats().map((p) => p.accepted + Object.values(p.refused).reduce((a, b) => a + b, 0));
    expect(after).toEqual(before);
  }, 60_000);

  it("rebroadcasts fan out too: a send every path dropped lands once a path stops dropping", async () => {
    await chain.localnet.setSendPathDropRate(1, 1);
    // The block engine's send drops at its own rate (bundleDropRate), not the node's.
    await chain.localnet.control({ bundleDropRate: 1 });
    try {
      const payer = await chain.funded(1);
      const { wire, signature } = await transferTransaction({ payer, blockhash: await chain.latestBlockhash() });
      const acceptedBefore = paths.stats()[1]?.accepted ?? 0;
      const sent = await transactions.send({ wire, confirm: false });
      expect(sent.signature).toBe(signature);
      // Every copy dropped: still unseen after a few rebroadcasts.
      await new Promise((r) => setTimeout(r, 700));
      expect((await transactions.status(signature)).state).toBe("submitted");
      await chain.localnet.setSendPathDropRate(1, 0);
      await chain.waitConfirmed(signature, 20_000);
      // The path that let it through took more than the first copy: the rebroadcasts reached it.
      expect((paths.stats()[1]?.accepted ?? 0) - acceptedBefore).toBeGreaterThan(1);
    } finally {
      await chain.localnet.setSendPathDropRate(1, 0);
      await chain.localnet.control({ bundleDropRate: 0 });
    }
  }, 60_000);
});
