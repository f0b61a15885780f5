/**
 * The bundles core as two replicas run it, each with its own connection to one real Redis and its own view of the
 * real localnet's block engine: what one replica took, the other answers for, even while the send is still on its
 * way to the engine; a store that cannot be read is STORE_UNAVAILABLE, for a status and for a watch, and a replica
 * that saw a bundle final still answers it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address } from "@solana/kit";
import type { Address } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { isSolgateError } from "../../src/errors.ts";
import { chainKeyPrefix, connectRedis } from "../../src/store/redis.ts";
import type { Redis } from "../../src/store/redis.ts";
import { bundleIdOf } from "../../src/transactions/bundles.ts";
import { createRedisBundleStore } from "../../src/transactions/redis-bundle-store.ts";
import { createTransactions } from "../../src/transactions/transactions.ts";
import type { Transactions } from "../../src/transactions/transactions.ts";
import { createBlockEngine } from "../../src/upstream/block-engine.ts";
import type { BlockEngine } from "../../src/upstream/block-engine.ts";
import { startRedisServer } from "../store/redis-server.ts";
import type { RedisServer } from "../store/redis-server.ts";
import { startChainFixture, transferTransaction } from "./chain-fixture.ts";
import type { ChainFixture } from "./chain-fixture.ts";

let chain: ChainFixture;
let server: RedisServer;
let engine: BlockEngine;
let tip: Address;
const connections: Redis[] = [];
const cores: Transactions[] = [];
let chains = 0;

beforeAll(async () => {
  [chain, server] = await Promise.all([startChainFixture(), startRedisServer()]);
  engine = createBlockEngine({ url: chain.localnet.blockEngineUrl });
  tip = address((await engine.tipAccounts())[0] as string);
}, 60_000);

afterAll(async () => {
  for (const core of cores) core.stop();
  await Promise.all(connections.map((c) => c.close()));
  await Promise.all([chain?.stop(), server?.stop()]);
});

/** A replica's transactions core over the shared Redis, under a prefix of this test's own. */
async function replica(prefix: string, blockEngine: BlockEngine = engine): Promise<Transactions> {
  const redis = await connectRedis({ topology: { kind: "single", url: server.url }, commandTimeoutMs: 500 });
  connections.push(redis);
  const core = createTransactions({
    upstream: chain.upstream,
    blockEngine,
    bundleStore: createRedisBundleStore({ redis, prefix }),
    pollIntervalMs: 25,
  });
  cores.push(core);
  return core;
}

/** A tipped two-transaction bundle: its wires and its id. */
async function bundle(): Promise<{ wires: Uint8Array[]; id: string }> {
  const payer = await chain.funded(1);
  const blockhash = await chain.latestBlockhash();
  const txs = await Promise.all(
    [0, 1].map((i) =>
      transferTransaction({
        payer,
        blockhash,
        lamports: 1_000_000n + BigInt(i),
        extra: i === 1 ? [getTransferSolInstruction({ source: payer, destination: tip, amount: 1000n })] : [],
      }),
    ),
  );
  return { wires: txs.map((t) => t.wire), id: bundleIdOf(txs.map((t) => t.signature)) };
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (e) {
    if (isSolgateError(e)) return e.reason;
    throw e;
  }
  throw new Error("expected an error");
}

describe("bundles on a store two replicas share", () => {
  it("a bundle still on its way to the engine reads pending on the other replica, never invalid", async () => {
    const prefix = chainKeyPrefix(`b${++chains}`);
    // The engine takes a second to answer A's send (a slow path to a remote engine): meanwhile it does not hold it.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow: BlockEngine = {
      ...engine,
      tipAccounts: () => engine.tipAccounts(),
      tipFloor: () => engine.tipFloor(),
      inflightStatus: (id) => engine.inflightStatus(id),
      sendBundle: async (wires) => {
        await held;
        return engine.sendBundle(wires);
      },
    };
    const [a, b] = await Promise.all([replica(prefix, slow), replica(prefix)]);
    const { wires, id } = await bundle();
    const sending = a.bundles.send(wires);
    // B learns of the bundle only from the store, once A has recorded it (after its checks).
    const stateOnB = () =>
      b.bundles.status(id).then(
        (r) => r.state as string,
        (e: unknown) => (isSolgateError(e) ? e.reason : String(e)),
      );
    const deadline = Date.now() + 10_000;
    let early = await stateOnB();
    while (early === "NOT_FOUND" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
      early = await stateOnB();
    }
    expect(early).toBe("pending");
    release();
    expect((await sending).bundleId).toBe(id);
    const states: string[] = [];
    for await (const e of b.bundles.watch(id)) if (e.kind === "record") states.push(e.record.state);
    expect(states.at(-1)).toBe("finalized");
    expect(states).not.toContain("invalid");
  }, 60_000);

  it("Redis away: a status is STORE_UNAVAILABLE, a watch waits then ends so, and a bundle seen final is still answered", async () => {
    const prefix = chainKeyPrefix(`b${++chains}`);
    const [a, b] = await Promise.all([replica(prefix), replica(prefix)]);
    const [lost, landing] = await Promise.all([bundle(), bundle()]);
    await chain.localnet.control({ bundleDropRate: 1 });
    const dropped = await a.bundles.send(lost.wires);
    await chain.localnet.control({ bundleDropRate: 0 });
    const landed = await a.bundles.send(landing.wires);
    // B reads the dropped one final (invalid) before Redis goes.
    expect((await b.bundles.status(dropped.bundleId)).state).toBe("invalid");
    await server.kill();
    try {
      expect(await reasonOf(b.bundles.status(landed.bundleId))).toBe("STORE_UNAVAILABLE");
      expect((await b.bundles.status(dropped.bundleId)).state).toBe("invalid");
      const started = Date.now();
      const watch = async () => {
        for await (const _ of b.bundles.watch(landed.bundleId)) {
          // no record can be read while the store is away
        }
      };
      expect(await reasonOf(watch())).toBe("STORE_UNAVAILABLE");
      // It waited (the default 10 s) before giving up.
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_000);
    } finally {
      await server.start();
    }
  }, 60_000);
});
