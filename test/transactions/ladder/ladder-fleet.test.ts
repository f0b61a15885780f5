/**
 * A ladder in a fleet: two replicas (two transactions cores) share a real Redis and a real localnet. Replica A takes
 * the ladder and dies mid-climb (it never releases its leases, as a killed process would not); replica B, which
 * answered for the ladder all along, takes the climbing over once A's lease lapses and ends it in its true state,
 * with one rung on chain. The ladder's record round-trips through Redis unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFeeMarket } from "../../../src/fees/fee-market.ts";
import type { FeeMarket } from "../../../src/fees/fee-market.ts";
import { connectRedis } from "../../../src/store/redis.ts";
import type { Redis } from "../../../src/store/redis.ts";
import { createRedisTransactionStore } from "../../../src/transactions/redis-transaction-store.ts";
import {
  createRedisLadderStore,
  decodeLadder,
  encodeLadder,
} from "../../../src/transactions/ladder/redis-ladder-store.ts";
import type { LadderStore } from "../../../src/transactions/ladder/ladder-store.ts";
import { createTransactions } from "../../../src/transactions/transactions.ts";
import type { Transactions } from "../../../src/transactions/transactions.ts";
import { startRedisServer } from "../../store/redis-server.ts";
import type { RedisServer } from "../../store/redis-server.ts";
import { startChainFixture } from "../chain-fixture.ts";
import type { ChainFixture } from "../chain-fixture.ts";
import { createNonceAccount, draftTransfer, onChain, signRung, waitFor } from "./ladder-fixture.ts";

let chain: ChainFixture;
let server: RedisServer;
let fees: FeeMarket;
const connections: Redis[] = [];
const cores: Transactions[] = [];

/** A replica: its own Redis connection, stores and core. `mortal`: its leases are never released (a kill). */
async function replica(mortal: boolean): Promise<Transactions> {
  const redis = await connectRedis({ topology: { kind: "single", url: server.url }, commandTimeoutMs: 2000 });
  connections.push(redis);
  const prefix = "solgate:{localnet}:";
  const store = await createRedisTransactionStore({ redis, prefix, leaseTtlMs: 1000 });
  const ladders = await createRedisLadderStore({ redis, prefix, leaseTtlMs: 1000 });
  const ladderStore: LadderStore = mortal
    ? { ...ladders, lease: { hold: () => ladders.lease.hold(), release: async () => {} } }
    : ladders;
  const core = createTransactions({
    upstream: chain.upstream,
    fees,
    store: mortal ? { ...store, lease: { hold: () => store.lease.hold(), release: async () => {} } } : store,
    ladderStore,
    pollIntervalMs: 25,
    rebroadcastIntervalMs: 150,
  });
  core.start();
  cores.push(core);
  return core;
}

beforeAll(async () => {
  [chain, server] = await Promise.all([startChainFixture(), startRedisServer()]);
  fees = createFeeMarket({ upstream: chain.upstream, pollIntervalMs: 50 });
  fees.start();
}, 60_000);

afterAll(async () => {
  for (const core of cores) core.stop();
  await fees?.stop();
  await Promise.allSettled(connections.map((c) => c.close()));
  await server?.stop();
  await chain?.stop();
});

describe("ladders in a fleet", () => {
  it("a replica lost mid-climb: another ends the ladder in its true state, one rung on chain", async () => {
    const a = await replica(true);
    // A holds the climbing lease before B starts (a tick claims it).
    await a.ladders.tick();
    const b = await replica(false);
    const payer = await chain.funded(10);
    const nonce = await createNonceAccount(chain, payer);
    const prepared = await a.prepareLadder({ wire: await draftTransfer(payer), nonceAccount: nonce, rungs: 3 });
    const signed = await Promise.all(prepared.rungs.map((rung) => signRung(rung.wire, [payer])));
    // Frozen: A submits the cheapest rung, which waits in the queue; then A dies.
    await chain.localnet.control({ freeze: true });
    let id: string;
    try {
      id = (await a.ladders.send({ wires: signed })).id;
      a.stop();
      // B answers for the ladder A took.
      expect((await b.ladders.status(id)).state).toBe("pending");
    } finally {
      await chain.localnet.control({ freeze: false });
    }
    const ended = await waitFor(
      () => b.ladders.status(id),
      (ladder) => ladder.state === "finalized",
      30_000,
    );
    expect(ended.landedRung).toBe(0);
    expect(
      await onChain(
        chain,
        ended.rungs.map((r) => r.signature),
      ),
    ).toBe(1);
  }, 60_000);

  it("keeps a ladder whole through Redis: bigints, bytes and the date", async () => {
    const ladder = {
      id: "x",
      state: "pending" as const,
      rungs: [
        { signature: "s", price: 2n ** 63n, wire: new Uint8Array([1, 2, 3]), state: "waiting" as const, fee: 5000n },
      ],
      nonceAccount: "n",
      nonce: "v",
      target: 0.9,
      firstSlot: 10n,
      deadlineSlot: 30n,
      offsets: [0],
      writable: ["w"],
      cancelled: false,
      updatedAt: new Date(1_700_000_000_000),
    };
    expect(decodeLadder(encodeLadder(ladder))).toEqual(ladder);
  });
});
