/**
 * The transaction store a fleet shares, in Redis: every replica records, reads and follows the same
 * sends, so any of them can answer for a send another took, and a send outlives the replica that took
 * it. Per chain, under `prefix`:
 *
 *   <prefix>tx:<signature>  hash {json: the tracked send, rank: its state's rank, joined: set once a second
 *                           insert found it}; settled ones expire
 *   <prefix>active          set of the signatures not yet settled for good
 *   <prefix>status          pub/sub channel of new records, so watchers on every replica hear of them
 *   <prefix>lease           the lease of the fleet-wide work (status polling, rebroadcasting)
 *
 * Writes that must go together (a send and its place in the active set; a state that may only move
 * forward) are Lua scripts, atomic in Redis.
 */
import { randomUUID } from "node:crypto";
import { SolgateError } from "../errors.ts";
import { createRedisLease } from "../store/lease.ts";
import type { Redis } from "../store/redis.ts";
import type { ChainError } from "./transaction-error.ts";
import type { StatusRecord, TransactionState } from "./transaction-status.ts";
import { stateRank } from "./transaction-store.ts";
import type { TrackedSend, TransactionStore } from "./transaction-store.ts";

/** Options of {@link createRedisTransactionStore}. */
export interface RedisTransactionStoreOptions {
  redis: Redis;
  /** Key prefix, one per chain, its hash tag the chain (`chainKeyPrefix`, e.g. `solgate:{mainnet}:`). */
  prefix: string;
  /** The most sends in flight at once, fleet-wide (default 100,000). */
  maxActive?: number;
  /** How long a settled send is kept for status queries (default 10 minutes). */
  terminalTtlMs?: number;
  /** How long the fleet-wide work waits for a dead holder's lease (default 3 s). */
  leaseTtlMs?: number;
  /** A published record that could not be read (a newer replica's format), for logs. */
  onError?: (error: unknown) => void;
}

// KEYS: tx key, active set. ARGV: json, rank, signature, max active. -> [0] added, [1, json] tracked, [2] full.
const INSERT = `
local existing = redis.call('HGET', KEYS[1], 'json')
if existing then
  redis.call('HSET', KEYS[1], 'joined', '1')
  return {1, existing}
end
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[4]) then return {2} end
redis.call('HSET', KEYS[1], 'json', ARGV[1], 'rank', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return {0}`;

// KEYS: tx key, active set. ARGV: json, rank, signature, terminal (1/0), ttl ms. -> 1 written, 0 stale.
const PUT = `
local rank = tonumber(redis.call('HGET', KEYS[1], 'rank') or '-1')
if tonumber(ARGV[2]) < rank then return 0 end
redis.call('HSET', KEYS[1], 'json', ARGV[1], 'rank', ARGV[2])
if ARGV[4] == '1' then
  redis.call('SREM', KEYS[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
else
  redis.call('PERSIST', KEYS[1])
  redis.call('SADD', KEYS[2], ARGV[3])
end
return 1`;

// KEYS: tx key, active set. ARGV: signature. -> 1 forgotten, 0 kept (another replica found it by INSERT).
const DELETE = `
if redis.call('HGET', KEYS[1], 'joined') then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
return 1`;

/** Creates the store (its subscription to the status channel starts at once). */
export async function createRedisTransactionStore(options: RedisTransactionStoreOptions): Promise<TransactionStore> {
  const { redis, prefix } = options;
  const maxActive = options.maxActive ?? 100_000;
  const ttlMs = options.terminalTtlMs ?? 10 * 60_000;
  const onError = options.onError ?? (() => {});
  const activeKey = `${prefix}active`;
  const channel = `${prefix}status`;
  const keyOf = (signature: string) => `${prefix}tx:${signature}`;
  // Published records carry their origin, so that this replica, which told its own listeners at once, skips its echo.
  const origin = randomUUID();
  const listeners = new Set<(record: StatusRecord) => void>();
  const tell = (record: StatusRecord) => {
    for (const listener of listeners) listener(record);
  };

  await redis.subscribe(channel, (message) => {
    try {
      const { o, r } = JSON.parse(message) as { o: string; r: string };
      if (o !== origin) tell(decodeRecord(r));
    } catch (error) {
      onError(error);
    }
  });

  async function get(signature: string): Promise<TrackedSend | undefined> {
    const json = await redis.run("read a send", (c) => c.hGet(keyOf(signature), "json"));
    return json === null || json === undefined ? undefined : decodeSend(json);
  }

  return {
    get,
    async insert(send) {
      const reply = (await redis.run("record a send", (c) =>
        c.eval(INSERT, {
          keys: [keyOf(send.signature), activeKey],
          arguments: [encodeSend(send), String(stateRank(send.state)), send.signature, String(maxActive)],
        }),
      )) as [number, string?];
      // Only then may the client hear `submitted`: a failover after this point cannot lose the send.
      await redis.replicated("replicate a send", keyOf(send.signature));
      if (reply[0] === 1) return decodeSend(String(reply[1]));
      if (reply[0] === 2) {
        throw new SolgateError(
          "RATE_LIMITED",
          "too many transactions in flight; retry shortly",
          { maxTracked: maxActive },
          {
            retryAfterMs: 2000,
          },
        );
      }
      return undefined;
    },
    async put(send) {
      const terminal = stateRank(send.state) === 2;
      await redis.run("update a send", (c) =>
        c.eval(PUT, {
          keys: [keyOf(send.signature), activeKey],
          arguments: [
            encodeSend(send),
            String(stateRank(send.state)),
            send.signature,
            terminal ? "1" : "0",
            String(ttlMs),
          ],
        }),
      );
    },
    async delete(signature) {
      const forgotten = await redis.run("forget a send", (c) =>
        c.eval(DELETE, { keys: [keyOf(signature), activeKey], arguments: [signature] }),
      );
      return Number(forgotten) === 1;
    },
    async active() {
      const signatures = await redis.run("list sends in flight", (c) => c.sMembers(activeKey));
      if (signatures.length === 0) return [];
      // One round trip: node-redis sends the batch as a pipeline.
      const jsons = (await redis.run("read sends in flight", (c) =>
        Promise.all(signatures.map((signature) => c.hGet(keyOf(signature), "json"))),
      )) as (string | null)[];
      const sends: TrackedSend[] = [];
      const gone: string[] = [];
      jsons.forEach((json, i) => {
        if (json === null) gone.push(signatures[i]);
        else sends.push(decodeSend(json));
      });
      // A member whose record is gone (deleted between the two reads, or an old crash) leaves the set.
      if (gone.length > 0) await redis.run("tidy the set in flight", (c) => c.sRem(activeKey, gone)).catch(onError);
      return sends.filter((s) => stateRank(s.state) < 2);
    },
    async publish(record) {
      tell(record);
      await redis.publish("publish a record", channel, JSON.stringify({ o: origin, r: encodeRecord(record) }));
    },
    onPublished(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    lease: createRedisLease({ redis, key: `${prefix}lease`, holder: origin, ttlMs: options.leaseTtlMs }),
  };
}

/** The JSON form of a record: bigints as decimal strings, dates as epoch ms, bytes as base64. */
interface RecordJson {
  signature: string;
  state: TransactionState;
  updatedAt: number;
  slot?: string;
  error?: ChainError;
  fee?: string;
  lastValidBlockHeight?: string;
  /** Why it waits: odds, k, landing price, own price (prices as decimal strings). */
  waiting?: [number, number, string, string];
}

interface SendJson extends RecordJson {
  wire: string;
  blockhash: string;
  expiryExact: boolean;
  commitment: "processed" | "confirmed";
  expectedFee?: string;
  landed: boolean;
  lastBroadcastAt: number;
  broadcasts: number;
}

const big = (v: bigint | undefined) => (v === undefined ? undefined : v.toString());
const unbig = (v: string | undefined) => (v === undefined ? undefined : BigInt(v));

function recordJson(r: StatusRecord): RecordJson {
  return {
    signature: r.signature,
    state: r.state,
    updatedAt: r.updatedAt.getTime(),
    slot: big(r.slot),
    error: r.error,
    fee: big(r.fee),
    lastValidBlockHeight: big(r.lastValidBlockHeight),
    ...(r.waiting === undefined
      ? {}
      : {
          waiting: [r.waiting.odds, r.waiting.withinSlots, String(r.waiting.landingPrice), String(r.waiting.price)],
        }),
  };
}

function recordOf(j: RecordJson): StatusRecord {
  return {
    signature: j.signature,
    state: j.state,
    updatedAt: new Date(j.updatedAt),
    ...(j.slot === undefined ? {} : { slot: BigInt(j.slot) }),
    ...(j.error === undefined ? {} : { error: j.error }),
    ...(j.fee === undefined ? {} : { fee: BigInt(j.fee) }),
    ...(j.lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight: BigInt(j.lastValidBlockHeight) }),
    ...(j.waiting === undefined
      ? {}
      : {
          waiting: {
            odds: j.waiting[0],
            withinSlots: j.waiting[1],
            landingPrice: BigInt(j.waiting[2]),
            price: BigInt(j.waiting[3]),
          },
        }),
  };
}

/** Serialises a record for the status channel. */
export function encodeRecord(r: StatusRecord): string {
  return JSON.stringify(recordJson(r));
}

/** Reads a record from the status channel. */
export function decodeRecord(text: string): StatusRecord {
  return recordOf(JSON.parse(text) as RecordJson);
}

/** Serialises a tracked send for its hash. */
export function encodeSend(s: TrackedSend): string {
  const json: SendJson = {
    ...recordJson(s),
    wire: Buffer.from(s.wire).toString("base64"),
    blockhash: s.blockhash,
    expiryExact: s.expiryExact,
    commitment: s.commitment,
    expectedFee: big(s.expectedFee),
    landed: s.landed,
    lastBroadcastAt: s.lastBroadcastAt,
    broadcasts: s.broadcasts,
  };
  return JSON.stringify(json);
}

/** Reads a tracked send from its hash. */
export function decodeSend(text: string): TrackedSend {
  const j = JSON.parse(text) as SendJson;
  const expectedFee = unbig(j.expectedFee);
  return {
    ...recordOf(j),
    wire: new Uint8Array(Buffer.from(j.wire, "base64")),
    blockhash: j.blockhash,
    expiryExact: j.expiryExact,
    commitment: j.commitment,
    ...(expectedFee === undefined ? {} : { expectedFee }),
    landed: j.landed,
    lastBroadcastAt: j.lastBroadcastAt,
    broadcasts: j.broadcasts,
  };
}
