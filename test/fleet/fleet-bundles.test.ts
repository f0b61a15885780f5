/**
 * Bundles in a fleet, of real processes: gateways sharing a real Redis (one server, then a Cluster), over one
 * localnet whose block engine takes the bundles. A bundle sent through one replica is answered for by every other;
 * a store that cannot be read answers 503 `store_unavailable`, never 404; a Cluster master killed -9 while
 * bundles are read on every replica makes no replica say `not_found`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Address } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { ErrorInfoSchema, RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { BundleStatus } from "../../gen/solgate/v1/transaction_pb.js";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { chainKeyPrefix } from "../../src/store/redis.ts";
import { startRedisServer } from "../store/redis-server.ts";
import { startRedisCluster } from "../store/redis-topologies.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";
import { FLEET_KEY, startGatewayProcess } from "./fleet-harness.ts";

const CHAIN = "fleet";
const AUTH = { authorization: `Bearer ${FLEET_KEY}` };
const FINAL = new Set(["finalized", "failed", "invalid", "expired"]);
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

async function chain(): Promise<ChainFixture> {
  // 400 ms slots: a blockhash lives about 60 s, longer than any outage here.
  const fixture = await startChainFixture({ slotMs: 400, confirmSlots: 1, finalizeSlots: 4 });
  cleanups.push(() => fixture.stop());
  return fixture;
}

async function gateways(fixture: ChainFixture, count: number, redisEnv: Record<string, string>) {
  const started = await Promise.all(
    Array.from({ length: count }, () =>
      startGatewayProcess({
        rpcUrl: fixture.localnet.rpcUrl,
        wsUrl: fixture.localnet.wsUrl,
        chain: CHAIN,
        extra: { ...redisEnv, SOLGATE_JITO_URL: fixture.localnet.blockEngineUrl },
      }),
    ),
  );
  for (const g of started) cleanups.push(() => g.kill());
  return started;
}

/** `count` signed two-transaction bundles, each tipping the engine's first tip account. */
async function signedBundles(fixture: ChainFixture, count: number): Promise<Uint8Array[][]> {
  const tips = (await (
    await fetch(`${fixture.localnet.blockEngineUrl}/bundles`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getTipAccounts", params: [] }),
    })
  ).json()) as { result: string[] };
  const tip = tips.result[0] as Address;
  const payer = await fixture.funded(10);
  const blockhash = await fixture.latestBlockhash();
  return Promise.all(
    Array.from({ length: count }, async (_, b) => {
      const txs = await Promise.all(
        [0, 1].map((i) =>
          transferTransaction({
            payer,
            blockhash,
            lamports: 1_000_000n + BigInt(b * 2 + i),
            extra: i === 1 ? [getTransferSolInstruction({ source: payer, destination: tip, amount: 1000n })] : [],
          }),
        ),
      );
      return txs.map((t) => t.wire);
    }),
  );
}

async function sendBundle(url: string, wires: Uint8Array[]): Promise<{ httpStatus: number; body: BundleBody }> {
  const res = await fetch(`${url}/v1/${CHAIN}/bundles`, {
    method: "POST",
    headers: { ...AUTH, "content-type": "application/json" },
    body: JSON.stringify({ transactions: wires.map((w) => Buffer.from(w).toString("base64")) }),
  });
  return { httpStatus: res.status, body: (await res.json()) as BundleBody };
}

interface BundleBody {
  bundleId?: string;
  status?: string;
  signatures?: string[];
  reason?: string;
  code?: string;
}

/** `GET /v1/{chain}/bundles/{id}`: the status (lower case) or the error's HTTP status and code. */
async function bundleStatus(url: string, id: string) {
  const res = await fetch(`${url}/v1/${CHAIN}/bundles/${id}`, { headers: AUTH });
  const body = (await res.json()) as BundleBody;
  const status = String(body.status ?? "")
    .replace(/^BUNDLE_STATUS_/, "")
    .toLowerCase();
  return { httpStatus: res.status, status, code: body.code, body, retryAfter: res.headers.get("retry-after") };
}

describe("bundles in a fleet sharing one Redis", () => {
  it("a bundle sent through one replica is answered for by another, dropped by the engine or landed", async () => {
    const fixture = await chain();
    const redis = await startRedisServer();
    cleanups.push(() => redis.stop());
    const [a, b] = await gateways(fixture, 2, { SOLGATE_REDIS_URL: redis.url });
    const [dropped, landing] = await signedBundles(fixture, 2);

    // The engine answers and loses it: B must not call a bundle A took "not sent through Solgate".
    await fixture.localnet.control({ bundleDropRate: 1 });
    const sent = await sendBundle(a.url, dropped);
    await fixture.localnet.control({ bundleDropRate: 0 });
    expect(sent.httpStatus, JSON.stringify(sent.body)).toBe(200);
    const onB = await bundleStatus(b.url, String(sent.body.bundleId));
    expect(onB.httpStatus, JSON.stringify(onB.body)).toBe(200);
    expect(onB.status).toBe("invalid");
    expect(onB.body.signatures).toEqual(sent.body.signatures);

    // One that lands: B knows its members, and follows it to the end.
    const taken = await sendBundle(a.url, landing);
    expect(taken.httpStatus, JSON.stringify(taken.body)).toBe(200);
    const id = String(taken.body.bundleId);
    const deadline = Date.now() + 30_000;
    let last = await bundleStatus(b.url, id);
    while (last.status !== "finalized" && Date.now() < deadline) {
      expect(last.httpStatus, JSON.stringify(last.body)).toBe(200);
      expect(last.body.signatures).toEqual(taken.body.signatures);
      await new Promise((r) => setTimeout(r, 200));
      last = await bundleStatus(b.url, id);
    }
    expect(last.status).toBe("finalized");
    // A's answer is the record B wrote: the same final state.
    expect((await bundleStatus(a.url, id)).status).toBe("finalized");
  }, 120_000);

  it("Redis killed -9: bundle lookups answer 503 store_unavailable (never 404), and a watch waits for it", async () => {
    const fixture = await chain();
    const redis = await startRedisServer({ appendonly: true });
    cleanups.push(() => redis.stop());
    const [a, b] = await gateways(fixture, 2, { SOLGATE_REDIS_URL: redis.url });
    const [dropped, refused] = await signedBundles(fixture, 2);
    await fixture.localnet.control({ bundleDropRate: 1 });
    const sent = await sendBundle(a.url, dropped);
    await fixture.localnet.control({ bundleDropRate: 0 });
    expect(sent.httpStatus, JSON.stringify(sent.body)).toBe(200);
    const id = String(sent.body.bundleId);
    // AOF is written every second: let the record reach the disk, then kill Redis without warning.
    await new Promise((r) => setTimeout(r, 1500));
    await redis.kill();

    const rest = await bundleStatus(b.url, id);
    expect(rest.httpStatus, JSON.stringify(rest.body)).toBe(503);
    expect(rest.code).toBe("store_unavailable");
    expect(Number(rest.retryAfter)).toBeGreaterThan(0);
    const client = createClient(TransactionService, createGrpcTransport({ baseUrl: b.url }));
    const grpc = await client.getBundleStatus({ chain: CHAIN, bundleId: id }, { headers: AUTH }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(grpc?.code).toBe(Code.Unavailable);
    expect(grpc?.findDetails(ErrorInfoSchema)[0]?.reason).toBe("STORE_UNAVAILABLE");
    expect(grpc?.findDetails(RetryInfoSchema)).toHaveLength(1);
    // A bundle that cannot be recorded is refused before it reaches the engine.
    const notTaken = await sendBundle(a.url, refused as Uint8Array[]);
    expect(notTaken.httpStatus, JSON.stringify(notTaken.body)).toBe(503);
    expect(notTaken.body.code).toBe("store_unavailable");

    // A watch opened now waits (within its deadline) for the store, then answers from it.
    const watched = (async () => {
      const seen: BundleStatus[] = [];
      const stream = client.watchBundle(
        { chain: CHAIN, bundleId: id },
        { headers: AUTH, signal: AbortSignal.timeout(30_000) },
      );
      for await (const event of stream) if (event.event.case === "bundle") seen.push(event.event.value.status);
      return seen;
    })();
    await new Promise((r) => setTimeout(r, 1000));
    await redis.start();
    expect(await watched).toEqual([BundleStatus.INVALID]);
    expect((await bundleStatus(a.url, id)).status).toBe("invalid");
  }, 120_000);
});

describe("bundles in a fleet on a Redis Cluster", () => {
  it("no replica answers not_found while the master holding the chain's keys is killed -9", async () => {
    const fixture = await chain();
    const redis = await startRedisCluster();
    cleanups.push(() => redis.stop());
    const replicas = await gateways(fixture, 3, redis.env);
    const bundles = await signedBundles(fixture, 8);
    // Half are lost by the engine (they read `invalid`): no replica may call them not found either.
    await fixture.localnet.control({ bundleDropRate: 0.5 });
    const ids: string[] = [];
    for (const wires of bundles) {
      const sent = await sendBundle(replicas[0].url, wires);
      expect(sent.httpStatus, JSON.stringify(sent.body)).toBe(200);
      ids.push(String(sent.body.bundleId));
    }

    // Read on every replica, 25 a second each, through the kill and the failover.
    const reads = { total: 0, refused: 0, wrong: [] as string[] };
    // When the first and the last 503 were answered (bundles this replica has seen final are answered from
    // its own memory meanwhile, so 503s and 200s interleave).
    let firstRefusal: number | undefined;
    let lastRefusal: number | undefined;
    let reading = true;
    const readers = replicas.map(async (g) => {
      for (let i = 0; reading; i++) {
        const started = Date.now();
        const id = ids[i % ids.length] as string;
        const a = await bundleStatus(g.url, id).catch((error: unknown) => error as Error);
        reads.total++;
        if (a instanceof Error) reads.wrong.push(`${g.url} ${id}: ${a.message}`);
        else if (a.httpStatus === 503 && a.code === "store_unavailable") reads.refused++;
        else if (a.httpStatus !== 200) reads.wrong.push(`${g.url} ${id}: ${a.httpStatus} ${a.code}`);
        if (!(a instanceof Error) && a.httpStatus === 503) {
          firstRefusal ??= started;
          lastRefusal = Date.now();
        }
        await new Promise((r) => setTimeout(r, Math.max(0, 40 - (Date.now() - started))));
      }
    });
    await new Promise((r) => setTimeout(r, 1000));
    await redis.killMaster(`${chainKeyPrefix(CHAIN)}bundle:${ids[0]}`);
    await new Promise((r) => setTimeout(r, 2000));
    reading = false;
    await Promise.all(readers);
    await fixture.localnet.control({ bundleDropRate: 0 });
    if (process.env.SHOW_READS === "1") {
      const refusalSpanMs = firstRefusal === undefined ? 0 : (lastRefusal as number) - firstRefusal;
      const { total, refused } = reads;
      process.stdout.write(`bundle reads through the kill: ${JSON.stringify({ total, refused, refusalSpanMs })}\n`);
    }
    expect(reads.wrong).toEqual([]);
    expect(reads.total).toBeGreaterThan(3 * 20 * 3);

    // Every bundle reaches one final state, the same on every replica.
    const deadline = Date.now() + 60_000;
    const finals = new Map<string, string>();
    while (finals.size < ids.length && Date.now() < deadline) {
      for (const id of ids.filter((i) => !finals.has(i))) {
        const answers = await Promise.all(replicas.map((g) => bundleStatus(g.url, id)));
        for (const a of answers) {
          if (a.httpStatus !== 200 && !(a.httpStatus === 503 && a.code === "store_unavailable"))
            throw new Error(`${id}: ${a.httpStatus} ${a.code}`);
        }
        const states = new Set(answers.map((a) => a.status));
        const [state] = states;
        if (states.size === 1 && state !== undefined && FINAL.has(state)) finals.set(id, state);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(finals.size).toBe(ids.length);
    for (const state of finals.values()) expect(["finalized", "invalid"]).toContain(state);
  }, 180_000);
});
