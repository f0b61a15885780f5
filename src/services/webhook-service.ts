/** WebhookService: CreateWebhook, ListWebhooks, DeleteWebhook and ListWebhookDeliveries, per API key. */
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { WebhookService } from "../../gen/solgate/v1/webhook_service_pb.js";
import { WebhookDeliveryState } from "../../gen/solgate/v1/webhook_pb.js";
import type { WebhookDeliverySchema, WebhookSchema } from "../../gen/solgate/v1/webhook_pb.js";
import { CollectionEventKind } from "../../gen/solgate/v1/collection_event_pb.js";
import type { ChainRegistry } from "../chains.ts";
import type { FeedEventKind } from "../collections/feed/collection-feed.ts";
import type { WebhookDeliveryInfo, WebhookInfo, Webhooks } from "../collections/feed/webhooks.ts";
import { SolgateError } from "../errors.ts";
import { KEY_NAME } from "../server/auth.ts";
import { FEED_KINDS, KINDS, toCollectionEvent } from "./collection-service.ts";

const STATES: Record<WebhookDeliveryInfo["state"], WebhookDeliveryState> = {
  PENDING: WebhookDeliveryState.PENDING,
  RETRYING: WebhookDeliveryState.RETRYING,
  DELIVERED: WebhookDeliveryState.DELIVERED,
  FAILED: WebhookDeliveryState.FAILED,
};

function webhooksOf(chains: ChainRegistry, chain: string): Webhooks {
  const webhooks = chains.resolve(chain).webhooks;
  if (webhooks === undefined) throw new SolgateError("NOT_FOUND", "this chain takes no webhooks");
  return webhooks;
}

/** Webhooks belong to the API key's name; with no key checked (never on a served route) they belong to nobody. */
function ownerOf(ctx: HandlerContext): string {
  return ctx.values.get(KEY_NAME) ?? "";
}

/** The Connect implementation of WebhookService. */
export function createWebhookServiceImpl(deps: { chains: ChainRegistry }): ServiceImpl<typeof WebhookService> {
  return {
    async createWebhook(req, ctx) {
      const kinds = req.kinds.map((k) => FEED_KINDS.get(k)).filter((k): k is FeedEventKind => k !== undefined);
      const { webhook, secret } = await webhooksOf(deps.chains, req.chain).create(ownerOf(ctx), {
        url: req.url,
        collections: req.collections,
        kinds,
      });
      return { webhook: toWebhook(webhook), secret };
    },
    async listWebhooks(req, ctx) {
      return { webhooks: (await webhooksOf(deps.chains, req.chain).list(ownerOf(ctx))).map(toWebhook) };
    },
    async deleteWebhook(req, ctx) {
      await webhooksOf(deps.chains, req.chain).remove(ownerOf(ctx), req.id);
      return {};
    },
    async listWebhookDeliveries(req, ctx) {
      const page = await webhooksOf(deps.chains, req.chain).deliveries(
        ownerOf(ctx),
        req.id,
        req.limit || 20,
        req.cursor,
      );
      return { deliveries: page.deliveries.map(toDelivery), nextCursor: page.nextCursor };
    },
  };
}

function toWebhook(info: WebhookInfo): MessageInitShape<typeof WebhookSchema> {
  return {
    id: info.id,
    url: info.url,
    collections: [...info.collections],
    kinds: info.kinds.map((k) => KINDS[k] ?? CollectionEventKind.UNSPECIFIED),
    createTime: timestampFromMs(info.createdAt),
    enabled: info.enabled,
    disabledReason: info.disabledReason,
  };
}

function toDelivery(d: WebhookDeliveryInfo): MessageInitShape<typeof WebhookDeliverySchema> {
  return {
    id: d.id,
    webhookId: d.webhookId,
    event: toCollectionEvent(d.event),
    state: STATES[d.state],
    attempts: d.attempts,
    lastStatus: d.lastStatus,
    lastError: d.lastError,
    ...(d.lastAttemptAt === undefined ? {} : { lastAttemptTime: timestampFromMs(d.lastAttemptAt) }),
    ...(d.nextAttemptAt === undefined ? {} : { nextAttemptTime: timestampFromMs(d.nextAttemptAt) }),
  };
}
