/**
 * Bundles in the fleet's Redis, on the store primitives of src/store/: every replica answers for a bundle any
 * replica took, and the progress one replica reads (landed, failed, expired...) is what the others answer from
 * then on. Per chain, under `prefix` (the chain's hash tag, so that a cluster keeps them in the chain's slot):
 *
 *   <prefix>bundle:<id>   hash {b: the bundle as sent (JSON), accepted: 1 once the engine took it,
 *                         r: the furthest record (JSON), rank: its state's rank, inblock: 1 once in a block};
 *                         expires `ttlMs` after its last change
 *
 * Writes that must look at what is held (a resend, a record that may only move forward) are Lua scripts.
 */
import type { Redis } from "../store/redis.ts";
import { bundleRank, isInBlock } from "./bundle-record.ts";
import type { BundleRecord } from "./bundle-record.ts";
import type { BundleStore, SentBundle } from "./bundle-store.ts";
import { decodeRecord, encodeRecord } from "./redis-transaction-store.ts";

/** Options of {@link createRedisBundleStore}. */
export interface RedisBundleStoreOptions {
  redis: Redis;
  /** The chain's key prefix (`chainKeyPrefix`, e.g. `solgate:{mainnet}:`). */
  prefix: string;
  /** How long a bundle is kept after its last change (default 10 minutes, as settled sends). */
  ttlMs?: number;
}

// KEYS: bundle key. ARGV: bundle json, ttl ms. -> 1 recorded, 0 kept (the bundle held is in a block).
const INSERT = `
if redis.call('HGET', KEYS[1], 'inblock') == '1' then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'b', ARGV[1], 'accepted', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

// KEYS: bundle key. -> 1 marked, 0 no such bundle (forgotten, or expired: not brought back).
const ACCEPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'accepted', '1')
return 1`;

// KEYS: bundle key. ARGV: record json, rank, in block (1/0), ttl ms. -> 1 written, 0 held one kept.
const ADVANCE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local rank = tonumber(redis.call('HGET', KEYS[1], 'rank') or '-1')
if rank >= 3 or tonumber(ARGV[2]) < rank then return 0 end
redis.call('HSET', KEYS[1], 'r', ARGV[1], 'rank', ARGV[2], 'inblock', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

/** Creates the store. */
export function createRedisBundleStore(options: RedisBundleStoreOptions): BundleStore {
  const { redis, prefix } = options;
  const ttlMs = String(options.ttlMs ?? 10 * 60_000);
  const keyOf = (bundleId: string) => `${prefix}bundle:${bundleId}`;
  return {
    async get(bundleId) {
      const hash = await redis.run("read a bundle", (c) => c.hGetAll(keyOf(bundleId)));
      const sent = hash.b;
      if (sent === undefined) return undefined;
      return decodeSentBundle(bundleId, sent, hash.accepted === "1", hash.r);
    },
    async insert(bundle) {
      await redis.run("record a bundle", (c) =>
        c.eval(INSERT, { keys: [keyOf(bundle.bundleId)], arguments: [encodeSentBundle(bundle), ttlMs] }),
      );
      // Only then may the bundle go to the engine: a failover after this point cannot lose its record.
      await redis.replicated("replicate a bundle", keyOf(bundle.bundleId));
    },
    async accept(bundleId) {
      await redis.run("mark a bundle taken", (c) => c.eval(ACCEPT, { keys: [keyOf(bundleId)] }));
    },
    async delete(bundleId) {
      await redis.run("forget a bundle", (c) => c.del(keyOf(bundleId)));
    },
    async advance(bundleId, record) {
      await redis.run("update a bundle", (c) =>
        c.eval(ADVANCE, {
          keys: [keyOf(bundleId)],
          arguments: [
            encodeBundleRecord(record),
            String(bundleRank(record.state)),
            isInBlock(record) ? "1" : "0",
            ttlMs,
          ],
        }),
      );
    },
  };
}

interface SentBundleJson {
  signatures: string[];
  blockhashes: string[];
  lastValidBlockHeight?: string;
  sentAt: number;
}

interface BundleRecordJson {
  state: BundleRecord["state"];
  engineStatus?: BundleRecord["engineStatus"];
  reason?: string;
  slot?: string;
  signatures: string[];
  /** Each member's record, as the status channel carries it. */
  transactions: string[];
  lastValidBlockHeight?: string;
  updatedAt: number;
}

function encodeSentBundle(bundle: SentBundle): string {
  const json: SentBundleJson = {
    signatures: [...bundle.signatures],
    blockhashes: [...bundle.blockhashes],
    ...(bundle.lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight: String(bundle.lastValidBlockHeight) }),
    sentAt: bundle.sentAt,
  };
  return JSON.stringify(json);
}

/** Serialises a bundle's record for its hash. */
export function encodeBundleRecord(record: BundleRecord): string {
  const json: BundleRecordJson = {
    state: record.state,
    ...(record.engineStatus === undefined ? {} : { engineStatus: record.engineStatus }),
    ...(record.reason === undefined ? {} : { reason: record.reason }),
    ...(record.slot === undefined ? {} : { slot: String(record.slot) }),
    signatures: [...record.signatures],
    transactions: record.transactions.map(encodeRecord),
    ...(record.lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight: String(record.lastValidBlockHeight) }),
    updatedAt: record.updatedAt.getTime(),
  };
  return JSON.stringify(json);
}

/** The inverse of {@link encodeBundleRecord}. */
export function decodeBundleRecord(bundleId: string, text: string): BundleRecord {
  const j = JSON.parse(text) as BundleRecordJson;
  return {
    bundleId,
    state: j.state,
    ...(j.engineStatus === undefined ? {} : { engineStatus: j.engineStatus }),
    ...(j.reason === undefined ? {} : { reason: j.reason }),
    ...(j.slot === undefined ? {} : { slot: BigInt(j.slot) }),
    signatures: j.signatures,
    transactions: j.transactions.map(decodeRecord),
    ...(j.lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight: BigInt(j.lastValidBlockHeight) }),
    updatedAt: new Date(j.updatedAt),
  };
}

function decodeSentBundle(bundleId: string, text: string, accepted: boolean, record: string | undefined): SentBundle {
  const j = JSON.parse(text) as SentBundleJson;
  return {
    bundleId,
    signatures: j.signatures,
    blockhashes: j.blockhashes,
    ...(j.lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight: BigInt(j.lastValidBlockHeight) }),
    sentAt: j.sentAt,
    accepted,
    ...(record === undefined ? {} : { record: decodeBundleRecord(bundleId, record) }),
  };
}
