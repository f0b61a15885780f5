/**
 * Geyser in a fleet: two gateway processes on one real Redis and one localnet, both configured with its
 * Yellowstone endpoint (through a TCP relay that counts connections). Only the holder of the transaction
 * store's lease subscribes to statuses, and only the fee lease's holder to blocks: two connections reach the
 * server fleet-wide, one replica's `solgate_geyser_subscriptions` moves. A send taken by the other replica
 * is followed to finalized on the holder's stream, and both answer it from the shared store. When the holder is killed -9, the other takes the lease and subscribes.
 */
import { connect, createServer } from "node:net";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Signature } from "@solana/kit";
import { startRedisServer } from "../store/redis-server.ts";
import type { RedisServer } from "../store/redis-server.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";
import { restSend, restStatus, startGatewayProcess } from "./fleet-harness.ts";
import type { GatewayProcess } from "./fleet-harness.ts";

const CHAIN = "fleet";
let chain: ChainFixture;
let redis: RedisServer;
let relay: { url: string; open: () => number; close: () => Promise<void> };
const gateways: GatewayProcess[] = [];

/** A TCP relay to the Geyser server; `open()` is how many client connections it carries now. */
async function startCountingRelay(target: URL) {
  const clients = new Set<Socket>();
  const server = createServer((client) => {
    clients.add(client);
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) s.on("error", () => {});
    client.on("close", () => {
      clients.delete(client);
      upstream.destroy();
    });
    upstream.on("close", () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: () => clients.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of clients) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function gauge(g: GatewayProcess, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${g.metricsPort}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{chain="${CHAIN}"} `));
  return line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(" ") + 1));
}

async function until(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  chain = await startChainFixture({ slotMs: 100, confirmSlots: 1, finalizeSlots: 4 });
  redis = await startRedisServer();
  relay = await startCountingRelay(new URL(chain.localnet.geyserUrl!));
  for (let i = 0; i < 2; i++) {
    gateways.push(
      await startGatewayProcess({
        rpcUrl: chain.localnet.rpcUrl,
        wsUrl: chain.localnet.wsUrl,
        chain: CHAIN,
        redisUrl: redis.url,
        extra: { SOLGATE_GEYSER_URL: relay.url },
      }),
    );
  }
}, 120_000);

afterAll(async () => {
  for (const g of gateways) await g.kill().catch(() => {});
  await relay?.close();
  await redis?.stop();
  await chain?.stop();
});

describe("Geyser in a fleet", () => {
  it("has one subscription, the lease holder's; the other replica's send is followed on it", async () => {
    await until(
      async () =>
        (await gauge(gateways[0], "solgate_geyser_up")) + (await gauge(gateways[1], "solgate_geyser_up")) === 1,
    );
    // A few lease periods more: still one.
    await new Promise((r) => setTimeout(r, 3000));
    const up = await Promise.all(gateways.map((g) => gauge(g, "solgate_geyser_up")));
    const subscriptions = await Promise.all(gateways.map((g) => gauge(g, "solgate_geyser_subscriptions")));
    expect(up.sort()).toEqual([0, 1]);
    const holder = gateways[(await gauge(gateways[0], "solgate_geyser_up")) === 1 ? 0 : 1];
    const other = gateways.find((g) => g !== holder)!;
    expect(await gauge(other, "solgate_geyser_subscriptions")).toBe(0);
    expect(subscriptions.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    // The block stream (fee market) is the fee lease's holder's alone: one across the fleet.
    await until(
      async () =>
        (await gauge(gateways[0], "solgate_geyser_blocks_up")) +
          (await gauge(gateways[1], "solgate_geyser_blocks_up")) ===
        1,
    );
    // One connection per stream, fleet-wide: the statuses' and the blocks'.
    expect(relay.open()).toBe(2);

    const tx = await transferTransaction({ payer: await chain.funded(1), blockhash: await chain.latestBlockhash() });
    const before = await gauge(holder, "solgate_geyser_statuses");
    expect((await restSend(other.url, CHAIN, tx.wire)).httpStatus).toBe(200);
    await until(async () => {
      const answers = await Promise.all(gateways.map((g) => restStatus(g.url, CHAIN, tx.signature)));
      return answers.every((a) => a.ok && a.status === "finalized");
    });
    // The holder's stream carried it: statuses taken from the stream moved there.
    expect(await gauge(holder, "solgate_geyser_statuses")).toBeGreaterThan(before);
    const { value } = await chain.upstream.rpc.getSignatureStatuses([tx.signature as Signature]).send();
    expect(value[0]?.confirmationStatus).toBe("finalized");
    expect(value[0]?.err).toBeNull();

    // The holder dies: the other takes the lease (it lapses in 3 s) and subscribes.
    await holder.kill();
    await until(async () => (await gauge(other, "solgate_geyser_up")) === 1);
    expect(await gauge(other, "solgate_geyser_subscriptions")).toBeGreaterThanOrEqual(1);
    await until(async () => (await gauge(other, "solgate_geyser_blocks_up")) === 1);
    await until(async () => relay.open() === 2);
  }, 120_000);
});
