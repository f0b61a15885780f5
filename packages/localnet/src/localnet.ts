/**
 * The localnet's composition root (in the localnet process): chain, account index, faults,
 * method tables, PubSub and the HTTP server, with seams for what later issues add.
 *
 * Seams (each optional, see {@link LocalnetHooks}):
 * - `seed`: a "world" seeding step (NFTs, token accounts) run after the chain exists and before
 *   the server answers; it gets the chain and the account index.
 * - `extraMethods`: more method tables (DAS) merged after the core and account tables.
 * - `onStarted`: background work (traffic generators) started once the server listens.
 * - `load`: the bulk of the seeding, run once the server listens and the clock runs (see "Loading" below).
 * - account and program files (LOCALNET_ACCOUNTS_DIR, LOCALNET_ACCOUNTS, LOCALNET_PROGRAMS; loading/)
 *   are written after seeding, before the server answers.
 * - recorded blocks (LOCALNET_BLOCKS, recorded-blocks.ts) are loaded before the chain exists and held
 *   as its oldest blocks: the chain starts at the slot after the last recorded one.
 */
import type { Address } from "@solana/kit";
import { createAccountIndex, createAccountMethods, type AccountIndex } from "./accounts/index.ts";
import { encodeAccount } from "./accounts/encode-account.ts";
import { genesisOwnedAddresses } from "./loading/genesis-precedence.ts";
import { GENESIS_FEATURE_IDS } from "./cluster/feature-ids.ts";
import { reserveNodeSockets, type NodeSocketRole, type NodeSockets } from "./cluster/node-sockets.ts";

const VOTE_PROGRAM = "Vote111111111111111111111111111111111111111" as Address;
import { liveMintLookup } from "./accounts/services.ts";
import { createChain, type Chain } from "./chain/chain.ts";
import type { LocalnetConfig } from "./config.ts";
import { createFaults, NO_FAULTS, type Faults } from "./faults.ts";
import { createBlockMethods } from "./rpc/block-methods.ts";
import { createChainMethods } from "./rpc/chain-methods.ts";
import { createClusterMethods } from "./rpc/cluster-methods.ts";
import { createInflationMethods } from "./rpc/inflation-methods.ts";
import { createSignatureMethods } from "./rpc/signature-methods.ts";
import { createSupplyMethods } from "./rpc/supply-methods.ts";
import { createControlMethods } from "./rpc/control-methods.ts";
import { API_VERSION } from "./rpc/params.ts";
import { acceptsNamedParams, withNamedParams } from "./rpc/protocol.ts";
import type { MethodContext, MethodHandler, MethodTable } from "./rpc/protocol.ts";
import { createPubSub } from "./rpc/pubsub.ts";
import { createPubsubPort } from "./rpc/pubsub-port.ts";
import { createRpcServer, type Route, type RpcServer } from "./rpc/server.ts";
import { BLOCK_ENGINE_PATH, blockEngineRoutes, createBlockEngine } from "./rpc/block-engine.ts";
import { loadRecordedBlocks } from "./recorded-blocks.ts";
import { loadFiles } from "./loading/load-files.ts";
import { createTransactionMethods } from "./rpc/transaction-methods.ts";

/** What hooks get to work with. */
export interface LocalnetWorld {
  chain: Chain;
  index: AccountIndex;
  faults: Faults;
}

/** Optional extensions (see the module comment). */
export interface LocalnetHooks {
  seed?: (world: LocalnetWorld) => Promise<void> | void;
  extraMethods?: (world: LocalnetWorld) => MethodTable[];
  onStarted?: (world: LocalnetWorld & { rpcUrl: string }) => Promise<void> | void;
  /** The bulk of the seeding, after the server listens; calls that could see its accounts wait for it. */
  load?: (world: LocalnetWorld) => Promise<void>;
  /** Unexpected handler errors (they are answered with -32603). */
  onInternalError?: (err: unknown) => void;
  /** Scales the background traffic's prices (`localnet_setTrafficPriceScale`); throws when there is none. */
  setTrafficPriceScale?: (scale: number) => number;
  /** GET/POST paths served beside JSON-RPC on the same port (the marketplace's stats). */
  extraRoutes?: () => Record<string, Route>;
}

/** A running localnet inside this process. */
export interface Localnet extends LocalnetWorld {
  rpcUrl: string;
  wsUrl: string;
  port: number;
  /** The block engine's base URL (`<rpcUrl>/api/v1`), as a jito-js-rpc client takes it. */
  blockEngineUrl: string;
  /** The extra send-only ports' URLs (LOCALNET_SEND_PORTS), in the configured order. */
  sendUrls: string[];
  /** `http://host:port` of the Geyser gRPC server (undefined when it is off). */
  geyserUrl?: string;
  /** Settles once the `load` hook has finished (at once without one); rejects if it failed. */
  loaded: Promise<void>;
  /** `host:port` of the node's reserved gossip, TVU, TPU and repair sockets (getClusterNodes). */
  nodeSockets: Readonly<Record<NodeSocketRole, string>>;
  close(): Promise<void>;
}

/**
 * Methods answered while the `load` hook runs: they read the clock, blocks, signatures, fees and the
 * cluster's fixed accounts, never an account a `load` writes. Every other method waits for the load.
 */
export const ANSWERED_WHILE_LOADING: ReadonlySet<string> = new Set([
  "getBlock",
  "getBlockCommitment",
  "getBlockHeight",
  "getBlockProduction",
  "getBlockTime",
  "getBlocks",
  "getBlocksWithLimit",
  "getClusterNodes",
  "getEpochInfo",
  "getEpochSchedule",
  "getFirstAvailableBlock",
  "getGenesisHash",
  "getHealth",
  "getHighestSnapshotSlot",
  "getIdentity",
  "getInflationGovernor",
  "getInflationRate",
  "getLatestBlockhash",
  "getLeaderSchedule",
  "getMaxRetransmitSlot",
  "getMaxShredInsertSlot",
  "getMinimumBalanceForRentExemption",
  "getRecentPerformanceSamples",
  "getRecentPrioritizationFees",
  "getSignatureStatuses",
  "getSlot",
  "getSlotLeader",
  "getSlotLeaders",
  "getStakeMinimumDelegation",
  "getTransaction",
  "getTransactionCount",
  "getVersion",
  "getVoteAccounts",
  "isBlockhashValid",
  "minimumLedgerSlot",
]);

/** Builds and starts everything; resolves once the server listens and the clock runs. */
export async function startLocalnetInProcess(config: LocalnetConfig, hooks: LocalnetHooks = {}): Promise<Localnet> {
  // Recorded blocks sit below genesis: the chain starts at the slot after the last one.
  const recordedBlocks = loadRecordedBlocks(config.blocks);
  const afterRecorded = recordedBlocks.length === 0 ? 0n : recordedBlocks[recordedBlocks.length - 1]!.slot + 1n;
  const chain = await createChain({
    ...config,
    startSlot: config.startSlot > afterRecorded ? config.startSlot : afterRecorded,
    recordedBlocks,
  });
  const index = createAccountIndex(chain.svm);
  index.record([
    chain.faucet as Address,
    ...(chain.cluster.addresses as Address[]),
    ...(GENESIS_FEATURE_IDS as Address[]),
  ]);
  chain.onAccountsTouched(({ keys }) => index.record(keys));

  const faults = createFaults(config.faults, (settings) => {
    chain.frozen = settings.freeze;
  });
  chain.frozen = config.faults.freeze;
  const world: LocalnetWorld = { chain, index, faults };
  await hooks.seed?.(world);
  // After the world, so a loaded account replaces a seeded one at the same address; under genesis,
  // so it replaces none of the accounts solana-test-validator's genesis writes over the user's.
  loadFiles(chain, config.loading, genesisOwnedAddresses(chain));

  const mints = liveMintLookup(index.store);
  let listenAddress = "";
  let nodeSockets: NodeSockets | undefined;
  const lagSlots = () => faults.get().lagSlots;
  const transactionMethods = (pathFaults: Faults) =>
    createTransactionMethods({
      chain,
      faults: pathFaults,
      lagSlots,
      // With its address, as getAccountInfo encodes it: the vote and sysvar parsers need it.
      encodeAccount: (address, account, encoding) =>
        account === null
          ? null
          : encodeAccount({ ...account, address, owner: account.owner as Address }, encoding, undefined, mints),
    });
  const methods: MethodTable = {
    ...createChainMethods({ chain, lagSlots }),
    ...transactionMethods(faults),
    ...createBlockMethods({ chain }),
    ...createAccountMethods({ index, svm: chain.svm, apiVersion: API_VERSION }),
    ...createClusterMethods({
      chain,
      listenAddress: () => listenAddress,
      voteAccounts: () => index.byOwner(VOTE_PROGRAM),
      nodeSockets: () => nodeSockets?.addresses,
    }),
    ...createInflationMethods({ chain }),
    ...createSupplyMethods({ index }),
    ...createSignatureMethods({ chain }),
  };
  for (const table of hooks.extraMethods?.(world) ?? []) Object.assign(methods, table);

  // Until the load hook has run, calls that could see its accounts wait (see the module comment).
  // The server looks handlers up per call, so once loaded the originals go back in (no cost after start).
  let loading: Promise<void> | undefined;
  let releaseLoad: () => void = () => {};
  const ungated: MethodTable = {};
  if (hooks.load !== undefined) {
    loading = new Promise<void>((resolve) => {
      releaseLoad = resolve;
    });
    for (const [name, handler] of Object.entries(methods)) {
      if (ANSWERED_WHILE_LOADING.has(name)) continue;
      ungated[name] = handler;
      const gated: MethodHandler = async (params, ctx) => {
        if (loading === undefined) return handler(params, ctx);
        await loading;
        // The context (its slot) is taken when the call runs, not when it arrived.
        return handler(params, context());
      };
      methods[name] = acceptsNamedParams(handler) ? withNamedParams(gated) : gated;
    }
  }

  const context = (): MethodContext => {
    const lag = BigInt(faults.get().lagSlots);
    return {
      slotAt(commitment) {
        const slot = chain.slotAt(commitment) - lag;
        return slot < chain.genesisSlot ? chain.genesisSlot : slot;
      },
    };
  };
  const pubsub = createPubSub({
    chain,
    mints,
    voteSubscription: config.voteSubscription,
    onInternalError: hooks.onInternalError,
  });
  /** The extra send-only ports, filled once they listen (below). */
  const sendPaths: { url: string; faults: Faults }[] = [];
  // The engine's sendTransaction is the node's send without the node's drop fault: the engine drops at its
  // own rate (bundleDropRate), so that a fan-out test can tell the engine's path from the node's.
  const engineSendFaults = createFaults({ ...NO_FAULTS, seed: config.faults.seed });
  const blockEngine = createBlockEngine({
    chain,
    faults,
    sendTransaction: transactionMethods(engineSendFaults).sendTransaction!,
  });
  const server = createRpcServer({
    routes: { ...blockEngineRoutes(blockEngine, context, faults), ...hooks.extraRoutes?.() },
    methods,
    controlMethods: createControlMethods({
      chain,
      faults,
      loaded: () => loading === undefined,
      sendPaths,
      ...(hooks.setTrafficPriceScale === undefined ? {} : { setTrafficPriceScale: hooks.setTrafficPriceScale }),
    }),
    context,
    faults,
    maxBodyBytes: config.maxBodyBytes,
    onUpgrade,
    onInternalError: hooks.onInternalError,
  });
  function onUpgrade(...[req, socket, head]: Parameters<typeof pubsub.handleUpgrade>) {
    if (loading === undefined) pubsub.handleUpgrade(req, socket, head);
    else
      void loading.then(() => {
        if (!socket.destroyed) pubsub.handleUpgrade(req, socket, head);
      });
  }
  const port = await server.listen(config.port, config.host);
  nodeSockets = await reserveNodeSockets(config.host).catch(async (e) => {
    await server.close();
    throw e;
  });
  // agave's PubSub port (the RPC port + 1) when asked for; PubSub stays on the RPC port as well.
  const pubsubPort = config.pubsubPort === undefined ? undefined : createPubsubPort(onUpgrade);
  let wsPort = port;
  try {
    if (pubsubPort) wsPort = await pubsubPort.listen(config.pubsubPort!, config.host);
  } catch (e) {
    await server.close();
    await nodeSockets.close();
    throw e;
  }
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  // Extra send-only paths, each with its own drop rate (fan-out tests: one path dropping 90%, another 50%).
  const sendServers: RpcServer[] = [];
  const sendUrls: string[] = [];
  for (const [i, path] of config.sendPorts.entries()) {
    const pathFaults = createFaults({ ...NO_FAULTS, dropRate: path.dropRate, seed: config.faults.seed + i + 1 });
    const sendServer = createRpcServer({
      methods: { sendTransaction: transactionMethods(pathFaults).sendTransaction!, getHealth: methods.getHealth! },
      controlMethods: {},
      context,
      faults: pathFaults,
      maxBodyBytes: config.maxBodyBytes,
      onInternalError: hooks.onInternalError,
    });
    sendServers.push(sendServer);
    const url = `http://${host}:${await sendServer.listen(path.port, config.host)}`;
    sendUrls.push(url);
    sendPaths.push({ url, faults: pathFaults });
  }
  chain.start();
  listenAddress = `${host}:${port}`;
  const rpcUrl = `http://${host}:${port}`;
  // Loaded only when served; it listens at once and loads Connect in the background (geyser/server.ts).
  const geyser = config.geyser
    ? await (await import("./geyser/server.ts")).startGeyserServer(chain, config.geyser, config.host)
    : undefined;
  await hooks.onStarted?.({ ...world, rpcUrl });
  const load = hooks.load;
  const loaded =
    load === undefined
      ? Promise.resolve()
      : Promise.resolve()
          .then(() => load(world))
          .then(() => {
            Object.assign(methods, ungated);
            loading = undefined;
            releaseLoad();
          });
  return {
    ...world,
    rpcUrl,
    wsUrl: `ws://${host}:${wsPort}`,
    port,
    blockEngineUrl: `${rpcUrl}${BLOCK_ENGINE_PATH}`,
    sendUrls,
    geyserUrl: geyser === undefined ? undefined : `http://${host}:${geyser.port}`,
    loaded,
    nodeSockets: nodeSockets.addresses,
    async close() {
      chain.stop();
      pubsub.close();
      await geyser?.close();
      await Promise.all([
        server.close(),
        pubsubPort?.close(),
        nodeSockets?.close(),
        ...sendServers.map((sendServer) => sendServer.close()),
      ]);
    },
  };
}
