/**
 * The Redis transaction store, as two replicas see it: two stores over one real redis-server, each
 * with its own connections, as two gateway processes have.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSolgateError } from "../../src/errors.ts";
import { connectRedis } from "../../src/store/redis.ts";
import type { Redis } from "../../src/store/redis.ts";
import { createRedisTransactionStore } from "../../src/transactions/redis-transaction-store.ts";
import type { TrackedSend, TransactionStore } from "../../src/transactions/transaction-store.ts";
import type { StatusRecord, TransactionState } from "../../src/transactions/transaction-status.ts";
import { startRedisServer } from "../store/redis-server.ts";
import type { RedisServer } from "../store/redis-server.ts";

let server: RedisServer;
const connections: Redis[] = [];
let prefixes = 0;

/** Two replicas' stores over one Redis, under a prefix of their own test. */
async function twoReplicas(
  options: { maxActive?: number; terminalTtlMs?: number } = {},
): Promise<[TransactionStore, TransactionStore]> {
  const prefix = `test${++prefixes}:`;
  const replica = async () => {
    const redis = await connectRedis({ topology: { kind: "single", url: server.url }, commandTimeoutMs: 1000 });
    connections.push(redis);
    return createRedisTransactionStore({ redis, prefix, ...options });
  };
  return [await replica(), await replica()];
}

function send(signature: string, state: TransactionState = "submitted", extra: Partial<TrackedSend> = {}): TrackedSend {
  return {
    signature,
    state,
    updatedAt: new Date(1_700_000_000_000),
    wire: new Uint8Array([1, 2, 3, 250]),
    blockhash: "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N",
    lastValidBlockHeight: 18_446_744_073_709_551_000n,
    expiryExact: true,
    commitment: "confirmed",
    expectedFee: 5000n,
    landed: false,
    lastBroadcastAt: 1_700_000_000_123,
    broadcasts: 1,
    ...extra,
  };
}

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await Promise.all(connections.map((c) => c.close()));
  await server?.stop();
});

describe("createRedisTransactionStore", () => {
  it("records a send once for the fleet: the second replica to insert it gets the first one's record", async () => {
    const [a, b] = await twoReplicas();
    expect(await a.insert(send("s1"))).toBeUndefined();
    const again = await b.insert(send("s1", "submitted", { broadcasts: 7 }));
    expect(again?.broadcasts).toBe(1);
    // Every field survives the trip through Redis exactly, bigints above 2^53 and bytes included.
    expect(await b.get("s1")).toEqual(send("s1"));
    expect((await b.active()).map((s) => s.signature)).toEqual(["s1"]);
  });

  it("never moves a record back: a late 'confirmed' from one replica after another's 'finalized' is dropped", async () => {
    const [a, b] = await twoReplicas();
    await a.insert(send("s2"));
    await a.put(send("s2", "finalized", { slot: 42n, fee: 5000n, landed: true }));
    await b.put(send("s2", "confirmed", { slot: 41n, landed: true }));
    const seen = await b.get("s2");
    expect(seen?.state).toBe("finalized");
    expect(seen?.slot).toBe(42n);
    // A settled send leaves the set of sends in flight, for every replica.
    expect(await a.active()).toEqual([]);
    expect(await b.active()).toEqual([]);
  });

  it("tells every replica's listeners of a published record, the publisher's own at once and only once", async () => {
    const [a, b] = await twoReplicas();
    const heardByA: StatusRecord[] = [];
    const heardByB: StatusRecord[] = [];
    a.onPublished((r) => heardByA.push(r));
    const stop = b.onPublished((r) => heardByB.push(r));
    const record: StatusRecord = {
      signature: "s3",
      state: "failed",
      updatedAt: new Date(5),
      slot: 9n,
      error: {
        code: "InstructionError",
        message: "custom program error: 0x1",
        instructionIndex: 0,
        customCode: 1,
        raw: { InstructionError: [0, { Custom: 1 }] },
      },
    };
    await a.publish(record);
    expect(heardByA).toEqual([record]);
    await until(() => heardByB.length === 1);
    expect(heardByB[0]).toEqual(record);
    // The publisher skips its own echo from the channel.
    await new Promise((r) => setTimeout(r, 100));
    expect(heardByA).toHaveLength(1);
    stop();
    await a.publish({ ...record, signature: "s4" });
    await new Promise((r) => setTimeout(r, 100));
    expect(heardByB).toHaveLength(1);
  });

  it("refuses a send when the fleet has its most in flight, as RATE_LIMITED, whichever replica took the others", async () => {
    const [a, b] = await twoReplicas({ maxActive: 2 });
    await a.insert(send("f1"));
    await b.insert(send("f2"));
    const error = await a.insert(send("f3")).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isSolgateError(error) && error.reason).toBe("RATE_LIMITED");
    // Settling one makes room again.
    await b.put(send("f1", "expired"));
    expect(await a.insert(send("f3"))).toBeUndefined();
  });

  it("keeps a settled send for its TTL, then forgets it", async () => {
    const [a, b] = await twoReplicas({ terminalTtlMs: 300 });
    await a.insert(send("t1"));
    await a.put(send("t1", "finalized", { landed: true }));
    expect((await b.get("t1"))?.state).toBe("finalized");
    await new Promise((r) => setTimeout(r, 500));
    expect(await b.get("t1")).toBeUndefined();
  });

  it("forgets a deleted send on every replica, so that the client may retry it", async () => {
    const [a, b] = await twoReplicas();
    await a.insert(send("d1"));
    expect(await b.delete("d1")).toBe(true);
    expect(await a.get("d1")).toBeUndefined();
    expect(await a.active()).toEqual([]);
    expect(await a.insert(send("d1"))).toBeUndefined();
  });

  it("never forgets a send another replica found tracked (it answered `submitted` for it)", async () => {
    const [a, b] = await twoReplicas();
    expect(await a.insert(send("j1"))).toBeUndefined(); // A records it; its first submission is under way
    expect((await b.insert(send("j1")))?.signature).toBe("j1"); // B finds it: B's client hears `submitted`
    const forgotten = await a.delete("j1"); // A's submission failed: the send must stay
    expect((await b.get("j1"))?.state, "the send B answered for").toBe("submitted");
    expect((await a.active()).map((s) => s.signature)).toEqual(["j1"]);
    expect(forgotten).toBe(false);
  });
});
