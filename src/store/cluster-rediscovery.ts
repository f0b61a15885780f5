/**
 * The one place that reaches into node-redis past its documented API: a cluster client's slot-map
 * rediscovery. node-redis learns a new slot map only from MOVED/ASK answers (node-redis #2806); a master
 * that dies answers nothing, so without this the client retries the dead address until the OS gives up.
 * node-redis 5 has no public call for it, so this adapter uses the `_slots.rediscover` its cluster client
 * declares (in its typings, underscored: not promised across versions). test/store/cluster-rediscovery.test.ts
 * fails, by name, when an upgrade removes it; `connectRedis` refuses to start a cluster client without it
 * rather than run with the failover fix silently off.
 */
import type { createCluster } from "redis";

type Cluster = ReturnType<typeof createCluster>;

/** What an upgrade of node-redis must keep for {@link rediscoverSlots} to work. */
export const SLOT_REDISCOVERY_MEMBER = "RedisCluster._slots.rediscover";

/** Whether this node-redis cluster client still has the member {@link rediscoverSlots} calls. */
export function hasSlotRediscovery(cluster: Cluster): boolean {
  const slots = (cluster as { _slots?: { rediscover?: unknown } })._slots;
  return typeof slots?.rediscover === "function";
}

/**
 * Asks the cluster for its slot map again, starting with the node at `url`.
 * @throws Error naming {@link SLOT_REDISCOVERY_MEMBER} when node-redis no longer has it.
 */
export function rediscoverSlots(cluster: Cluster, url: string): Promise<void> {
  if (!hasSlotRediscovery(cluster)) {
    throw new Error(`node-redis no longer has ${SLOT_REDISCOVERY_MEMBER}: a dead cluster master would not be left`);
  }
  // node-redis reads only `options` of the client it starts with (to connect a fresh one to that node).
  return cluster._slots.rediscover({ options: { url } } as unknown as Parameters<Cluster["_slots"]["rediscover"]>[0]);
}
