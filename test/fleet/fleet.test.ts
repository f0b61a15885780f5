/**
 * The fleet, of real processes: gateways sharing a real Redis, behind a real HAProxy running
 * deploy/haproxy.cfg, over one standalone localnet that drops half of all submissions. Replicas and
 * Redis are killed -9 mid-flight; every send must still reach its true terminal status, and no replica
 * may ever answer NOT_FOUND for a send any replica took.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Signature } from "@solana/kit";
import { ErrorInfoSchema, RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { TransactionStatus } from "../../gen/solgate/v1/transaction_pb.js";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { chainKeyPrefix, connectRedis } from "../../src/store/redis.ts";
import { startRedisServer } from "../store/redis-server.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";
import { FLEET_KEY, restSend, restStatus, startGatewayProcess, startHaproxy } from "./fleet-harness.ts";
import type { GatewayProcess } from "./fleet-harness.ts";

const CHAIN = "fleet";
const TERMINAL = new Set(["finalized", "failed", "expired"]);
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

/** A localnet with 100 ms slots (a blockhash lives about 15 s), and a funded payer. */
async function chain(): Promise<ChainFixture> {
  const fixture = await startChainFixture({ slotMs: 100, confirmSlots: 1, finalizeSlots: 4 });
  cleanups.push(() => fixture.stop());
  return fixture;
}

async function signedTransfers(fixture: ChainFixture, count: number) {
  const payer = await fixture.funded(10);
  const blockhash = await fixture.latestBlockhash();
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      transferTransaction({ payer, blockhash, lamports: 1_000_000n + BigInt(i) }),
    ),
  );
}

async function gateway(fixture: ChainFixture, redisUrl: string | undefined, port?: number): Promise<GatewayProcess> {
  const g = await startGatewayProcess({
    rpcUrl: fixture.localnet.rpcUrl,
    wsUrl: fixture.localnet.wsUrl,
    chain: CHAIN,
    ...(redisUrl === undefined ? {} : { redisUrl }),
    ...(port === undefined ? {} : { port }),
  });
  cleanups.push(() => g.kill());
  return g;
}

/** A gateway started alone on `redisUrl`, resolved once it holds the fleet's lease. */
async function leaseHolder(fixture: ChainFixture, redisUrl: string): Promise<GatewayProcess> {
  const g = await gateway(fixture, redisUrl);
  const probe = await connectRedis({ topology: { kind: "single", url: redisUrl } });
  try {
    const deadline = Date.now() + 10_000;
    while ((await probe.client.get(`${chainKeyPrefix(CHAIN)}lease`)) === null) {
      if (Date.now() > deadline) throw new Error("no replica took the lease");
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await probe.close();
  }
  return g;
}

/**
 * Asks every base URL for every signature until each is terminal everywhere; any NOT_FOUND fails.
 * Resolves to the final status of each signature.
 */
async function followToTheEnd(urls: string[], signatures: string[], timeoutMs: number): Promise<Map<string, string>> {
  const final = new Map<string, string>();
  const deadline = Date.now() + timeoutMs;
  while (final.size < signatures.length && Date.now() < deadline) {
    for (const signature of signatures.filter((s) => !final.has(s))) {
      const answers = await Promise.all(urls.map((url) => restStatus(url, CHAIN, signature)));
      for (const [i, a] of answers.entries()) {
        if (!a.ok) throw new Error(`${urls[i]} answered ${a.httpStatus} ${a.code} for ${signature}`);
      }
      const statuses = answers.map((a) => (a.ok ? a.status : ""));
      if (statuses.every((s) => TERMINAL.has(s))) final.set(signature, statuses[0]);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return final;
}

/** What the chain itself says: landed (at any commitment) or not. */
async function landedOnChain(fixture: ChainFixture, signatures: string[]): Promise<boolean[]> {
  const { value } = await fixture.upstream.rpc
    .getSignatureStatuses(signatures as Signature[], { searchTransactionHistory: true })
    .send();
  return value.map((s) => s !== null);
}

describe("a fleet of three gateways behind HAProxy, sharing Redis", () => {
  it("keeps every send when the replica that took them (and holds the lease) is killed -9 mid-flight", async () => {
    const fixture = await chain();
    const redis = await startRedisServer();
    cleanups.push(() => redis.stop());
    // A starts alone, so it holds the fleet's lease: killing it also tests the takeover of the fleet-wide work.
    const a = await leaseHolder(fixture, redis.url);
    const [b, c] = await Promise.all([gateway(fixture, redis.url), gateway(fixture, redis.url)]);
    const proxy = await startHaproxy([a.port, b.port, c.port]);
    cleanups.push(() => proxy.stop());

    const transfers = await signedTransfers(fixture, 24);
    await fixture.localnet.control({ dropRate: 0.5 });
    const answers = await Promise.all(
      transfers.map((t, i) => restSend(i % 2 === 0 ? proxy.url : a.url, CHAIN, t.wire)),
    );
    for (const answer of answers) {
      expect(answer.httpStatus).toBe(200);
      expect(answer.body.status).toBe("submitted");
    }
    await a.kill();

    const signatures = transfers.map((t) => t.signature);
    const final = await followToTheEnd([proxy.url, b.url, c.url], signatures, 60_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\nhaproxy said:\n${proxy.output()}`);
    });
    const landed = await landedOnChain(fixture, signatures);
    for (const [i, signature] of signatures.entries()) {
      expect(final.get(signature), signature).toBe(landed[i] ? "finalized" : "expired");
    }
    // Rebroadcast every 500 ms for about 15 s, each try dropped half the time: every one lands.
    expect(landed.every(Boolean)).toBe(true);
  }, 180_000);
});

/** A send confirmed and finalized in about a second; a watch still open after this has missed the news. */
const WATCH_DEADLINE_MS = 30_000;

/** The statuses an SSE watch (`/events`) reports until its response ends. */
async function sseStatuses(baseUrl: string, signature: string): Promise<string[]> {
  const res = await fetch(`${baseUrl}/v1/${CHAIN}/transactions/${signature}/events`, {
    headers: { authorization: `Bearer ${FLEET_KEY}` },
    signal: AbortSignal.timeout(WATCH_DEADLINE_MS),
  });
  if (res.status !== 200) throw new Error(`${baseUrl} watch: ${res.status} ${await res.text()}`);
  const text = await res.text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => (JSON.parse(line.slice(6)) as { status: string }).status);
}

/** The statuses a gRPC WatchStatus stream reports until it ends. */
async function grpcStatuses(baseUrl: string, signature: string): Promise<string[]> {
  const client = createClient(TransactionService, createGrpcTransport({ baseUrl }));
  const seen: string[] = [];
  const stream = client.watchStatus(
    { chain: CHAIN, signature },
    {
      headers: { authorization: `Bearer ${FLEET_KEY}` },
      signal: AbortSignal.timeout(WATCH_DEADLINE_MS),
    },
  );
  for await (const update of stream) {
    if (update.event.case === "record") seen.push(TransactionStatus[update.event.value.status]);
  }
  return seen;
}

describe("watch streams in a fleet", () => {
  it("follow a send on replicas that neither took it nor poll the chain, through Redis pub/sub", async () => {
    const fixture = await chain();
    const redis = await startRedisServer();
    cleanups.push(() => redis.stop());
    // A starts alone, so it holds the lease and does all polling: B and C learn only from the channel.
    const a = await leaseHolder(fixture, redis.url);
    const [b, c] = await Promise.all([gateway(fixture, redis.url), gateway(fixture, redis.url)]);
    const [transfer] = await signedTransfers(fixture, 1);
    const sent = await restSend(a.url, CHAIN, transfer.wire);
    expect(sent.body.status).toBe("submitted");

    const [onB, onC] = await Promise.all([
      sseStatuses(b.url, transfer.signature),
      grpcStatuses(c.url, transfer.signature),
    ]);
    expect(onB.at(-1)).toBe("finalized");
    expect(onC.at(-1)).toBe("FINALIZED");
    // Each watch saw the send before it was final, so the final record reached it as a change, not as a first read.
    expect(onB.length).toBeGreaterThan(1);
    expect(onC.length).toBeGreaterThan(1);
  }, 120_000);
});

describe("one gateway with Redis", () => {
  it("resumes every unexpired send after it is killed -9 and restarted", async () => {
    const fixture = await chain();
    const redis = await startRedisServer();
    cleanups.push(() => redis.stop());
    const first = await gateway(fixture, redis.url);
    const transfers = await signedTransfers(fixture, 12);
    await fixture.localnet.control({ dropRate: 0.5 });
    const answers = await Promise.all(transfers.map((t) => restSend(first.url, CHAIN, t.wire)));
    expect(answers.map((a) => a.body.status)).toEqual(transfers.map(() => "submitted"));
    await first.kill();

    const again = await gateway(fixture, redis.url, first.port);
    const signatures = transfers.map((t) => t.signature);
    const final = await followToTheEnd([again.url], signatures, 60_000);
    expect([...final.values()]).toEqual(signatures.map(() => "finalized"));
  }, 180_000);

  it("refuses sends while Redis is down (UNAVAILABLE, nothing taken), and recovers by itself when it returns", async () => {
    const fixture = await chain();
    const redis = await startRedisServer({ appendonly: true });
    cleanups.push(() => redis.stop());
    const g = await gateway(fixture, redis.url);
    const transfers = await signedTransfers(fixture, 8);
    await fixture.localnet.control({ dropRate: 0.5 });
    // Nothing lands while Redis is away, so that the chain cannot answer for the sends taken.
    await fixture.localnet.control({ dropRate: 1 });
    const before = await Promise.all(transfers.slice(0, 6).map((t) => restSend(g.url, CHAIN, t.wire)));
    expect(before.map((a) => a.body.status)).toEqual(before.map(() => "submitted"));
    // AOF is written every second: let the records reach the disk, then kill Redis without warning.
    await new Promise((r) => setTimeout(r, 1500));
    await redis.kill();

    // A send taken is never "not found" because the store cannot be read: REST 503 store_unavailable with a
    // Retry-After; gRPC UNAVAILABLE with reason STORE_UNAVAILABLE and a RetryInfo.
    const client = createClient(TransactionService, createGrpcTransport({ baseUrl: g.url }));
    const auth = { headers: { authorization: `Bearer ${FLEET_KEY}` } };
    for (const t of transfers.slice(0, 6)) {
      const rest = await fetch(`${g.url}/v1/${CHAIN}/transactions/${t.signature}/status`, auth);
      expect(rest.status, t.signature).toBe(503);
      expect(((await rest.json()) as { code: string }).code).toBe("store_unavailable");
      expect(Number(rest.headers.get("retry-after"))).toBeGreaterThan(0);
      const grpc = await client.getTransactionStatus({ chain: CHAIN, signature: t.signature }, auth).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(grpc?.code).toBe(Code.Unavailable);
      expect(grpc?.findDetails(ErrorInfoSchema)[0]?.reason).toBe("STORE_UNAVAILABLE");
      expect(grpc?.findDetails(RetryInfoSchema)).toHaveLength(1);
    }
    // A watch opened now waits for the store (within its deadline) rather than ending NOT_FOUND.
    const watched = grpcStatuses(g.url, transfers[0].signature);
    await new Promise((r) => setTimeout(r, 1000));

    const refused = await restSend(g.url, CHAIN, transfers[6].wire);
    expect(refused.httpStatus).toBe(503);
    expect(refused.body.code).toBe("store_unavailable");
    const notReady = await fetch(`${g.url}/readyz`);
    expect(notReady.status).toBe(503);

    await redis.start();
    const deadline = Date.now() + 15_000;
    while ((await fetch(`${g.url}/readyz`)).status !== 200) {
      if (Date.now() > deadline) throw new Error("the gateway did not become ready again");
      await new Promise((r) => setTimeout(r, 200));
    }
    await fixture.localnet.control({ dropRate: 0.5 });
    const after = await Promise.all(transfers.slice(6).map((t) => restSend(g.url, CHAIN, t.wire)));
    expect(after.map((a) => a.body.status)).toEqual(after.map(() => "submitted"));
    expect((await watched).at(-1)).toBe("FINALIZED");

    const signatures = transfers.map((t) => t.signature);
    const final = await followToTheEnd([g.url], signatures, 60_000);
    const landed = await landedOnChain(fixture, signatures);
    for (const [i, signature] of signatures.entries()) {
      expect(final.get(signature), signature).toBe(landed[i] ? "finalized" : "expired");
    }
    expect(landed.every(Boolean)).toBe(true);
  }, 180_000);
});
