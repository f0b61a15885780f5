/**
 * One chain's cores, assembled from its configuration: its upstream, tip levels and fee market, transactions
 * (sends, ladders, bundles), collections with their change feed and webhooks, and the read-only cores. In a fleet
 * its Redis-backed parts (the stores and the leases that say which replica follows the chain) are opened first, by
 * {@link openChainFleet}, and passed in: every lease is an input here, never filled in after the fact.
 */
import { randomUUID } from "node:crypto";
import type { Counter } from "prom-client";
import type { ChainContext } from "./chains.ts";
import { LOCALNET_CHAIN } from "./config.ts";
import type { ChainConfig, Config } from "./config.ts";
import { createProgramAccounts } from "./programs/program-accounts.ts";
import { createFeeMarket } from "./fees/fee-market.ts";
import type { FeeMarket, FeeMarketOptions } from "./fees/fee-market.ts";
import { createEngineTipLevels, createObservedTipLevels } from "./fees/tip-levels.ts";
import type { TipLevelSource } from "./fees/tip-levels.ts";
import { createRedisWindowLog } from "./fees/window-log.ts";
import type { WindowLog } from "./fees/window-log.ts";
import { createCollections } from "./collections/collections.ts";
import type { Collections } from "./collections/collections.ts";
import type { FloorPrices } from "./collections/market/floor-prices.ts";
import type { OffchainJson } from "./collections/offchain-json.ts";
import { createCollectionFeed } from "./collections/feed/collection-feed.ts";
import { createMemoryEventLog } from "./collections/feed/event-log.ts";
import { createWebhooks } from "./collections/feed/webhooks.ts";
import { createRedisFeedStore } from "./collections/feed/redis-feed-store.ts";
import { createRedisWebhooks } from "./collections/feed/redis-webhooks.ts";
import type { FeedStore } from "./collections/feed/redis-feed-store.ts";
import type { Logger } from "./server/logger.ts";
import type { Metrics } from "./server/metrics.ts";
import type { Tracing } from "./server/tracing.ts";
import { createUpstream } from "./upstream/upstream.ts";
import type { Upstream } from "./upstream/upstream.ts";
import { createSendPaths } from "./upstream/send-paths.ts";
import type { SendPathConfig } from "./upstream/send-paths.ts";
import { createBlockEngine } from "./upstream/block-engine.ts";
import type { BlockEngine } from "./upstream/block-engine.ts";
import { createTransactions } from "./transactions/transactions.ts";
import type { TransactionStore } from "./transactions/transaction-store.ts";
import type { LadderStore } from "./transactions/ladder/ladder-store.ts";
import { createRedisTransactionStore } from "./transactions/redis-transaction-store.ts";
import { createRedisLadderStore } from "./transactions/ladder/redis-ladder-store.ts";
import { createRedisBundleStore } from "./transactions/redis-bundle-store.ts";
import type { BundleStore } from "./transactions/bundle-store.ts";
import { createAccounts } from "./accounts/accounts.ts";
import { createWallets } from "./wallets/wallets.ts";
import { createTokenHolders } from "./tokens/token-holders.ts";
import { chainKeyPrefix } from "./store/redis.ts";
import type { Redis } from "./store/redis.ts";
import { createRedisLease } from "./store/lease.ts";
import type { Lease } from "./store/lease.ts";
import { createRedisValues } from "./store/shared-values.ts";
import type { SharedValues } from "./store/shared-values.ts";

/** One chain's share of a fleet's Redis: its stores, and the leases of the work one replica does for all. */
export interface ChainFleet {
  /** Sends, their statuses and the status-following lease (only its holder subscribes to Geyser's statuses). */
  readonly transactions: TransactionStore;
  /** Ladders: any replica answers for any ladder, and a climb outlives its replica. */
  readonly ladders: LadderStore;
  /** Bundles: any replica answers for a bundle any replica took. */
  readonly bundles: BundleStore;
  /** Following blocks: only its holder reads them (and Geyser's block stream); the others replay its log. */
  readonly feeLease: Lease;
  readonly feeLog: WindowLog;
  /** Collection member counts, shared so that one replica's count answers for all. */
  readonly counts: SharedValues;
  /**
   * The collection feed's log and followed collections: the fee lease's holder (which reads the blocks, and gets
   * Geyser's block stream) appends; every replica serves watches and cursors from it.
   */
  readonly feed: FeedStore;
  /** The fleet's Redis and this chain's key prefix (the webhooks keep their state beside the feed's log). */
  readonly redis: Redis;
  readonly prefix: string;
  readonly reachable: () => boolean;
}

/** Opens `chain`'s stores and leases in the fleet's Redis. */
export async function openChainFleet(redis: Redis, chain: string, config: Config, logger: Logger): Promise<ChainFleet> {
  const prefix = chainKeyPrefix(chain);
  return {
    transactions: await createRedisTransactionStore({
      redis,
      prefix,
      maxActive: config.transactions.maxTracked,
      onError: (err) => logger.warn({ err, chain }, "redis: unreadable status message"),
    }),
    ladders: await createRedisLadderStore({
      redis,
      prefix,
      onError: (err) => logger.warn({ err, chain }, "redis: unreadable ladder message"),
    }),
    bundles: createRedisBundleStore({ redis, prefix }),
    feeLease: createRedisLease({ redis, key: `${prefix}fee-lease`, holder: randomUUID() }),
    feeLog: createRedisWindowLog({ redis, key: `${prefix}fee-blocks`, maxEntries: 2 * config.fees.windowSlots }),
    counts: createRedisValues(redis, `${prefix}count:`),
    feed: await createRedisFeedStore({
      redis,
      prefix,
      retentionMs: (config.collectionFeed ?? DEFAULT_FEED).retentionMs,
      maxEventsPerCollection: (config.collectionFeed ?? DEFAULT_FEED).maxEventsPerCollection,
      onError: (err) => logger.debug({ err, chain }, "collection feed: store read failed"),
    }),
    reachable: () => redis.isReady(),
    redis,
    prefix,
  };
}

/** What {@link assembleChain} needs besides the chain's own configuration. */
export interface ChainAssemblyInputs {
  readonly chain: ChainConfig;
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly tracing?: Tracing;
  /** The fleet's share for this chain; absent for a single process. */
  readonly fleet?: ChainFleet;
  /** The block engine bundles and tips go to when the chain names none (the embedded localnet's own). */
  readonly defaultBlockEngineUrl?: string;
  /** Shared by all chains: one floor-price cache and rate limit per marketplace, one metadata-JSON cache. */
  readonly market: FloorPrices;
  readonly offchain: OffchainJson;
  readonly webhookAttempts: Counter<"chain" | "outcome">;
  /** Fee-market options no configuration sets (benches: the odds' margin). */
  readonly feeMarket?: Pick<FeeMarketOptions, "oddsConfidence">;
  /** Called with each part's stop, in the order built; the caller runs them in reverse. */
  readonly onStop: (stop: () => Promise<void> | void) => void;
}

/** Builds and starts one chain's cores. */
export async function assembleChain(inputs: ChainAssemblyInputs): Promise<ChainContext> {
  const { chain, config, fleet, onStop } = inputs;
  const upstream = chainUpstream(inputs);
  onStop(() => upstream.close());
  const blockEngine = chainBlockEngine(chain, inputs.defaultBlockEngineUrl);
  const { fees, tipLevels } = chainFees(inputs, upstream, blockEngine);
  const transactions = createTransactions({
    upstream,
    ...(blockEngine === undefined ? {} : { blockEngine }),
    tipLevels,
    ...sendPathsOf(chain, inputs.metrics),
    fees,
    ...(fleet === undefined
      ? {}
      : { store: fleet.transactions, ladderStore: fleet.ladders, bundleStore: fleet.bundles }),
    ...config.transactions,
    onError: (err) => inputs.logger.warn({ err, chain: chain.name }, "transaction tracking failed"),
  });
  transactions.start();
  onStop(() => transactions.stop());
  const collections = createCollections(
    { upstream, market: inputs.market, offchain: inputs.offchain },
    fleet === undefined ? {} : { sharedCounts: fleet.counts },
  );
  return {
    name: chain.name,
    upstream,
    programs: createProgramAccounts({ upstream }),
    fees,
    transactions,
    collections,
    ...chainCollectionFeed(inputs, upstream, collections),
    accounts: createAccounts({ upstream }),
    wallets: createWallets({ upstream }),
    tokens: createTokenHolders({ upstream }),
  };
}

function chainUpstream({ chain, config, logger, metrics, tracing, fleet }: ChainAssemblyInputs): Upstream {
  const name = chain.name;
  return createUpstream({
    chain: name,
    rpcUrls: chain.rpcUrls,
    ...(chain.dasUrls === undefined ? {} : { dasUrl: chain.dasUrls }),
    ...(chain.wsUrls === undefined ? {} : { wsUrl: chain.wsUrls }),
    ...(chain.geyserUrl === undefined ? {} : { geyserUrl: chain.geyserUrl }),
    ...(chain.geyserToken === undefined ? {} : { geyserToken: chain.geyserToken }),
    // In a fleet only the holder of the transaction store's lease (the replica doing the fleet-wide status work)
    // subscribes to Geyser's statuses, and only the fee lease's holder (whose blocks reach every replica through
    // the Redis log) follows Geyser's blocks.
    ...(fleet === undefined ? {} : { geyserLease: fleet.transactions.lease, geyserBlocksLease: fleet.feeLease }),
    onGeyserHealth: (healthy, reason) => {
      if (healthy) logger.info({ chain: name, reason }, "geyser stream up: blocks and confirmations pushed");
      else logger.warn({ chain: name, reason }, "geyser stream down: falling back to polling");
    },
    onGeyserBlocksHealth: (healthy, reason) => {
      if (healthy) logger.info({ chain: name, reason }, "geyser block stream up: fee market fed from it");
      else logger.warn({ chain: name, reason }, "geyser block stream down: fee market reads blocks by polling");
    },
    ...config.upstream,
    // The message only: a provider's WebSocket URL carries its API key, and errors may quote it.
    onFeedError: (err) =>
      logger.warn(
        { chain: name, reason: err instanceof Error ? err.message : String(err) },
        "signature notifications unavailable; polling alone for a while",
      ),
    // Where the answer went wrong, never the answer: a provider's body may be huge or hostile.
    onRefused: (refused) => logger.warn({ chain: name, ...refused }, "upstream answer refused"),
    metrics: metrics.upstreamFor(name),
    ...(tracing === undefined ? {} : { tracer: tracing.upstreamFor(name) }),
  });
}

/** Bundles and tips: the configured block engine, else the default one (not a send path then). */
function chainBlockEngine(chain: ChainConfig, defaultUrl: string | undefined): BlockEngine | undefined {
  const url = chain.jitoUrl ?? (chain.name === LOCALNET_CHAIN ? defaultUrl : undefined);
  if (url === undefined) return undefined;
  return createBlockEngine({ url, ...(chain.jitoAuth === undefined ? {} : { auth: chain.jitoAuth }) });
}

/** The tip levels and the fee market, started. */
function chainFees(
  inputs: ChainAssemblyInputs,
  upstream: Upstream,
  blockEngine: BlockEngine | undefined,
): { fees: FeeMarket; tipLevels: TipLevelSource } {
  const { chain, config, logger, fleet, onStop } = inputs;
  // Tip levels: the block engine's tip floor when there is one, else the tips seen in the blocks read.
  const observedTips =
    blockEngine === undefined ? createObservedTipLevels({ windowSlots: config.fees.windowSlots }) : undefined;
  const tipLevels =
    observedTips ??
    createEngineTipLevels({
      engine: blockEngine!,
      onError: (err) => logger.debug({ err, chain: chain.name }, "tip floor: block engine read failed"),
    });
  tipLevels.start();
  onStop(() => tipLevels.stop());
  const fees = createFeeMarket({
    upstream,
    ...config.fees,
    ...inputs.feeMarket,
    // Processed blocks with their transactions, straight into the window; getBlock polling is the fallback.
    ...(upstream.geyserBlocks === undefined ? {} : { stream: upstream.geyserBlocks }),
    // A new confirmed block on the Geyser status stream: read now rather than at the next poll. While the block
    // stream feeds the market this reads nothing (the tick only checks every few seconds); it matters when that
    // stream is down and the confirmed one is not.
    ...(upstream.geyser === undefined ? {} : { announcements: upstream.geyser }),
    ...(fleet === undefined
      ? {}
      : { replication: { lease: fleet.feeLease, log: fleet.feeLog, reachable: fleet.reachable } }),
    ...(observedTips === undefined ? {} : { observer: observedTips }),
    // The tip levels beside the priority levels in every estimate (GetFees, EstimateFees, WatchFees,
    // PrepareTransaction).
    tips: tipLevels,
    onError: (err, during) => logger.debug({ err, chain: chain.name, during }, "fee market: upstream read failed"),
  });
  fees.start();
  // The Geyser stream counts as behind when it lags the chain's tip as the market last read it.
  upstream.geyser?.watchTip(() => fees.status().follower.tipSlot);
  onStop(() => fees.stop());
  return { fees, tipLevels };
}

/** The extra send paths the chain names (RPC nodes, a Jito block engine); none when it names none. */
function sendPathsOf(chain: ChainConfig, metrics: Metrics) {
  const paths: SendPathConfig[] = [
    ...(chain.sendUrls ?? []).map((url) => ({ kind: "rpc" as const, url })),
    ...(chain.jitoUrl === undefined
      ? []
      : [
          {
            kind: "jito" as const,
            url: chain.jitoUrl,
            ...(chain.jitoAuth === undefined ? {} : { auth: chain.jitoAuth }),
          },
        ]),
  ];
  return paths.length === 0 ? {} : { sendPaths: createSendPaths({ paths, metrics: metrics.sendPathsFor(chain.name) }) };
}

/** The collections' change feed (it reads blocks only once a collection is watched) and its webhooks. */
function chainCollectionFeed(inputs: ChainAssemblyInputs, upstream: Upstream, collections: Collections) {
  const { chain, config, logger, fleet, onStop } = inputs;
  const feedConfig = config.collectionFeed ?? DEFAULT_FEED;
  const collectionFeed = createCollectionFeed({
    upstream,
    collections,
    // In a fleet the log is the store's and the fee lease's holder alone reads blocks; alone, this process's memory.
    ...(fleet === undefined
      ? {
          log: createMemoryEventLog({
            retentionMs: feedConfig.retentionMs,
            maxEventsPerCollection: feedConfig.maxEventsPerCollection,
          }),
        }
      : { fleet: { store: fleet.feed, lease: fleet.feeLease } }),
    // With Geyser: the fee market's processed blocks, applied as the status stream confirms their slots.
    ...(upstream.geyserBlocks === undefined || upstream.geyser === undefined
      ? {}
      : { stream: { blocks: upstream.geyserBlocks, confirmed: upstream.geyser } }),
    heartbeatMs: feedConfig.heartbeatMs,
    maxCollections: feedConfig.maxCollections,
    floorPollMs: feedConfig.floorPollMs,
    ...(Object.keys(config.market.floorSources).length === 0 ? {} : { market: inputs.market }),
    onError: (err, during) => logger.debug({ err, chain: chain.name, during }, "collection feed: read failed"),
  });
  onStop(() => collectionFeed.stop());
  if (fleet !== undefined) onStop(() => fleet.feed.close());
  const webhookConfig = config.webhooks ?? DEFAULT_WEBHOOKS;
  const webhookOptions = {
    feed: collectionFeed,
    retryPeriodMs: webhookConfig.retryPeriodMs,
    allowPrivateUrls: webhookConfig.allowPrivateUrls,
    onAttempt: (outcome: "delivered" | "failed" | "gone" | "given-up") =>
      inputs.webhookAttempts.inc({ chain: chain.name, outcome }),
  };
  // In a fleet, registrations and deliveries live in the store and the fee lease's holder delivers.
  const webhooks =
    fleet === undefined
      ? createWebhooks(webhookOptions)
      : createRedisWebhooks({
          ...webhookOptions,
          redis: fleet.redis,
          prefix: fleet.prefix,
          store: fleet.feed,
          lease: fleet.feeLease,
          onError: (err) => logger.debug({ err, chain: chain.name }, "webhooks: store read failed"),
        });
  onStop(() => webhooks.stop());
  return { collectionFeed, webhooks };
}

/** The collection feed's settings where the configuration has none (tests that build a Config by hand). */
const DEFAULT_FEED = {
  retentionMs: 24 * 3_600_000,
  maxEventsPerCollection: 100_000,
  heartbeatMs: 15_000,
  maxCollections: 1000,
  floorPollMs: 60_000,
};

/** The webhooks' settings where the configuration has none. */
const DEFAULT_WEBHOOKS = { retryPeriodMs: 24 * 3_600_000, allowPrivateUrls: false };
