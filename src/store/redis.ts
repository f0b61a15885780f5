/**
 * The connection to Redis that a fleet of replicas shares, on node-redis, the client Redis itself maintains:
 * one server (`SOLGATE_REDIS_URL`), a Redis Cluster (`SOLGATE_REDIS_CLUSTER_NODES`) or a primary found through
 * Sentinel (`SOLGATE_REDIS_SENTINELS`), each with node-redis' own client for it. A command never waits for
 * Redis to come back: while the connection is down it fails at once (no offline queue), and a command that gets
 * no answer fails after `commandTimeoutMs`, so a send that cannot be recorded is refused instead of taken and
 * lost. A failover in progress is the same as a short outage. The clients reconnect (and, on a cluster or
 * Sentinel, rediscover the primaries) by themselves; subscriptions are renewed on reconnect.
 *
 * Keys that a script or a transaction touches together share a hash tag (`solgate:{<chain>}:...`), so that
 * they live in one cluster slot; see {@link chainKeyPrefix}.
 */
import { createClient, createCluster, createSentinel } from "redis";
import { SolgateError } from "../errors.ts";
import { SLOT_REDISCOVERY_MEMBER, hasSlotRediscovery, rediscoverSlots } from "./cluster-rediscovery.ts";

/**
 * The commands the stores use, as node-redis' single-server client types them. The cluster and Sentinel
 * clients take the same calls for single-slot work (every script and transaction here names keys of one hash
 * tag), so they are used through this type; the store tests run every store on all three topologies.
 */
export type RedisClient = ReturnType<typeof createClient>;

/** Where the shared store is. */
export type RedisTopology =
  | { kind: "single"; url: string }
  /** Seed nodes of a Redis Cluster (`redis://[user:password@]host:port`); the rest is discovered. */
  | { kind: "cluster"; nodes: string[] }
  /** Sentinels watching the primary named `name`; the primary and its replicas are discovered. */
  | { kind: "sentinel"; sentinels: { host: string; port: number }[]; name: string };

/** Options of {@link connectRedis}. */
export interface RedisOptions {
  topology: RedisTopology;
  /** Longest wait for any one command (default 2 s). */
  commandTimeoutMs?: number;
  /** Connection errors, for logs (the client reconnects by itself). */
  onError?: (error: unknown) => void;
}

/** A connection for commands and pub/sub, whatever the topology. */
export interface Redis {
  readonly client: RedisClient;
  /** Whether commands can be expected to succeed right now (connected; on a cluster, the last check passed). */
  isReady(): boolean;
  /**
   * Runs `command`, failing fast while Redis is away or slow.
   * @throws SolgateError STORE_UNAVAILABLE when Redis does not answer in time or is not connected.
   */
  run<T>(what: string, command: (client: RedisClient) => Promise<T>): Promise<T>;
  /**
   * Waits until the last write to `key`'s master reached a replica (`WAIT 1`), so that a failover right after
   * cannot lose it. A master with no replica connected is refused for its first 10 s alone (a master whose
   * replica was just promoted looks exactly like that), then passes (running without a replica: its loss is an
   * outage, not a failover). A no-op on one server.
   * @throws SolgateError STORE_UNAVAILABLE when a replica is connected but did not acknowledge in time.
   */
  replicated(what: string, key: string): Promise<void>;
  /**
   * Publishes on `channel` (PUBLISH). On a cluster these are classic channels, not sharded ones: node-redis
   * 5.12's sharded subscriptions are lost on a manual failover (the SUNSUBSCRIBE the old master sends is not
   * followed to the new one; test/store/redis-topologies.test.ts showed it), while its classic subscription
   * is moved to a live node on every rediscovery. Status messages are few, so the cluster-wide fan-out is cheap.
   */
  publish(what: string, channel: string, message: string): Promise<void>;
  /** Listens on `channel`, renewed by the client after every reconnect or rediscovery. */
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  close(): Promise<void>;
}

/**
 * How long a master must stay without any replica before sends are taken with no replica's acknowledgement: a
 * master that lost its replica a moment ago is usually one being failed over, and what it takes is then lost.
 */
const REPLICALESS_GRACE_MS = 10_000;

/** Backoff between reconnection attempts: 50 ms, doubling, at most 1 s. */
export function reconnectDelay(attempt: number): number {
  return Math.min(50 * 2 ** Math.min(attempt, 5), 1000);
}

/**
 * The key prefix of one chain's shared state. The chain's name is the hash tag: everything a script or a
 * transaction touches together (a send and the set of sends in flight) lands in one cluster slot.
 */
export function chainKeyPrefix(chain: string): string {
  return `solgate:{${chain}}:`;
}

/** Where the store is, for logs: hosts only, never a password. */
export function describeTopology(topology: RedisTopology): string {
  if (topology.kind === "single") return safeOrigin(topology.url);
  if (topology.kind === "cluster") return `cluster ${topology.nodes.map(safeOrigin).join(",")}`;
  return `sentinel ${topology.name}@${topology.sentinels.map((s) => `${s.host}:${s.port}`).join(",")}`;
}

/**
 * Connects (resolves once the connections are up, or rejects after `connectTimeoutMs` of trying).
 * @throws Error naming the hosts (never a password) when Redis cannot be reached at start.
 */
export async function connectRedis(options: RedisOptions & { connectTimeoutMs?: number }): Promise<Redis> {
  const { topology } = options;
  const commandTimeoutMs = options.commandTimeoutMs ?? 2000;
  const replicationWaitMs = Math.min(500, Math.floor(commandTimeoutMs / 2));
  // By shard (hash tag): since when its master has answered with no replica connected.
  const replicalessSince = new Map<string, number>();
  const onError = options.onError ?? (() => {});
  const socket = { connectTimeout: 2000, reconnectStrategy: reconnectDelay };
  const deadline = AbortSignal.timeout(options.connectTimeoutMs ?? 10_000);
  const connect = (c: { connect(): Promise<unknown> }) =>
    new Promise<void>((resolve, reject) => {
      const fail = () => reject(new Error(`Redis at ${describeTopology(topology)} did not answer`));
      deadline.addEventListener("abort", fail, { once: true });
      c.connect().then(
        () => {
          deadline.removeEventListener("abort", fail);
          resolve();
        },
        (error: unknown) => {
          deadline.removeEventListener("abort", fail);
          reject(error);
        },
      );
    });

  let client: RedisClient;
  // The connection pub/sub runs on (a subscribed single-server connection runs no other commands).
  let subscriber: RedisClient;
  let closeAll: () => Promise<unknown>;
  let connected: () => boolean;
  if (topology.kind === "single") {
    client = createClient({ url: topology.url, disableOfflineQueue: true, socket });
    subscriber = client.duplicate();
    for (const c of [client, subscriber]) c.on("error", onError);
    try {
      await Promise.all([connect(client), connect(subscriber)]);
    } catch (error) {
      client.destroy();
      subscriber.destroy();
      throw error;
    }
    closeAll = () => Promise.allSettled([client.close(), subscriber.close()]);
    connected = () => client.isReady;
  } else if (topology.kind === "cluster") {
    const cluster = createCluster({
      rootNodes: topology.nodes.map((url) => ({ url })),
      defaults: { disableOfflineQueue: true, socket },
      // Through a failover the slot map changes; a few MOVED/ASK hops are expected.
      maxCommandRedirections: 8,
    });
    cluster.on("error", onError);
    // A master that dies answers nothing, so node-redis would never learn the new slot map by itself: while
    // any node connection fails, ask the cluster for its map again (at most every 500 ms); see
    // cluster-rediscovery.ts, which also says why this is not optional.
    if (!hasSlotRediscovery(cluster)) {
      cluster.destroy();
      throw new Error(`node-redis no longer has ${SLOT_REDISCOVERY_MEMBER}: see src/store/cluster-rediscovery.ts`);
    }
    let rediscovering = false;
    cluster.on("node-error", () => {
      if (rediscovering) return;
      rediscovering = true;
      rediscoverSlots(cluster, topology.nodes[0] as string)
        .catch(onError)
        .finally(() => setTimeout(() => (rediscovering = false), 500).unref());
    });
    try {
      await connect(cluster);
    } catch (error) {
      cluster.destroy();
      throw error;
    }
    client = cluster as unknown as RedisClient;
    subscriber = client;
    closeAll = () => cluster.close();
    connected = () => cluster.isOpen;
  } else {
    const sentinel = createSentinel({
      name: topology.name,
      sentinelRootNodes: topology.sentinels,
      nodeClientOptions: { disableOfflineQueue: true, socket },
      sentinelClientOptions: { socket },
      // A command that lands on a demoted primary (READONLY) is retried once the new one is known.
      maxCommandRediscovers: 4,
    });
    sentinel.on("error", onError);
    try {
      await connect(sentinel);
    } catch (error) {
      sentinel.destroy();
      throw error;
    }
    client = sentinel as unknown as RedisClient;
    subscriber = client;
    closeAll = () => sentinel.close();
    connected = () => sentinel.isReady;
  }

  // On a cluster or through Sentinel, "connected" says little about the primary a key needs, and a hung
  // server is connected too: the outcome of the last command (or of a ping each second) says more.
  // Readiness is both.
  let lastFailedAt = 0;
  const health = setInterval(() => {
    if (connected()) run("health check", (c) => c.ping()).catch(() => {});
  }, 1000);
  health.unref();

  async function run<T>(what: string, command: (client: RedisClient) => Promise<T>): Promise<T> {
    if (!connected()) throw unavailable(what);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(unavailable(what)), commandTimeoutMs);
    });
    try {
      const result = await Promise.race([command(client), timeout]);
      lastFailedAt = 0;
      return result;
    } catch (error) {
      lastFailedAt = Date.now();
      throw error instanceof SolgateError ? error : unavailable(what, error);
    } finally {
      clearTimeout(timer);
    }
  }

  const sharded = topology.kind === "cluster";
  // A command on the connection that wrote `key` (WAIT counts that connection's writes): on a cluster, the
  // connection to the master of the key's slot; through Sentinel, the master's (one connection in its pool).
  const onKeyNode = <T>(c: RedisClient, key: string, args: string[]): Promise<T> =>
    sharded
      ? (c as unknown as ReturnType<typeof createCluster>).sendCommand<T>(key, false, args)
      : (c as unknown as ReturnType<typeof createSentinel>).sendCommand<T>(false, args);
  return {
    client,
    isReady: () => connected() && lastFailedAt === 0,
    run,
    async replicated(what, key) {
      if (topology.kind === "single") return;
      // Where the key lives: its hash tag names its slot (every key written here has one).
      const shard = /\{([^}]*)\}/.exec(key)?.[1] ?? key;
      const acks = await run(what, (c) => onKeyNode<number>(c, key, ["WAIT", "1", String(replicationWaitMs)]));
      if (acks >= 1) {
        replicalessSince.delete(shard);
        return;
      }
      const role = await run(what, (c) => onKeyNode<unknown[]>(c, key, ["ROLE"]));
      const replicas = Array.isArray(role[2]) ? role[2].length : 0;
      if (replicas > 0) throw unavailable(`${what}: not acknowledged by a replica in ${replicationWaitMs} ms`);
      // No replica connected. Right after a replica was there, this is most likely a master whose replica has
      // just been promoted (a failover in progress): what it takes now would be lost when it is demoted. Only a
      // master that has stayed alone for a while is running without a replica (an outage, not a failover).
      const since = replicalessSince.get(shard) ?? Date.now();
      replicalessSince.set(shard, since);
      if (Date.now() - since < REPLICALESS_GRACE_MS)
        throw unavailable(`${what}: the master has no replica connected (a failover may be under way)`);
    },
    async publish(what, channel, message) {
      await run(what, (c) => c.publish(channel, message));
    },
    async subscribe(channel, listener) {
      await subscriber.subscribe(channel, listener);
    },
    async close() {
      clearInterval(health);
      await closeAll();
    },
  };
}

function unavailable(what: string, cause?: unknown): SolgateError {
  return new SolgateError(
    "STORE_UNAVAILABLE",
    `the shared store is unavailable (${what}); retry shortly`,
    {},
    { cause, retryAfterMs: 1000 },
  );
}

/** `redis://host:port` without credentials, path or query, for messages. */
export function safeOrigin(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return "(unparseable URL)";
  }
}
