/**
 * The transactions core of one chain: send (check, simulate, submit, track), prepare (compute budget
 * and blockhash for an unsigned draft), and the status of any signature, at once or as a stream.
 * Transport-free: the Connect handler in src/services/transaction-service.ts only translates. Named
 * `Transactions` so that it never collides with the generated `TransactionService` descriptor.
 */
import type { Rpc, RpcTransport, SolanaRpcApi } from "@solana/kit";
import { createSolanaRpcFromTransport, getBase58Encoder } from "@solana/kit";
import { SolgateError } from "../errors.ts";
import type { SignatureFeed } from "../upstream/signature-feed.ts";
import type { GeyserSource } from "../upstream/geyser-source.ts";
import { createStreamStatuses } from "./stream-status.ts";
import { createBlockhashCache } from "./blockhash-cache.ts";
import type { BlockhashCache } from "./blockhash-cache.ts";
import { createPreparer } from "./prepare-transaction.ts";
import type { PrepareFeeSource, PrepareOutcome, PrepareRequest } from "./prepare-transaction.ts";
import { createSender } from "./send-transaction.ts";
import { withSendPaths } from "../upstream/send-paths.ts";
import type { SendPaths } from "../upstream/send-paths.ts";
import type { BlockEngine } from "../upstream/block-engine.ts";
import type { TipLevelSource } from "../fees/tip-levels.ts";
import { createBundles, lookupTablesFromRpc } from "./bundles.ts";
import type { Bundles } from "./bundles.ts";
import type { BundleStore } from "./bundle-store.ts";
import type { SendOutcome, SendRequest } from "./send-transaction.ts";
import { createStatusEngine } from "./status-engine.ts";
import type { StatusEngineStats } from "./status-engine.ts";
import { createMemoryTransactionStore } from "./transaction-store.ts";
import type { TransactionStore } from "./transaction-store.ts";
import type { StatusRecord } from "./transaction-status.ts";
import type { WatchEvent } from "./watchers.ts";
import { createLadders } from "./ladder/ladders.ts";
import type { Ladders } from "./ladder/ladders.ts";
import { createLadderPreparer } from "./ladder/prepare-ladder.ts";
import type { LadderOddsSource, PrepareLadderRequest, PreparedLadder } from "./ladder/prepare-ladder.ts";
import type { LadderStore } from "./ladder/ladder-store.ts";

/** Options of {@link createTransactions}. */
export interface TransactionsOptions {
  /** The chain's upstream: its kit `rpc`, and its signature feed when it has one. */
  upstream: {
    readonly rpc: Rpc<SolanaRpcApi>;
    /** The transport under `rpc`: needed with `sendPaths`, which add to it. */
    readonly transport?: RpcTransport;
    readonly signatures?: SignatureFeed;
    /** The Geyser stream, when there is one: statuses are taken from it while it is usable (stream-status.ts). */
    readonly geyser?: Pick<GeyserSource, "healthy" | "onStatus">;
  };
  /** Send-only paths every send and rebroadcast also goes to, at once (src/upstream/send-paths.ts). */
  sendPaths?: SendPaths;
  /** The chain's Jito block engine, for bundles (none: bundles are refused with BUNDLES_UNAVAILABLE). */
  blockEngine?: BlockEngine;
  /** The chain's fee market, when there is one (its odds at any price price fee ladders). */
  fees?: PrepareFeeSource & {
    readonly oddsForTransaction?: LadderOddsSource["oddsForTransaction"];
    readonly odds?: { readonly target: number };
  };
  /** Where bundles sent through Solgate live (default: in memory, the last 10,000). */
  bundleStore?: BundleStore;
  /** Where fee ladders live (default: in memory). */
  ladderStore?: LadderStore;
  /** Fee ladders' tick (default 200 ms, or `pollIntervalMs` when shorter). */
  ladderPollIntervalMs?: number;
  /** Tip levels for PrepareTransaction's tips (used with `blockEngine`, whose tip accounts are paid). */
  tipLevels?: TipLevelSource;
  /** The ceiling on a prepared tip, in lamports (SOLGATE_TIP_MAX_LAMPORTS; default prepare-tip.ts'). */
  tipMaxLamports?: bigint;
  /** Where tracked sends live (default: in memory, bounded). */
  store?: TransactionStore;
  /** Commitment at which blockhashes are fetched and checked, and transactions simulated (default `confirmed`). */
  commitment?: "processed" | "confirmed";
  /** Status engine tick (default 400 ms). */
  pollIntervalMs?: number;
  /** Status engine tick while a confirm-and-wait send is waiting (default 20 ms). */
  confirmPollIntervalMs?: number;
  /** Rebroadcast period of unseen sends (default 2 s). */
  rebroadcastIntervalMs?: number;
  /** Idle time before a watch stream gets a heartbeat (default 15 s). */
  heartbeatIntervalMs?: number;
  /** Longest wait of a confirm-and-wait send (default 90 s). */
  confirmTimeoutMs?: number;
  /** Bounds of the default store. */
  maxTracked?: number;
  terminalTtlMs?: number;
  /** Signatures Solgate did not send that may be watched at once (default 100,000). */
  maxWatchedSignatures?: number;
  /** Background failures (ticks, rebroadcasts), for logs. */
  onError?: (error: unknown) => void;
}

/** One chain's transactions core. */
export interface Transactions {
  /** @see createSender */
  send(request: SendRequest): Promise<SendOutcome>;
  /** @see createPreparer */
  prepare(request: PrepareRequest): Promise<PrepareOutcome>;
  /** Stops tracking (and rebroadcasting) a send: a fee ladder's rung that can no longer land, or need not. */
  forget(signature: string): Promise<void>;
  /**
   * Where a signature stands.
   * @throws SolgateError INVALID_PARAMETER for a malformed signature, NOT_FOUND when unknown.
   */
  status(signature: string): Promise<StatusRecord>;
  /**
   * The signature's record, then every change until it ends; heartbeats while idle.
   * @throws SolgateError INVALID_PARAMETER for a malformed signature (at once), NOT_FOUND (on first iteration).
   */
  watch(signature: string, signal?: AbortSignal): AsyncGenerator<WatchEvent, void, undefined>;
  /** The newest slot the engine has seen. */
  newestSlot(): bigint;
  stats(): StatusEngineStats;
  readonly blockhashes: BlockhashCache;
  /** Jito bundles (src/transactions/bundles.ts). */
  readonly bundles: Bundles;
  /** Fee ladders (src/transactions/ladder/). */
  readonly ladders: Ladders;
  /** PrepareLadder (src/transactions/ladder/prepare-ladder.ts). */
  prepareLadder(request: PrepareLadderRequest): Promise<PreparedLadder>;
  start(): void;
  stop(): void;
}

const base58 = getBase58Encoder();

/**
 * Checks a transaction signature given by a client: base58 of exactly 64 bytes.
 * @throws SolgateError INVALID_PARAMETER (field `signature`).
 */
export function assertIsTransactionSignature(signature: string): void {
  const fail = (why: string) => new SolgateError("INVALID_PARAMETER", `signature ${why}`, { field: "signature" });
  if (signature.length === 0) throw fail("is required");
  if (signature.length > 88 || !/^[1-9A-HJ-NP-Za-km-z]+$/.test(signature)) {
    throw fail("must be base58 (64 bytes, 87-88 characters)");
  }
  const length = base58.encode(signature).length;
  if (length !== 64) throw fail(`must be 64 bytes; this one is ${length}`);
}

/** The upstream's rpc, with sends also going to the send paths (a kit rpc over the wrapped transport). */
function rpcWithSendPaths({ upstream, sendPaths }: TransactionsOptions): Rpc<SolanaRpcApi> {
  if (upstream.transport === undefined) throw new TypeError("send paths need the upstream's transport");
  return createSolanaRpcFromTransport(withSendPaths(upstream.transport, sendPaths!));
}

/** Creates the core (stopped; call `start()`). */
export function createTransactions(options: TransactionsOptions): Transactions {
  // Sends and rebroadcasts fan out over the send paths; every other call is the RPC's.
  const rpc = options.sendPaths === undefined ? options.upstream.rpc : rpcWithSendPaths(options);
  const commitment = options.commitment ?? "confirmed";
  const store =
    options.store ??
    createMemoryTransactionStore({ maxEntries: options.maxTracked, terminalTtlMs: options.terminalTtlMs });
  const blockhashes = createBlockhashCache({
    rpc,
    commitment,
    heightMaxAgeMs: Math.max(2000, 3 * (options.pollIntervalMs ?? 400)),
  });
  const geyser = options.upstream.geyser;
  const stream = geyser === undefined ? undefined : createStreamStatuses({ healthy: () => geyser.healthy() });
  const offStream = stream === undefined ? undefined : geyser?.onStatus((event) => stream.note(event));
  const engine = createStatusEngine({
    rpc,
    ...(stream === undefined ? {} : { stream }),
    store,
    blockhashes,
    ...(options.upstream.signatures === undefined ? {} : { feed: options.upstream.signatures }),
    pollIntervalMs: options.pollIntervalMs,
    confirmPollIntervalMs: options.confirmPollIntervalMs,
    rebroadcastIntervalMs: options.rebroadcastIntervalMs,
    heartbeatIntervalMs: options.heartbeatIntervalMs,
    maxWatchedSignatures: options.maxWatchedSignatures,
    ...(options.fees?.waiting === undefined ? {} : { waiting: (wire: Uint8Array) => options.fees?.waiting?.(wire) }),
    onError: options.onError,
  });
  const sender = createSender({
    rpc,
    engine,
    blockhashes,
    fees: options.fees,
    commitment,
    confirmTimeoutMs: options.confirmTimeoutMs,
  });
  const { blockEngine, tipLevels } = options;
  const preparer = createPreparer({
    rpc,
    blockhashes,
    fees: options.fees,
    commitment,
    ...(blockEngine === undefined || tipLevels === undefined
      ? {}
      : { tips: { tipAccounts: () => blockEngine.tipAccounts(), levels: tipLevels } }),
    ...(options.tipMaxLamports === undefined ? {} : { tipMaxLamports: options.tipMaxLamports }),
  });

  const bundles = createBundles({
    engine: options.blockEngine,
    blockhashes,
    lookupTables: lookupTablesFromRpc(options.upstream.rpc),
    // Members are read, never tracked: a member rebroadcast alone could land without the rest of its bundle.
    memberRecord: (signature) => engine.record(signature),
    newestSlot: () => engine.newestSlot(),
    ...(options.bundleStore === undefined ? {} : { store: options.bundleStore }),
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    ...(options.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs: options.heartbeatIntervalMs }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });

  const fees = options.fees;
  const ladderOdds: LadderOddsSource | undefined =
    fees?.oddsForTransaction === undefined
      ? undefined
      : {
          oddsForTransaction: (wire, k) => fees.oddsForTransaction!(wire, k),
          forAccounts: (w, n) => fees.forAccounts(w, n),
        };
  const ladderTarget = fees?.odds?.target;
  const ladderPreparer = createLadderPreparer({
    rpc: options.upstream.rpc,
    preparer,
    ...(ladderOdds === undefined ? {} : { fees: ladderOdds }),
    ...(ladderTarget === undefined ? {} : { target: ladderTarget }),
    newestSlot: () => engine.newestSlot(),
  });
  const ladders = createLadders({
    rpc,
    sender: {
      send: (request) => sender.send(request),
      forget: async (signature) => {
        await engine.forget(signature);
      },
    },
    ...(ladderOdds === undefined ? {} : { fees: ladderOdds }),
    ...(ladderTarget === undefined ? {} : { target: ladderTarget }),
    ...(options.ladderStore === undefined ? {} : { store: options.ladderStore }),
    pollIntervalMs: options.ladderPollIntervalMs ?? Math.min(200, options.pollIntervalMs ?? 200),
    ...(options.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs: options.heartbeatIntervalMs }),
    onError: options.onError,
  });

  return {
    bundles,
    ladders,
    prepareLadder: (request) => ladderPreparer.prepare(request),
    send: (request) => sender.send(request),
    prepare: (request) => preparer.prepare(request),
    forget: async (signature) => {
      await engine.forget(signature);
    },
    async status(signature) {
      assertIsTransactionSignature(signature);
      const record = await engine.record(signature);
      if (record === undefined) {
        throw new SolgateError(
          "NOT_FOUND",
          `transaction ${signature} is not known to the chain and was not sent through Solgate`,
          {
            signature,
          },
        );
      }
      return record;
    },
    watch(signature, signal) {
      assertIsTransactionSignature(signature);
      return engine.watch(signature, signal);
    },
    newestSlot: () => engine.newestSlot(),
    stats: () => engine.stats(),
    blockhashes,
    start() {
      engine.start();
      ladders.start();
    },
    stop() {
      offStream?.();
      ladders.stop();
      engine.stop();
    },
  };
}
