/**
 * The connection to Redis that a fleet of replicas shares (`SOLGATE_REDIS_URL`), on node-redis, the
 * client Redis itself maintains. A command never waits for Redis to come back: while the connection is
 * down it fails at once (no offline queue), and a command that gets no answer fails after
 * `commandTimeoutMs`, so a send that cannot be recorded is refused instead of taken and lost. The client
 * reconnects by itself, with a bounded backoff, and subscriptions are renewed on reconnect.
 */
import { createClient } from "redis";
import { SolgateError } from "../errors.ts";

/** A node-redis client as this module configures it. */
export type RedisClient = ReturnType<typeof createClient>;

/** Options of {@link connectRedis}. */
export interface RedisOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://`). */
  url: string;
  /** Longest wait for any one command (default 2 s). */
  commandTimeoutMs?: number;
  /** Connection errors, for logs (the client reconnects by itself). */
  onError?: (error: unknown) => void;
}

/** A connection and a second one for subscriptions (a subscribed connection runs no other commands). */
export interface Redis {
  readonly client: RedisClient;
  readonly subscriber: RedisClient;
  /** Whether the command connection is up right now. */
  isReady(): boolean;
  /**
   * Runs `command`, failing fast while Redis is away or slow.
   * @throws SolgateError STORE_UNAVAILABLE when Redis does not answer in time or is not connected.
   */
  run<T>(what: string, command: (client: RedisClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Backoff between reconnection attempts: 50 ms, doubling, at most 1 s. */
export function reconnectDelay(attempt: number): number {
  return Math.min(50 * 2 ** Math.min(attempt, 5), 1000);
}

/**
 * Connects (resolves once both connections are up, or rejects after `connectTimeoutMs` of trying).
 * @throws Error naming the host (never the password) when Redis cannot be reached at start.
 */
export async function connectRedis(options: RedisOptions & { connectTimeoutMs?: number }): Promise<Redis> {
  const commandTimeoutMs = options.commandTimeoutMs ?? 2000;
  const onError = options.onError ?? (() => {});
  const client = createClient({
    url: options.url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: reconnectDelay },
  });
  client.on("error", onError);
  const subscriber = client.duplicate();
  subscriber.on("error", onError);
  const deadline = AbortSignal.timeout(options.connectTimeoutMs ?? 10_000);
  const connect = (c: RedisClient) =>
    new Promise<void>((resolve, reject) => {
      const fail = () => reject(new Error(`Redis at ${safeOrigin(options.url)} did not answer`));
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
  try {
    await Promise.all([connect(client), connect(subscriber)]);
  } catch (error) {
    client.destroy();
    subscriber.destroy();
    throw error;
  }

  return {
    client,
    subscriber,
    isReady: () => client.isReady,
    async run(what, command) {
      if (!client.isReady) throw unavailable(what);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(unavailable(what)), commandTimeoutMs);
      });
      try {
        return await Promise.race([command(client), timeout]);
      } catch (error) {
        throw error instanceof SolgateError ? error : unavailable(what, error);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      await Promise.allSettled([client.close(), subscriber.close()]);
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
