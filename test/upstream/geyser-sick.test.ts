/**
 * A sick Geyser source, for real: an HTTP/2 gRPC proxy in front of the localnet's Yellowstone server that passes
 * the Subscribe stream message by message and can, on demand, send a malformed message (garbage), hold every
 * message back (a stream that lags behind the JSON-RPC), or go away (the server killed, its port closed). The
 * transactions core runs on it with the JSON-RPC as its fallback. Each time: the source goes down (one health
 * line, a fallback counted), polling carries on, the statuses answered are never ahead of the node's, and once
 * the proxy is well again the source comes back with `from_slot` = the last slot it saw + 1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Signature } from "@solana/kit";
import { createTransactions } from "../../src/transactions/transactions.ts";
import type { Transactions } from "../../src/transactions/transactions.ts";
import { createGeyserSource } from "../../src/upstream/geyser-source.ts";
import type { GeyserSource } from "../../src/upstream/geyser-source.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";
import { startSickGeyser } from "./sick-geyser.ts";

let chain: ChainFixture;
let proxy: Awaited<ReturnType<typeof startSickGeyser>>;
let geyser: GeyserSource;
let core: Transactions;
let tip: bigint | undefined;
const health: { healthy: boolean; reason: string }[] = [];
const errors: unknown[] = [];
let tipTimer: NodeJS.Timeout;

const until = async (condition: () => boolean | Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
};

beforeAll(async () => {
  chain = await startChainFixture({ slotMs: 50, confirmSlots: 1, finalizeSlots: 4 });
  proxy = await startSickGeyser(chain.localnet.geyserUrl!);
  geyser = createGeyserSource({
    url: proxy.url,
    baseDelayMs: 50,
    maxDelayMs: 200,
    onHealth: (healthy, reason) => health.push({ healthy, reason }),
  });
  // The JSON-RPC's confirmed slot, as the gateway gives it (the fee follower's getSlot).
  tipTimer = setInterval(() => {
    void chain.upstream.rpc
      .getSlot({ commitment: "confirmed" })
      .send()
      .then(
        (slot) => {
          tip = slot;
        },
        () => {},
      );
  }, 100);
  geyser.watchTip(() => tip);
  core = createTransactions({
    upstream: { rpc: chain.upstream.rpc, geyser },
    pollIntervalMs: 100,
    heartbeatIntervalMs: 100,
    onError: (e) => errors.push(e),
  });
  core.start();
  await until(() => geyser.healthy() && geyser.stats().lastSlot !== undefined);
}, 60_000);

afterAll(async () => {
  clearInterval(tipTimer);
  core?.stop();
  geyser?.close();
  await proxy?.kill().catch(() => {});
  await chain?.stop();
});

const RANK: Record<string, number> = { submitted: 0, confirmed: 1, finalized: 2, failed: 2, expired: 2 };

/**
 * Sends `count` transfers with confirm: false, and while they settle compares every status the core answers with
 * the node's read just after: never ahead of it, and a failure only where the node says so.
 */
async function sendAndCheck(count: number): Promise<void> {
  const payer = await chain.funded(10);
  const blockhash = await chain.latestBlockhash();
  const txs = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      transferTransaction({ payer, blockhash, lamports: 1_000_000n + BigInt(i) }),
    ),
  );
  for (const tx of txs) await core.send({ wire: tx.wire, confirm: false });
  const done = new Set<string>();
  await until(async () => {
    for (const tx of txs) {
      const ours = await core.status(tx.signature);
      const { value } = await chain.upstream.rpc.getSignatureStatuses([tx.signature as Signature]).send();
      const node = value[0];
      const nodeState: string =
        node === null ||
        node === undefined ||
        node.confirmationStatus === null ||
        node.confirmationStatus === "processed"
          ? "submitted"
          : node.err !== null
            ? "failed"
            : node.confirmationStatus;
      expect(RANK[ours.state]).toBeLessThanOrEqual(RANK[nodeState]);
      if (ours.state === "failed") expect(nodeState).toBe("failed");
      if (ours.slot !== undefined && ours.state !== "submitted") expect(ours.slot).toBe(node?.slot);
      if (ours.state === "finalized") done.add(tx.signature);
    }
    return done.size === txs.length;
  }, 30_000);
}

describe("a sick Geyser source", () => {
  it("garbage on the stream: down with one health line and a fallback, polling carries on, back with from_slot", async () => {
    const fallbacks = geyser.stats().fallbacks;
    const lines = health.length;
    proxy.set("garbage");
    await until(() => !geyser.healthy());
    expect(geyser.stats().fallbacks).toBe(fallbacks + 1);
    expect(health.slice(lines)).toHaveLength(1);
    expect(health[lines]).toMatchObject({ healthy: false });
    expect(health[lines]?.reason).toMatch(/stream failed/);
    // Still garbage: the reconnects fail alike, and the statuses come from polling, right.
    await sendAndCheck(3);
    expect(geyser.healthy()).toBe(false);
    const lastSlot = geyser.stats().lastSlot!;
    proxy.set("pass");
    await until(() => geyser.healthy());
    expect(geyser.stats().lastFromSlot).toBe(lastSlot + 1n);
    await sendAndCheck(2);
  }, 90_000);

  it("a stream lagging behind the JSON-RPC: down with the lag as its reason, statuses still right, back when caught up", async () => {
    const lines = health.length;
    proxy.set("lag");
    await until(() => health.length > lines);
    expect(health[lines]).toMatchObject({ healthy: false });
    expect(health[lines]?.reason).toMatch(/slots behind the JSON-RPC/);
    await sendAndCheck(2);
    proxy.set("pass");
    await until(() => geyser.healthy());
    await sendAndCheck(2);
  }, 90_000);

  it("the server killed: down, polling carries on; a server back on the port: up again with from_slot", async () => {
    const lines = health.length;
    const port = proxy.port;
    const reconnects = geyser.stats().reconnects;
    await proxy.kill();
    await until(() => health.length > lines);
    expect(health.slice(lines)).toHaveLength(1);
    await sendAndCheck(2);
    const lastSlot = geyser.stats().lastSlot!;
    proxy = await startSickGeyser(chain.localnet.geyserUrl!, port);
    await until(() => geyser.healthy());
    expect(geyser.stats().reconnects).toBeGreaterThan(reconnects);
    expect(geyser.stats().lastFromSlot).toBe(lastSlot + 1n);
    expect(health.at(-1)).toMatchObject({ healthy: true });
    await sendAndCheck(2);
    expect(errors.filter((e) => !String(e).includes("UPSTREAM"))).toEqual([]);
  }, 90_000);
});
