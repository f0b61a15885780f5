/**
 * The fleet on Redis with failover, of real processes: three gateways behind HAProxy (deploy/haproxy.cfg) on a
 * real Redis Cluster (3 masters, 3 replicas) and on a real Sentinel group (1 master, 1 replica, 3 sentinels),
 * over a localnet that drops half of all submissions. The master that holds the chain's keys is killed -9 while
 * sends are in flight. Each send is either taken (`submitted`) or refused with 503 `store_unavailable` and a
 * Retry-After (or, while no replica is ready, HAProxy's JSON 503 `unavailable`), never anything else; a client that retries what was refused gets every send taken, and every
 * send taken reaches its true terminal status: none is lost, no replica answers NOT_FOUND or a 500.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Signature } from "@solana/kit";
import { chainKeyPrefix } from "../../src/store/redis.ts";
import { startRedisCluster, startRedisSentinel } from "../store/redis-topologies.ts";
import type { RedisTopologyServer } from "../store/redis-topologies.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import { restSend, restStatus, startGatewayProcess, startHaproxy } from "./fleet-harness.ts";

const CHAIN = "fleet";
const TERMINAL = new Set(["finalized", "failed", "expired"]);
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

/** What one send's answers were, through the failover. */
interface SendOutcome {
  signature: string;
  /** HTTP status of each try, in order (503s first, then the 200 that took it). */
  tries: number[];
}

const topologies: [string, () => Promise<RedisTopologyServer>][] = [
  ["a Redis Cluster", startRedisCluster],
  ["Sentinel", startRedisSentinel],
];

describe.each(topologies)("a fleet of three gateways on %s", (_name, startRedis) => {
  it("loses no send when the master holding the chain's keys is killed -9 while sends are in flight", async () => {
    // 400 ms slots: a blockhash lives about 60 s, far longer than a failover and the retries it causes.
    const fixture = await startChainFixture({ slotMs: 400, confirmSlots: 1, finalizeSlots: 4 });
    cleanups.push(() => fixture.stop());
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const gateways = await Promise.all(
      [0, 1, 2].map(() =>
        startGatewayProcess({
          rpcUrl: fixture.localnet.rpcUrl,
          wsUrl: fixture.localnet.wsUrl,
          chain: CHAIN,
          extra: redis.env,
        }),
      ),
    );
    for (const g of gateways) cleanups.push(() => g.kill());
    const proxy = await startHaproxy(gateways.map((g) => g.port));
    cleanups.push(() => proxy.stop());

    const payer = await fixture.funded(10);
    const blockhash = await fixture.latestBlockhash();
    const transfers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => transferTransaction({ payer, blockhash, lamports: 1_000_000n + BigInt(i) })),
    );
    await fixture.localnet.control({ dropRate: 0.5 });

    // Sends go out 20 a second; the master is killed after the first 15.
    const unexpected: string[] = [];
    const outcomes: SendOutcome[] = [];
    const sendOne = async (wire: Uint8Array, signature: string, i: number): Promise<void> => {
      const outcome: SendOutcome = { signature, tries: [] };
      outcomes.push(outcome);
      const url = i % 2 === 0 ? proxy.url : gateways[i % 3].url;
      for (let attempt = 0; attempt < 100; attempt++) {
        const answer = await restSend(url, CHAIN, wire).catch((error: unknown) => error as Error);
        if (answer instanceof Error) {
          const dead = gateways.filter((g) => g.child.exitCode !== null || g.child.signalCode !== null);
          // A connection closed before any answer (a keep-alive socket the server closed as it was reused) is
          // retried, as any client does with the same bytes; a gateway that died is a failure.
          if (dead.length === 0 && /other side closed|ECONNRESET/.test(String(answer.cause))) {
            await new Promise((r) => setTimeout(r, 250));
            continue;
          }
          unexpected.push(
            `${signature} via ${url}: ${answer.message} (${String(answer.cause)}); dead: ${dead.map((g) => g.url)}`,
          );
          return;
        }
        const { httpStatus, body } = answer;
        outcome.tries.push(httpStatus);
        // Taken: `submitted`, or, for a retry of a send whose refusal came after it was recorded (its replica's
        // acknowledgement timed out), that send's current record: the same bytes are one send.
        if (httpStatus === 200 && body.signature === signature) {
          taken.push(signature);
          return;
        }
        // A gateway refuses with store_unavailable; HAProxy, when no gateway is ready, with its JSON 503.
        if (httpStatus !== 503 || (body.code !== "store_unavailable" && body.code !== "unavailable")) {
          unexpected.push(`${signature}: ${httpStatus} ${JSON.stringify(body)}`);
          return;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    // Statuses of the sends taken so far, read on every replica throughout (25 a second each): while the store
    // moves, a replica may refuse to answer (503), but never say not_found, nor fail with a 500.
    const taken: string[] = [];
    const reads = { total: 0, refused: 0, wrong: [] as string[] };
    let reading = true;
    const readers = gateways.map(async (g) => {
      for (let i = 0; reading; i++) {
        const started = Date.now();
        const signature = taken[i % Math.max(1, taken.length)];
        if (signature !== undefined) {
          const a = await restStatus(g.url, CHAIN, signature).catch((error: unknown) => error as Error);
          reads.total++;
          if (a instanceof Error) reads.wrong.push(`${g.url} ${signature}: ${a.message}`);
          else if (!a.ok && a.httpStatus === 503 && a.code === "store_unavailable") reads.refused++;
          else if (!a.ok) reads.wrong.push(`${g.url} ${signature}: ${a.httpStatus} ${a.code}`);
        }
        await new Promise((r) => setTimeout(r, Math.max(0, 40 - (Date.now() - started))));
      }
    });
    const sending = transfers.map(async (t, i) => {
      await new Promise((r) => setTimeout(r, i * 50));
      await sendOne(t.wire, t.signature, i);
    });
    await new Promise((r) => setTimeout(r, 15 * 50));
    await redis.killMaster(`${chainKeyPrefix(CHAIN)}active`);
    await Promise.all(sending);
    // A little longer, while the sends taken last are still unseen by the chain.
    await new Promise((r) => setTimeout(r, 1000));
    reading = false;
    await Promise.all(readers);
    expect(unexpected).toEqual([]);
    expect(reads.wrong).toEqual([]);
    // At least 20 reads a second on each replica while the sends went out (60 sends, 50 ms apart).
    expect(reads.total).toBeGreaterThan(3 * 20 * 3);
    expect(outcomes.every((o) => o.tries.at(-1) === 200)).toBe(true);

    // Every send taken reaches its true terminal status on every replica; a 503 while the store moves is
    // a refusal to answer, allowed; NOT_FOUND or anything else is not.
    const signatures = transfers.map((t) => t.signature);
    const final = new Map<string, string>();
    const deadline = Date.now() + 150_000;
    const urls = [proxy.url, ...gateways.map((g) => g.url)];
    while (final.size < signatures.length && Date.now() < deadline) {
      for (const signature of signatures.filter((s) => !final.has(s))) {
        const answers = await Promise.all(urls.map((url) => restStatus(url, CHAIN, signature)));
        for (const [i, a] of answers.entries()) {
          if (!a.ok && !(a.httpStatus === 503 && (a.code === "store_unavailable" || a.code === "unavailable")))
            throw new Error(`${urls[i]} answered ${a.httpStatus} ${a.code} for ${signature}`);
        }
        const statuses = answers.map((a) => (a.ok ? a.status : ""));
        if (statuses.every((s) => TERMINAL.has(s))) final.set(signature, statuses[0]);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    const { value } = await fixture.upstream.rpc
      .getSignatureStatuses(signatures as Signature[], { searchTransactionHistory: true })
      .send();
    const landed = value.map((s) => s !== null);
    for (const [i, signature] of signatures.entries()) {
      expect(final.get(signature), signature).toBe(landed[i] ? "finalized" : "expired");
    }
    expect(landed.every(Boolean)).toBe(true);
  }, 300_000);
});
