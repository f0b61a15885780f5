/**
 * Webhooks: HTTP receivers of collection events, registered per API key. Each webhook reads its
 * collections' feeds (the same watches as WatchCollection) into one queue and delivers it in order: the
 * head is retried with backoff until it is delivered or the retry period (24 h by default) has passed,
 * and nothing behind it is sent before. A receiver that answers 410 Gone disables its webhook.
 *
 * Deliveries follow the Standard Webhooks format: `webhook-id` (the delivery's id, the same on every
 * attempt), `webhook-timestamp` (unix seconds) and `webhook-signature` (`v1,` then the base64 HMAC-SHA256
 * of `{id}.{timestamp}.{body}` keyed with the secret's bytes). Every URL, at creation and at each attempt,
 * goes through the off-chain metadata guard (http-get.ts): public addresses only, unless the server allows
 * private ones (tests).
 *
 * Here state is this process's own: webhooks, queues and deliveries live in memory. In a fleet they live in Redis
 * (redis-webhooks.ts), which shares the URL check, the signed POST and the retry rules exported below.
 */
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { SolgateError } from "../../errors.ts";
import { httpGet, HttpGetError, isNonPublicAddress } from "../http-get.ts";
import type { CollectionFeed, FeedEventKind } from "./collection-feed.ts";
import type { FeedEvent } from "./event-log.ts";
import type { FloorPrice } from "../market/market-source.ts";
import { sleep } from "../../sleep.ts";

/** A registered webhook, as listed. */
export interface WebhookInfo {
  readonly id: string;
  readonly url: string;
  readonly collections: readonly string[];
  readonly kinds: readonly FeedEventKind[];
  readonly createdAt: number;
  readonly enabled: boolean;
  readonly disabledReason: string;
}

/** A new webhook's description: a fresh id, enabled. */
export function newWebhookInfo(
  request: { url: string; kinds: readonly FeedEventKind[] },
  collections: string[],
  createdAt: number,
): WebhookInfo {
  return {
    id: `wh_${randomUUID()}`,
    url: request.url,
    collections,
    kinds: [...request.kinds],
    createdAt,
    enabled: true,
    disabledReason: "",
  };
}

/** One event's delivery to one webhook. */
export interface WebhookDeliveryInfo {
  readonly id: string;
  readonly webhookId: string;
  readonly event: FeedEvent;
  readonly state: "PENDING" | "RETRYING" | "DELIVERED" | "FAILED";
  readonly attempts: number;
  readonly lastStatus: number;
  readonly lastError: string;
  readonly lastAttemptAt: number | undefined;
  readonly nextAttemptAt: number | undefined;
}

/** Options of {@link createWebhooks}. */
export interface WebhooksOptions {
  feed: Pick<CollectionFeed, "watch">;
  /** Allow http and private or loopback addresses (tests only). Default false. */
  allowPrivateUrls?: boolean;
  /** How long a delivery is retried (default 24 h). */
  retryPeriodMs?: number;
  /** The first retry's delay (default 1 s); each next one doubles, up to `maxBackoffMs` (default 10 min). */
  firstBackoffMs?: number;
  maxBackoffMs?: number;
  /** One attempt's deadline (default 10 s). */
  attemptTimeoutMs?: number;
  /** Deliveries kept per webhook for ListWebhookDeliveries (default 1,000). */
  keptDeliveries?: number;
  /** Webhooks one key may hold (default 100). */
  maxPerKey?: number;
  /** Each attempt's outcome (metrics). */
  onAttempt?: (outcome: "delivered" | "failed" | "gone" | "given-up") => void;
  now?: () => number;
}

/** The webhooks of one chain. */
export interface Webhooks {
  /**
   * Registers a webhook for `owner` (an API key's name); the secret is returned only here.
   * @throws SolgateError WEBHOOK_URL_REFUSED, NOT_FOUND (a collection that is none), INVALID_PARAMETER.
   */
  create(
    owner: string,
    request: { url: string; collections: readonly string[]; kinds: readonly FeedEventKind[] },
  ): Promise<{ webhook: WebhookInfo; secret: string }>;
  list(owner: string): Promise<WebhookInfo[]>;
  /** @throws SolgateError WEBHOOK_NOT_FOUND (none, or another key's). */
  remove(owner: string, id: string): Promise<void>;
  /** Newest first, after position `cursor` (an index). @throws SolgateError WEBHOOK_NOT_FOUND, INVALID_PARAMETER. */
  deliveries(
    owner: string,
    id: string,
    limit: number,
    cursor: string,
  ): Promise<{ deliveries: WebhookDeliveryInfo[]; nextCursor: string | undefined }>;
  stop(): void;
}

interface Hook {
  info: WebhookInfo;
  owner: string;
  key: Buffer;
  queue: Delivery[];
  kept: Delivery[];
  stop: AbortController;
  wake: (() => void) | undefined;
}

type Delivery = { -readonly [K in keyof WebhookDeliveryInfo]: WebhookDeliveryInfo[K] } & { firstAttemptAt?: number };

/**
 * Creates the registry; deliveries start with each webhook.
 *
 * Long (~200 lines): registration and each webhook's delivery loop share the hooks and their queues.
 */
export function createWebhooks(options: WebhooksOptions): Webhooks {
  const now = options.now ?? Date.now;
  const retryPeriodMs = options.retryPeriodMs ?? 24 * 3_600_000;
  const firstBackoffMs = options.firstBackoffMs ?? 1000;
  const maxBackoffMs = options.maxBackoffMs ?? 600_000;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 10_000;
  const keptDeliveries = options.keptDeliveries ?? 1000;
  const maxPerKey = options.maxPerKey ?? 100;
  const allowPrivate = options.allowPrivateUrls ?? false;
  const hooks = new Map<string, Hook>();
  const onAttempt = options.onAttempt ?? (() => {});

  const checkUrl = (raw: string) => checkWebhookUrl(raw, allowPrivate);

  function owned(owner: string, id: string): Hook {
    const hook = hooks.get(id);
    if (hook === undefined || hook.owner !== owner)
      throw new SolgateError("WEBHOOK_NOT_FOUND", "no webhook with this id belongs to this API key", { id });
    return hook;
  }

  async function deliverLoop(hook: Hook): Promise<void> {
    const signal = hook.stop.signal;
    while (!signal.aborted) {
      const delivery = hook.queue[0];
      if (delivery === undefined || !hook.info.enabled) {
        await new Promise<void>((resolve) => {
          hook.wake = resolve;
        });
        hook.wake = undefined;
        continue;
      }
      const wait = (delivery.nextAttemptAt ?? 0) - now();
      if (wait > 0) {
        await sleep(wait, signal);
        continue;
      }
      const outcome = await attempt(hook, delivery);
      onAttempt(outcome);
      if (outcome === "delivered" || outcome === "given-up") hook.queue.shift();
      if (outcome === "gone") {
        hook.info = { ...hook.info, enabled: false, disabledReason: "the receiver answered 410 Gone" };
        for (const d of hook.queue) if (d.state !== "DELIVERED") d.state = "FAILED";
        hook.queue.length = 0;
      }
    }
  }

  async function attempt(hook: Hook, delivery: Delivery): Promise<"delivered" | "failed" | "gone" | "given-up"> {
    delivery.attempts++;
    delivery.lastAttemptAt = now();
    delivery.firstAttemptAt ??= delivery.lastAttemptAt;
    const answer = await postDelivery(hook.info.url, hook.key, delivery.id, delivery.event, {
      now,
      timeoutMs: attemptTimeoutMs,
      allowPrivate,
      signal: hook.stop.signal,
    });
    delivery.lastStatus = answer.status;
    delivery.lastError = answer.error;
    const outcome = outcomeOf(answer, delivery.firstAttemptAt, now(), retryPeriodMs);
    delivery.state = outcome === "failed" ? "RETRYING" : outcome === "delivered" ? "DELIVERED" : "FAILED";
    delivery.nextAttemptAt =
      outcome === "failed" ? now() + backoffMs(delivery.attempts, firstBackoffMs, maxBackoffMs) : undefined;
    return outcome;
  }

  function enqueue(hook: Hook, event: FeedEvent): void {
    const delivery: Delivery = {
      id: `msg_${randomUUID()}`,
      webhookId: hook.info.id,
      event,
      state: "PENDING",
      attempts: 0,
      lastStatus: 0,
      lastError: "",
      lastAttemptAt: undefined,
      nextAttemptAt: undefined,
    };
    hook.queue.push(delivery);
    hook.kept.push(delivery);
    if (hook.kept.length > keptDeliveries) hook.kept.splice(0, hook.kept.length - keptDeliveries);
    hook.wake?.();
  }

  return {
    async create(owner, request) {
      await checkUrl(request.url);
      if ([...hooks.values()].filter((h) => h.owner === owner).length >= maxPerKey)
        throw new SolgateError("INVALID_PARAMETER", `an API key may hold at most ${maxPerKey} webhooks`, {
          field: "url",
        });
      const collections = [...new Set(request.collections)];
      const stop = new AbortController();
      // Every collection is watched before the webhook exists: one that is none refuses the whole request.
      let streams;
      try {
        streams = await Promise.all(collections.map((c) => options.feed.watch(c, "", request.kinds, stop.signal)));
      } catch (error) {
        stop.abort();
        throw error;
      }
      const secretBytes = randomBytes(24);
      const info = newWebhookInfo(request, collections, now());
      const hook: Hook = { info, owner, key: secretBytes, queue: [], kept: [], stop, wake: undefined };
      hooks.set(info.id, hook);
      for (const stream of streams)
        void (async () => {
          for await (const message of stream) if ("event" in message) enqueue(hook, message.event);
        })().catch(() => {});
      void deliverLoop(hook);
      return { webhook: info, secret: `whsec_${secretBytes.toString("base64")}` };
    },
    async list(owner) {
      return [...hooks.values()].filter((h) => h.owner === owner).map((h) => h.info);
    },
    async remove(owner, id) {
      const hook = owned(owner, id);
      hook.stop.abort();
      hook.wake?.();
      hooks.delete(id);
    },
    async deliveries(owner, id, limit, cursor) {
      const hook = owned(owner, id);
      const newestFirst = [...hook.kept].reverse();
      const from = cursor === "" ? 0 : Number(cursor);
      if (!Number.isInteger(from) || from < 0)
        throw new SolgateError("INVALID_PARAMETER", "the cursor is not one this listing gave out", { field: "cursor" });
      const page = newestFirst.slice(from, from + limit).map((d) => ({ ...d }));
      return { deliveries: page, nextCursor: from + limit < newestFirst.length ? String(from + limit) : undefined };
    },
    stop() {
      for (const hook of hooks.values()) {
        hook.stop.abort();
        hook.wake?.();
      }
    },
  };
}

/**
 * Checks a webhook URL: https (or, with `allowPrivate`, http), no credentials, and a public address unless
 * private ones are allowed.
 * @throws SolgateError WEBHOOK_URL_REFUSED.
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<void> {
  const refuse = (why: string) =>
    new SolgateError("WEBHOOK_URL_REFUSED", `the webhook URL is refused: ${why}`, { field: "url" });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("not a URL");
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:"))
    throw refuse("only https URLs are delivered to");
  if (url.username !== "" || url.password !== "") throw refuse("credentials in the URL");
  if (allowPrivate) return;
  const host = url.hostname.replace(/^\[|\]$/gu, "");
  const addresses =
    isIP(host) !== 0
      ? [host]
      : await lookup(host, { all: true }).then(
          (found) => found.map((a) => a.address),
          () => [] as string[],
        );
  if (addresses.length === 0) throw refuse("the host does not resolve");
  if (addresses.every(isNonPublicAddress)) throw refuse("the host is not a public address");
}

/** One attempt's answer: the HTTP status (0 when none came) and the error ("" on success). */
export interface AttemptAnswer {
  readonly ok: boolean;
  readonly status: number;
  readonly error: string;
}

/**
 * POSTs one delivery in the Standard Webhooks format, signed with `key`, through the off-chain metadata guard.
 * Never throws.
 */
export async function postDelivery(
  url: string,
  key: Buffer,
  deliveryId: string,
  event: FeedEvent,
  options: { now: () => number; timeoutMs: number; allowPrivate: boolean; signal: AbortSignal },
): Promise<AttemptAnswer> {
  const body = Buffer.from(JSON.stringify(eventJson(event)));
  const timestamp = Math.floor(options.now() / 1000);
  const signature = createHmac("sha256", key).update(`${deliveryId}.${timestamp}.`).update(body).digest("base64");
  try {
    const response = await httpGet(url, {
      timeoutMs: options.timeoutMs,
      maxBytes: 64 * 1024,
      allowPrivateNetworks: options.allowPrivate,
      signal: options.signal,
      post: { body, contentType: "application/json" },
      headers: {
        "webhook-id": deliveryId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": `v1,${signature}`,
      },
    });
    return { ok: true, status: response.status, error: "" };
  } catch (error) {
    return {
      ok: false,
      status: error instanceof HttpGetError ? (error.status ?? 0) : 0,
      error: error instanceof Error ? error.message : String(error),
    };
  }
}

/** What an attempt means for its delivery: 410 disables, past the retry period it is given up. */
export function outcomeOf(
  answer: AttemptAnswer,
  firstAttemptAt: number,
  now: number,
  retryPeriodMs: number,
): "delivered" | "failed" | "gone" | "given-up" {
  if (answer.ok) return "delivered";
  if (answer.status === 410) return "gone";
  return now - firstAttemptAt >= retryPeriodMs ? "given-up" : "failed";
}

/** The wait before the next attempt after `attempts` failed ones: `first` doubling, at most `max`. */
export function backoffMs(attempts: number, first: number, max: number): number {
  return Math.min(max, first * 2 ** (attempts - 1));
}

/** The event's JSON as delivered: the same field names as the REST form. */
export function eventJson(event: FeedEvent): Record<string, unknown> {
  return {
    collection: event.collection,
    kind: event.kind,
    sequence: event.sequence.toString(),
    cursor: event.cursor,
    slot: event.slot.toString(),
    signature: event.signature,
    instructionIndex: event.instructionIndex,
    ...(event.innerIndex === undefined ? {} : { innerInstructionIndex: event.innerIndex }),
    commitment: "CONFIRMED",
    verifiedSize: event.verifiedSize.toString(),
    assetId: event.asset,
    compressed: event.compressed,
    owner: event.owner,
    previousOwner: event.previousOwner,
    ...(event.time === undefined ? {} : { time: new Date(event.time).toISOString() }),
    instruction: event.instruction,
    ...(event.floor === undefined ? {} : { floorPrice: floorJson(event.floor) }),
    ...(event.previousFloor === undefined ? {} : { previousFloorPrice: floorJson(event.previousFloor) }),
  };
}

function floorJson(floor: FloorPrice): Record<string, unknown> {
  return {
    lamports: floor.lamports.toString(),
    sol: floor.sol,
    updatedAt: floor.updatedAt.toISOString(),
    source: floor.source,
  };
}
