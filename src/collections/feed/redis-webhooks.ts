/**
 * Webhooks in a fleet: registrations, each webhook's place in its collections' logs, the delivery being tried
 * and the deliveries kept for ListWebhookDeliveries all live in Redis beside the feed's log
 * (redis-feed-store.ts), so any replica answers for any webhook and a delivery outlives the replica trying it.
 *
 * A webhook's queue is the log itself: per collection, the last sequence it is done with. Only the holder of
 * the fee lease (the replica that appends to the log) delivers. For each enabled webhook it takes the next
 * event of its collections (the oldest appended first), makes it the head delivery (stored, with its attempts),
 * and tries it until it is delivered, the receiver answers 410 (the webhook is disabled), or the retry period
 * has passed (given up); nothing behind it goes first. A delivery's id is derived from the webhook, the
 * collection and the sequence, so an attempt made again by the next lease holder (the last one died after
 * POSTing, before recording) carries the same `webhook-id`: at least once, idempotent for the receiver.
 */
import { createHash, randomBytes } from "node:crypto";
import { SolgateError } from "../../errors.ts";
import type { Lease } from "../../store/lease.ts";
import type { Redis } from "../../store/redis.ts";
import { sleep } from "../../sleep.ts";
import type { FeedEvent } from "./event-log.ts";
import type { FeedStore } from "./redis-feed-store.ts";
import { backoffMs, checkWebhookUrl, newWebhookInfo, outcomeOf, postDelivery } from "./webhooks.ts";
import type { WebhookDeliveryInfo, WebhookInfo, Webhooks, WebhooksOptions } from "./webhooks.ts";

/** Options of {@link createRedisWebhooks}. */
export interface RedisWebhooksOptions extends WebhooksOptions {
  redis: Redis;
  /** The chain's key prefix. */
  prefix: string;
  store: FeedStore;
  /** The fee lease: its holder delivers. */
  lease: Lease;
  /** Time between delivery rounds (default 200 ms). */
  pollMs?: number;
  onError?: (error: unknown) => void;
}

interface StoredHook {
  info: WebhookInfo;
  owner: string;
  /** The signing secret's bytes, base64. */
  key: string;
}

/** The head delivery of a webhook, as stored. */
interface Head {
  id: string;
  collection: string;
  sequence: string;
  attempts: number;
  firstAttemptAt?: number;
  lastAttemptAt?: number;
  nextAttemptAt?: number;
  lastStatus: number;
  lastError: string;
}

/** A kept delivery, as stored (its event referred to, and copied for the listing). */
type KeptDelivery = Omit<WebhookDeliveryInfo, "event"> & { event: string };

/** The webhooks of one chain, in Redis. */
export function createRedisWebhooks(options: RedisWebhooksOptions): Webhooks {
  const { redis, store, lease } = options;
  const p = `${options.prefix}wh:`;
  const now = options.now ?? Date.now;
  const retryPeriodMs = options.retryPeriodMs ?? 24 * 3_600_000;
  const firstBackoffMs = options.firstBackoffMs ?? 1000;
  const maxBackoffMs = options.maxBackoffMs ?? 600_000;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 10_000;
  const keptDeliveries = options.keptDeliveries ?? 1000;
  const maxPerKey = options.maxPerKey ?? 100;
  const allowPrivate = options.allowPrivateUrls ?? false;
  const onAttempt = options.onAttempt ?? (() => {});
  const onError = options.onError ?? (() => {});
  const key = {
    hooks: `${p}hooks`,
    places: (id: string) => `${p}places:${id}`,
    head: (id: string) => `${p}head:${id}`,
    kept: (id: string) => `${p}kept:${id}`,
    keptIds: (id: string) => `${p}kept-ids:${id}`,
  };
  const stopping = new AbortController();
  const inFlight = new Map<string, Promise<void>>();

  async function hooks(): Promise<StoredHook[]> {
    const all = await redis.run("read webhooks", (c) => c.hGetAll(key.hooks));
    return Object.values(all).map((json) => JSON.parse(json) as StoredHook);
  }

  async function owned(owner: string, id: string): Promise<StoredHook> {
    const json = await redis.run("read a webhook", (c) => c.hGet(key.hooks, id));
    const hook = json === null || json === undefined ? undefined : (JSON.parse(json) as StoredHook);
    if (hook === undefined || hook.owner !== owner)
      throw new SolgateError("WEBHOOK_NOT_FOUND", "no webhook with this id belongs to this API key", { id });
    return hook;
  }

  function deliveryIdOf(hookId: string, collection: string, sequence: bigint): string {
    const digest = createHash("sha256").update(`${hookId}:${collection}:${sequence}`).digest("hex");
    return `msg_${digest.slice(0, 32)}`;
  }

  async function keep(hookId: string, delivery: KeptDelivery, isNew: boolean): Promise<void> {
    await redis.run("record a webhook delivery", async (c) => {
      await c.hSet(key.kept(hookId), delivery.id, JSON.stringify(delivery));
      if (!isNew) return;
      await c.lPush(key.keptIds(hookId), delivery.id);
      // Past the kept number, the oldest go.
      for (;;) {
        if ((await c.lLen(key.keptIds(hookId))) <= keptDeliveries) break;
        const oldest = await c.rPop(key.keptIds(hookId));
        if (oldest === null) break;
        await c.hDel(key.kept(hookId), oldest);
      }
    });
  }

  /** The next event this webhook has not handled yet, oldest appended first; its places move past unwanted ones. */
  async function nextEvent(hook: StoredHook): Promise<FeedEvent | undefined> {
    const places = await redis.run("read a webhook's places", (c) => c.hGetAll(key.places(hook.info.id)));
    let next: FeedEvent | undefined;
    for (const collection of hook.info.collections) {
      let after = BigInt(places[collection] ?? 0);
      for (;;) {
        const [event] = await store.read(collection, after, 1);
        if (event === undefined) break;
        if (hook.info.kinds.length === 0 || hook.info.kinds.includes(event.kind)) {
          if (next === undefined || event.appendedAt < next.appendedAt) next = event;
          break;
        }
        after = event.sequence;
        await redis.run("move a webhook's place", (c) => c.hSet(key.places(hook.info.id), collection, String(after)));
      }
    }
    return next;
  }

  /**
   * One step of one webhook: take the next event as its head, or try the head when it is due. Resolves to
   * whether it finished with the head (the next one may be due at once).
   */
  async function step(hook: StoredHook): Promise<boolean> {
    const id = hook.info.id;
    const stored = await redis.run("read a webhook's head", (c) => c.get(key.head(id)));
    let head = stored === null || stored === undefined ? undefined : (JSON.parse(stored) as Head);
    let event: FeedEvent | undefined;
    if (head === undefined) {
      event = await nextEvent(hook);
      if (event === undefined) return false;
      head = {
        id: deliveryIdOf(id, event.collection, event.sequence),
        collection: event.collection,
        sequence: String(event.sequence),
        attempts: 0,
        lastStatus: 0,
        lastError: "",
      };
      await redis.run("record a webhook's head", (c) => c.set(key.head(id), JSON.stringify(head)));
      await keep(id, keptOf(hook, head, event, "PENDING"), true);
    }
    if ((head.nextAttemptAt ?? 0) > now()) return false;
    event ??= (await store.read(head.collection, BigInt(head.sequence) - 1n, 1))[0];
    if (event === undefined || event.sequence !== BigInt(head.sequence)) {
      // The log no longer holds it (older than its retention): given up, never skipped silently.
      await finish(hook, head, undefined, "given-up", "the event is no longer in the collection's log");
      return true;
    }
    head.attempts++;
    head.lastAttemptAt = now();
    head.firstAttemptAt ??= head.lastAttemptAt;
    const answer = await postDelivery(hook.info.url, Buffer.from(hook.key, "base64"), head.id, event, {
      now,
      timeoutMs: attemptTimeoutMs,
      allowPrivate,
      signal: stopping.signal,
    });
    if (stopping.signal.aborted) return false;
    head.lastStatus = answer.status;
    head.lastError = answer.error;
    const outcome = outcomeOf(answer, head.firstAttemptAt, now(), retryPeriodMs);
    onAttempt(outcome);
    if (outcome === "failed") {
      head.nextAttemptAt = now() + backoffMs(head.attempts, firstBackoffMs, maxBackoffMs);
      await redis.run("record a webhook's head", (c) => c.set(key.head(id), JSON.stringify(head)));
      await keep(id, keptOf(hook, head, event, "RETRYING"), false);
      return false;
    }
    await finish(hook, head, event, outcome, answer.error);
    return outcome !== "gone";
  }

  async function finish(
    hook: StoredHook,
    head: Head,
    event: FeedEvent | undefined,
    outcome: "delivered" | "gone" | "given-up",
    error: string,
  ): Promise<void> {
    const id = hook.info.id;
    head.nextAttemptAt = undefined;
    if (event !== undefined)
      await keep(id, keptOf(hook, head, event, outcome === "delivered" ? "DELIVERED" : "FAILED"), false);
    else {
      const json = await redis.run("read a webhook delivery", (c) => c.hGet(key.kept(id), head.id));
      if (json !== null && json !== undefined)
        await keep(id, { ...(JSON.parse(json) as KeptDelivery), state: "FAILED", lastError: error }, false);
    }
    if (outcome === "gone") {
      const disabled: StoredHook = {
        ...hook,
        info: { ...hook.info, enabled: false, disabledReason: "the receiver answered 410 Gone" },
      };
      await redis.run("disable a webhook", (c) => c.hSet(key.hooks, id, JSON.stringify(disabled)));
    }
    // Done with this event: the place moves past it, and the next one becomes the head.
    await redis.run("move a webhook's place", async (c) => {
      await c.hSet(key.places(id), head.collection, head.sequence);
      await c.del(key.head(id));
    });
  }

  function keptOf(hook: StoredHook, head: Head, event: FeedEvent, state: KeptDelivery["state"]): KeptDelivery {
    return {
      id: head.id,
      webhookId: hook.info.id,
      event: encodeEvent(event),
      state,
      attempts: head.attempts,
      lastStatus: head.lastStatus,
      lastError: head.lastError,
      lastAttemptAt: head.lastAttemptAt,
      nextAttemptAt: state === "RETRYING" ? head.nextAttemptAt : undefined,
    };
  }

  async function loop(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        if (await lease.hold()) {
          for (const hook of await hooks()) {
            if (!hook.info.enabled || inFlight.has(hook.info.id)) continue;
            // Each webhook on its own: a slow receiver holds up only its own deliveries.
            const task = (async () => {
              // Every event due now, in order, before the next round.
              for (let i = 0; i < 100 && !stopping.signal.aborted && (await step(hook)); i++);
            })()
              .catch(onError)
              .finally(() => inFlight.delete(hook.info.id));
            inFlight.set(hook.info.id, task);
          }
        }
      } catch (error) {
        onError(error);
      }
      await sleep(options.pollMs ?? 200, stopping.signal);
    }
    await Promise.all(inFlight.values());
  }
  const running = loop();

  return {
    async create(owner, request) {
      await checkWebhookUrl(request.url, allowPrivate);
      if ((await hooks()).filter((h) => h.owner === owner).length >= maxPerKey)
        throw new SolgateError("INVALID_PARAMETER", `an API key may hold at most ${maxPerKey} webhooks`, {
          field: "url",
        });
      const collections = [...new Set(request.collections)];
      // Every collection is watched (so the fleet follows it) before the webhook exists: one that is none refuses
      // the whole request.
      const probe = new AbortController();
      try {
        await Promise.all(collections.map((c) => options.feed.watch(c, "", request.kinds, probe.signal)));
      } finally {
        probe.abort();
      }
      const secret = randomBytes(24);
      const info = newWebhookInfo(request, collections, now());
      // From now on: each collection's place is its log's head.
      const heads = await Promise.all(collections.map((c) => store.head(c)));
      const stored: StoredHook = { info, owner, key: secret.toString("base64") };
      await redis.run("create a webhook", async (c) => {
        await c.hSet(key.places(info.id), Object.fromEntries(collections.map((col, i) => [col, String(heads[i])])));
        await c.hSet(key.hooks, info.id, JSON.stringify(stored));
      });
      return { webhook: info, secret: `whsec_${secret.toString("base64")}` };
    },
    async list(owner) {
      return (await hooks()).filter((h) => h.owner === owner).map((h) => h.info);
    },
    async remove(owner, id) {
      await owned(owner, id);
      await redis.run("delete a webhook", async (c) => {
        await c.hDel(key.hooks, id);
        await c.del([key.places(id), key.head(id), key.kept(id), key.keptIds(id)]);
      });
    },
    async deliveries(owner, id, limit, cursor) {
      await owned(owner, id);
      const from = cursor === "" ? 0 : Number(cursor);
      if (!Number.isInteger(from) || from < 0)
        throw new SolgateError("INVALID_PARAMETER", "the cursor is not one this listing gave out", { field: "cursor" });
      const [ids, total] = await Promise.all([
        redis.run("list webhook deliveries", (c) => c.lRange(key.keptIds(id), from, from + limit - 1)),
        redis.run("list webhook deliveries", (c) => c.lLen(key.keptIds(id))),
      ]);
      const rows =
        ids.length === 0 ? [] : await redis.run("list webhook deliveries", (c) => c.hmGet(key.kept(id), ids));
      const deliveries = rows.flatMap((json) => {
        if (json === null || json === undefined) return [];
        const kept = JSON.parse(json) as KeptDelivery;
        return [{ ...kept, event: decodeEvent(kept.event) }];
      });
      return { deliveries, nextCursor: from + limit < total ? String(from + limit) : undefined };
    },
    stop() {
      stopping.abort();
      void running;
    },
  };
}

function encodeEvent(event: FeedEvent): string {
  const floorJson = (f: FeedEvent["floor"]) =>
    f === undefined ? undefined : { ...f, lamports: String(f.lamports), updatedAt: f.updatedAt.toISOString() };
  return JSON.stringify({
    ...event,
    slot: String(event.slot),
    verifiedSize: String(event.verifiedSize),
    sequence: String(event.sequence),
    floor: floorJson(event.floor),
    previousFloor: floorJson(event.previousFloor),
  });
}

function decodeEvent(text: string): FeedEvent {
  const raw = JSON.parse(text) as Record<string, unknown>;
  const floorOf = (f: unknown) => {
    if (f === undefined || f === null) return undefined;
    const floor = f as { lamports: string; updatedAt: string; sol: number; source: string };
    return { ...floor, lamports: BigInt(floor.lamports), updatedAt: new Date(floor.updatedAt) };
  };
  const floor = floorOf(raw.floor);
  const previousFloor = floorOf(raw.previousFloor);
  return {
    ...(raw as unknown as FeedEvent),
    slot: BigInt(raw.slot as string),
    verifiedSize: BigInt(raw.verifiedSize as string),
    sequence: BigInt(raw.sequence as string),
    floor,
    previousFloor,
  } as FeedEvent;
}
