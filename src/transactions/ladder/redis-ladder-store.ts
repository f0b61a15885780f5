/**
 * Ladders in the fleet's Redis, on the store primitives of src/store/ (connection, lease, pub/sub), apart from the
 * tracked sends' store:
 *   <prefix>ladder:<id>     the ladder as JSON (rung bytes included, so that any replica can go on climbing);
 *                           expires `finalTtlMs` after it is final
 *   <prefix>ladders:open    the ids of ladders not final
 *   <prefix>ladders:lease   the lease of the climbing (one replica ticks every open ladder)
 *   <prefix>ladders         the channel new records are published on
 */
import { randomUUID } from "node:crypto";
import { createRedisLease } from "../../store/lease.ts";
import type { Redis } from "../../store/redis.ts";
import { isFinalLadder } from "./ladder-record.ts";
import type { Ladder } from "./ladder-record.ts";
import type { LadderStore } from "./ladder-store.ts";

/** Options of {@link createRedisLadderStore}. */
export interface RedisLadderStoreOptions {
  redis: Redis;
  /** The chain's key prefix (`chainKeyPrefix`). */
  prefix: string;
  /** How long a final ladder is kept (default 10 minutes). */
  finalTtlMs?: number;
  /** How long the climbing waits for a dead holder's lease (default 3 s). */
  leaseTtlMs?: number;
  onError?: (error: unknown) => void;
}

/** A ladder as JSON: bigints as `{"$n": "..."}`, bytes as `{"$b": "<base64>"}`, the date as epoch ms. */
export function encodeLadder(ladder: Ladder): string {
  return JSON.stringify({ ...ladder, updatedAt: ladder.updatedAt.getTime() }, (_key, value: unknown) => {
    if (typeof value === "bigint") return { $n: value.toString() };
    if (value instanceof Uint8Array) return { $b: Buffer.from(value).toString("base64") };
    return value;
  });
}

/** The inverse of {@link encodeLadder}. */
export function decodeLadder(json: string): Ladder {
  const parsed = JSON.parse(json, (_key, value: unknown) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const tagged = value as { $n?: string; $b?: string };
      if (typeof tagged.$n === "string" && Object.keys(value).length === 1) return BigInt(tagged.$n);
      if (typeof tagged.$b === "string" && Object.keys(value).length === 1)
        return new Uint8Array(Buffer.from(tagged.$b, "base64"));
    }
    return value;
  }) as Omit<Ladder, "updatedAt"> & { updatedAt: number };
  return { ...parsed, updatedAt: new Date(parsed.updatedAt) };
}

/** Creates the store (its subscription to the ladder channel starts at once). */
export async function createRedisLadderStore(options: RedisLadderStoreOptions): Promise<LadderStore> {
  const { redis, prefix } = options;
  const ttlMs = options.finalTtlMs ?? 600_000;
  const onError = options.onError ?? (() => {});
  const openKey = `${prefix}ladders:open`;
  const channel = `${prefix}ladders`;
  const keyOf = (id: string) => `${prefix}ladder:${id}`;
  // Published records carry their origin, so that this replica, which told its own listeners at once, skips its echo.
  const origin = randomUUID();
  const listeners = new Set<(ladder: Ladder) => void>();
  const tell = (ladder: Ladder) => {
    for (const listener of listeners) listener(ladder);
  };
  await redis.subscribe(channel, (message) => {
    try {
      const { o, l } = JSON.parse(message) as { o: string; l: string };
      if (o !== origin) tell(decodeLadder(l));
    } catch (error) {
      onError(error);
    }
  });

  async function get(id: string): Promise<Ladder | undefined> {
    const json = await redis.run("read a ladder", (c) => c.get(keyOf(id)));
    return json === null || json === undefined ? undefined : decodeLadder(json);
  }

  return {
    get,
    async insert(ladder) {
      const set = await redis.run("record a ladder", (c) =>
        c.set(keyOf(ladder.id), encodeLadder(ladder), { NX: true }),
      );
      if (set === null) return get(ladder.id);
      await redis.run("list a ladder", (c) => c.sAdd(openKey, ladder.id));
      await redis.replicated("replicate a ladder", keyOf(ladder.id));
      return undefined;
    },
    async put(ladder) {
      const final = isFinalLadder(ladder);
      await redis.run("update a ladder", (c) =>
        final
          ? c.multi().set(keyOf(ladder.id), encodeLadder(ladder), { PX: ttlMs }).sRem(openKey, ladder.id).exec()
          : c.multi().set(keyOf(ladder.id), encodeLadder(ladder)).sAdd(openKey, ladder.id).exec(),
      );
    },
    async delete(id) {
      await redis.run("forget a ladder", (c) => c.multi().del(keyOf(id)).sRem(openKey, id).exec());
    },
    async open() {
      const ids = await redis.run("list open ladders", (c) => c.sMembers(openKey));
      if (ids.length === 0) return [];
      const jsons = await redis.run("read open ladders", (c) => c.mGet(ids.map(keyOf)));
      return jsons
        .filter((json): json is string => typeof json === "string")
        .map(decodeLadder)
        .filter((ladder) => !isFinalLadder(ladder));
    },
    publish(ladder) {
      tell(ladder);
      void redis
        .publish("publish a ladder", channel, JSON.stringify({ o: origin, l: encodeLadder(ladder) }))
        .catch(onError);
    },
    onPublished(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    lease: createRedisLease({ redis, key: `${prefix}ladders:lease`, holder: origin, ttlMs: options.leaseTtlMs }),
  };
}
