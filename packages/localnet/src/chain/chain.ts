/**
 * The chain around one LiteSVM instance: a slot clock producing a block per slot, a new blockhash
 * per block, a 151-block blockhash window, a transaction queue executed at the next slot,
 * signature history with de-duplication, commitment levels, a faucet, and recent blocks.
 *
 * LiteSVM only knows "now": it has no blocks, accepts only its latest blockhash (its check is off
 * here) and remembers 32 signatures (history is off here). Everything time-shaped is the chain's:
 * this file composes it from genesis.ts (the configured LiteSVM and first block), faucet.ts,
 * transaction-queue.ts, block-producer.ts, durable-nonce.ts and the stores beside them.
 */
import bs58 from "bs58";
import type { LiteSVM } from "litesvm";
import { Account } from "litesvm";
import type { LiteSvm } from "./litesvm-native.ts";
import type { Commitment } from "../rpc/protocol.ts";
import { decodeTransaction, type DecodedMessage, type DecodedTransaction } from "../wire/decode-transaction.ts";
import { resolveAccountKeys, staticAccountKeys, type AccountKeys } from "../wire/account-keys.ts";
import type { TransactionErrorJson } from "../wire/transaction-error.ts";
import { produceBlockAfter, type BlockProducerDeps } from "./block-producer.ts";
import { createBlockhashWindow, MAX_PROCESSING_AGE } from "./blockhash-window.ts";
import { createBlockStore, type Block, type TransactionRecord } from "./block-store.ts";
import { heldNonce, nextDurableNonceAfter, nonceToAdvance, type NonceUse } from "./durable-nonce.ts";
import { epochOfSlot, firstSlotInEpoch, type EpochScheduleParams } from "./epoch-schedule.ts";
import { createExecutor, type ExecutionOutcome, type Executor } from "./executor.ts";
import { createFaucet } from "./faucet.ts";
import { createGenesis } from "./genesis.ts";
import { createSignatureHistory, type SignatureEntry } from "./signature-history.ts";
import { createAddressSignatures, type AddressSignatures } from "./address-signatures.ts";
import { createCluster, type Cluster } from "../cluster/cluster.ts";
import { createSlotClock } from "./slot-clock.ts";
import { createTransactionQueue } from "./transaction-queue.ts";
import {
  allocatedAccountsDataSize,
  DEFAULT_DATA_SIZE_LIMIT,
  DEFAULT_REDUCED_SLOT_MS,
  limitsAtSlot,
  transactionCost,
  transactionPriority,
  transactionReward,
  type BlockLimits,
} from "./cost-model.ts";
import { bundleId, createBundlePool, priceBundle, TIP_ACCOUNTS, type BundlePool } from "./bundles.ts";
import { installLocalnetPrograms, type LocalnetPrograms } from "../programs/localnet-programs.ts";

/** Tunables of the chain; see config.ts for defaults and environment names. */
export interface ChainOptions {
  /** Slot duration in milliseconds. */
  slotMs: number;
  /** Slots after which a block counts as confirmed. */
  confirmSlots: number;
  /** Slots after which a block counts as finalized. */
  finalizeSlots: number;
  /** Signatures kept beyond the blockhash window. */
  historyLimit: number;
  /** Blocks kept for getBlock / getTransaction. */
  blockRetention: number;
  /** Transactions the buffer holds (agave: 100,000); when full the lowest priority is dropped. */
  maxQueue: number;
  /** Transactions executed per block at most; the rest wait for the next slot. */
  maxTransactionsPerBlock: number;
  /** Compute units per block until the slot-time regime takes over (solana-test-validator 4.4: 100,000,000; cost-model.ts). */
  blockCostLimit: bigint;
  /** Compute units per write-locked account per block, likewise (4.4: 40,000,000, 40% of the block's). */
  accountCostLimit: bigint;
  /**
   * The slot-time regime (ms; SIMD-0525) whose limits apply from the epoch after the genesis slot's: 200 as
   * solana-test-validator 4.4 (every feature active at genesis), 400 for none. Default 200.
   */
  reducedSlotMs?: number;
  /** Slot of the genesis block (recorded mainnet blocks can be loaded below a high start). */
  startSlot: bigint;
  /** Recorded blocks (recorded-blocks.ts), all below `startSlot`, in slot order: held as the oldest blocks. */
  recordedBlocks?: readonly Block[];
  /** Slots per epoch, no warm-up (`--slots-per-epoch`); default: LiteSVM's schedule. */
  slotsPerEpoch?: bigint;
  /** The faucet's balance (`--faucet-sol`); default: a billion SOL. */
  faucetLamports?: bigint;
  /** Keys of the identity, vote account and faucet (ed25519 seeds, from a ledger directory); default: see cluster.ts, faucet.ts. */
  keys?: ChainKeys;
}

/** 32-byte ed25519 seeds of the validator's keys (the first half of a solana-keygen keypair file). */
export interface ChainKeys {
  identity?: Uint8Array;
  voteAccount?: Uint8Array;
  faucet?: Uint8Array;
}

/** An account to write directly (seeding, tests). */
export interface AccountInput {
  lamports: bigint;
  data: Uint8Array;
  owner: string;
  executable?: boolean;
  rentEpoch?: bigint;
}

/** Accounts written by a committed transaction or a direct write, as addresses and raw keys. */
export interface TouchedAccounts {
  addresses: readonly string[];
  keys: readonly Uint8Array[];
  slot: bigint;
}

/** Point-in-time figures for `localnet_status`. */
export interface ChainStatus {
  processedSlot: bigint;
  confirmedSlot: bigint;
  finalizedSlot: bigint;
  blockHeight: bigint;
  queued: number;
  /** Transactions dropped from a full buffer since start. */
  evicted: number;
  /** Transactions that waited until their blockhash was more than 150 blocks old, since start. */
  expired: number;
  /** The newest block's packing: its cost against the limits, and what waited or expired. */
  lastBlock: {
    slot: bigint;
    transactions: number;
    cost: bigint;
    blockCostLimit: bigint;
    /** The write-locked account that took the most, and how much. */
    busiestAccount: { address: string; cost: bigint } | null;
    accountCostLimit: bigint;
    waiting: number;
    expired: number;
  };
  transactionCount: bigint;
  signaturesRemembered: number;
  blocksHeld: number;
  frozen: boolean;
}

/** The running chain. */
export interface Chain {
  /** The LiteSVM wrapper (what the account index and seeding code take). */
  readonly svm: LiteSVM;
  /** Its native binding, which this chain drives directly (the wrapper re-encodes every key through kit). */
  readonly native: LiteSvm;
  readonly executor: Executor;
  /** The emulated Token Metadata and Bubblegum programs (programs/). */
  readonly programs: LocalnetPrograms;
  readonly genesisSlot: bigint;
  /** Address of the faucet that funds requestAirdrop. */
  readonly faucet: string;
  /** The single validator (identity, vote and stake accounts). */
  readonly cluster: Cluster;
  /** Transactions per address, newest first (getSignaturesForAddress). */
  readonly addressSignatures: AddressSignatures;
  readonly epochSchedule: EpochScheduleParams;
  /** Latest slot at a commitment level. */
  slotAt(commitment: Commitment): bigint;
  block(slot: bigint): Block | undefined;
  firstAvailableBlock(): bigint;
  blockSlots(from: bigint, to: bigint): bigint[];
  /**
   * Is the transaction's blockhash (or durable nonce) usable at the block of `slot`? `maxAge`
   * defaults to 150; simulations use 144 (agave leaves room for forwarding).
   */
  isLifetimeValid(tx: DecodedTransaction, slot: bigint, maxAge?: bigint): boolean;
  /** Does the message's nonce account hold its blockhash (agave's `load_message_nonce_data`, for getFeeForMessage)? */
  holdsNonce(message: DecodedMessage): boolean;
  /** Block height of a held or recent slot. */
  blockHeightAt(slot: bigint): bigint;
  /** `lastValidBlockHeight` of a remembered blockhash. */
  lastValidBlockHeight(blockhash: string): bigint | undefined;
  signatureStatus(signature: string): SignatureEntry | undefined;
  transaction(signature: string): TransactionRecord | undefined;
  /** Is this signature waiting for the next slot? */
  isPending(signature: string): boolean;
  /** Full account list (resolving lookup tables); throws `-32602` like agave's sanitize. */
  accountKeys(tx: DecodedTransaction): AccountKeys;
  /**
   * Queues a transaction for the next slot (a duplicate or an overflow is silently ignored).
   * `verified`: its signatures were checked on these exact bytes (preflight), so execution skips it.
   */
  submit(tx: DecodedTransaction, verified?: boolean): void;
  /** Jito bundles waiting for a block, and the statuses of recent ones (bundles.ts). */
  readonly bundles: BundlePool;
  /**
   * Buffers a bundle (already checked: 1-5 decoded transactions with distinct signatures); returns its
   * id, or null when the bundle buffer is full.
   */
  submitBundle(txs: readonly DecodedTransaction[]): string | null;
  simulate(tx: DecodedTransaction, keys: AccountKeys, sigVerify: boolean): ExecutionOutcome;
  /** The error a simulation would report (null when it succeeds), without collecting its details. */
  check(tx: DecodedTransaction, sigVerify: boolean): TransactionErrorJson | null;
  /** Sends a faucet transfer through the queue; resolves to its signature. */
  airdrop(address: string, lamports: bigint): Promise<string>;
  setAccount(address: string, account: AccountInput): void;
  /** Produces one block now (the clock calls this; tests may too). Returns null when frozen. */
  produceBlock(): Block | null;
  frozen: boolean;
  status(): ChainStatus;
  /** Called after each block; returns an unsubscribe function. */
  onBlock(listener: (block: Block) => void): () => void;
  /** Called with every address a committed transaction or a direct write touched. */
  onAccountsTouched(listener: (touched: TouchedAccounts) => void): () => void;
  start(): void;
  stop(): void;
}

const STATUS_CACHE_SLOTS = 300n;
/** The rent-exempt minimum of an empty system account (agave: (128 + 0) x 3,480 x 2). */
const TIP_ACCOUNT_LAMPORTS = 890_880n;

/** Creates the chain with its genesis block; call `start()` to run the slot clock. */
export async function createChain(options: ChainOptions): Promise<Chain> {
  const genesis = createGenesis(options.startSlot, options.slotsPerEpoch);
  const { svm, epochSchedule } = genesis;
  const programs = installLocalnetPrograms(svm);
  const executor = createExecutor(svm, programs.registry);
  const window = createBlockhashWindow();
  const history = createSignatureHistory({ limit: options.historyLimit, protectSlots: STATUS_CACHE_SLOTS });
  const blocks = createBlockStore({ retention: options.blockRetention });
  // Priced on arrival as agave's receive_and_buffer does; lookup tables that do not resolve count
  // only the static write locks (the block re-resolves them, and drops the transaction if they fail).
  const price = (tx: DecodedTransaction) => {
    let keys: AccountKeys;
    try {
      keys = accountKeys(tx);
    } catch {
      keys = staticAccountKeys(tx.message);
    }
    const writable = keys.keys.filter((_, i) => keys.writable[i]);
    const cost = transactionCost(tx.message, writable.length).total;
    return {
      cost,
      priority: transactionPriority(transactionReward(tx.message), cost),
      writable,
      allocated: allocatedAccountsDataSize(tx.message),
    };
  };
  const queue = createTransactionQueue({
    maxQueue: options.maxQueue,
    isKnown: (signature) => history.has(signature),
    price: (tx) => price(tx),
  });
  // The tip accounts exist, rent-exempt, as on mainnet: a tip smaller than the rent-exempt minimum still lands.
  for (const tipAccount of TIP_ACCOUNTS) {
    svm.setAccount(
      bs58.decode(tipAccount),
      new Account(TIP_ACCOUNT_LAMPORTS, new Uint8Array(0), new Uint8Array(32), false, 0n),
    );
  }
  const bundles = createBundlePool({ maxPending: Math.max(1, Math.floor(options.maxQueue / 5)) });
  const blockListeners = new Set<(block: Block) => void>();
  const touchListeners = new Set<(touched: TouchedAccounts) => void>();
  let frozen = false;
  let expiredTotal = 0;
  const faucet = await createFaucet(svm, { seed: options.keys?.faucet, lamports: options.faucetLamports });
  const cluster = createCluster(svm, epochSchedule, options.startSlot, genesis.block.blockhash, options.keys);
  const addressSignatures = createAddressSignatures(options.historyLimit);

  const genesisSlot = options.startSlot;
  for (const recorded of options.recordedBlocks ?? []) {
    if (recorded.slot >= genesisSlot)
      throw new RangeError(`recorded block ${recorded.slot} is not below the start slot ${genesisSlot}`);
    blocks.add(recorded);
    addressSignatures.addBlock(
      recorded.slot,
      recorded.transactions.map((record) => ({
        signature: record.signature,
        index: record.index,
        keys: record.keys.keys,
      })),
    );
  }
  blocks.add(genesis.block);
  window.add(genesis.block.blockhash, 0n);
  let tip = genesis.block;

  const notifyTouched = (touched: TouchedAccounts) => {
    for (const listener of touchListeners) listener(touched);
  };

  const slotAt = (commitment: Commitment): bigint => {
    const depth =
      commitment === "processed"
        ? 0n
        : BigInt(commitment === "confirmed" ? options.confirmSlots : options.finalizeSlots);
    const slot = tip.slot - depth;
    return slot < genesisSlot ? genesisSlot : slot;
  };

  const readForLookup = (address: string) => {
    const account = executor.readAccount(address);
    return account === null ? null : { owner: account.owner, data: account.data };
  };

  const accountKeys = (tx: DecodedTransaction): AccountKeys =>
    tx.message.lookups.length === 0
      ? staticAccountKeys(tx.message)
      : resolveAccountKeys(tx.message, readForLookup, tip.slot);

  /**
   * The nonce account `tx` advances in the bank whose last blockhash is `blockhash`, or null (no valid
   * nonce transaction). `strict`: the leader's exact-size check, which simulations skip.
   */
  const readNonceAccount = (address: string, key: Uint8Array) => executor.readAccount(address, key);
  const nonceOf = (tx: DecodedTransaction, blockhash: string, strict: boolean): NonceUse | null =>
    nonceToAdvance(tx, readNonceAccount, nextDurableNonceAfter(blockhash), strict);

  const heightOfSlot = (slot: bigint): bigint => blocks.get(slot)?.blockHeight ?? tip.blockHeight - (tip.slot - slot);

  const isLifetimeValid = (tx: DecodedTransaction, slot: bigint, maxAge = MAX_PROCESSING_AGE): boolean => {
    const produced = window.heightOf(tx.message.recentBlockhash);
    const height = heightOfSlot(slot);
    if (produced !== undefined && produced <= height && height <= produced + maxAge) return true;
    return nonceOf(tx, blocks.get(slot)?.blockhash ?? tip.blockhash, false) !== null;
  };

  // agave's slot-time features activate at genesis and take effect at the next epoch (slot_params.rs).
  const reducedFrom = firstSlotInEpoch(epochSchedule, epochOfSlot(epochSchedule, genesisSlot).epoch + 1n);
  const genesisLimits = {
    block: options.blockCostLimit,
    account: options.accountCostLimit,
    dataSize: DEFAULT_DATA_SIZE_LIMIT,
  };
  const reducedSlotMs = options.reducedSlotMs ?? DEFAULT_REDUCED_SLOT_MS;
  const limitsAt = (slot: bigint): BlockLimits => limitsAtSlot(genesisLimits, reducedSlotMs, reducedFrom, slot);

  const producerDeps: BlockProducerDeps = {
    svm,
    executor,
    window,
    history,
    blocks,
    queue,
    maxTransactionsPerBlock: options.maxTransactionsPerBlock,
    limitsAt,
    setClock: genesis.setClock,
    accountKeys,
    // While a block is produced, `tip` is still its parent, whose blockhash is the bank's last.
    nonceOf: (tx) => nonceOf(tx, tip.blockhash, true),
    onTouched: (addresses, keys, slot) => notifyTouched({ addresses, keys, slot }),
    bundles,
  };

  const produceBlock = (): Block | null => {
    if (frozen) return null;
    const block = produceBlockAfter(tip, producerDeps);
    tip = block;
    expiredTotal += block.packing?.expired ?? 0;
    addressSignatures.addBlock(
      block.slot,
      block.transactions.map((record) => ({
        signature: record.signature,
        index: record.index,
        keys: record.keys.keys,
      })),
    );
    const written = cluster.afterBlock(block.slot, block.blockTime, block.blockhash);
    notifyTouched({ addresses: written, keys: written.map((address) => bs58.decode(address)), slot: block.slot });
    for (const listener of blockListeners) {
      try {
        listener(block);
      } catch {
        // A failing subscriber must not stop block production.
      }
    }
    return block;
  };

  const lastBlockPacking = (): ChainStatus["lastBlock"] => {
    let busiestAccount: { address: string; cost: bigint } | null = null;
    for (const [address, cost] of tip.packing?.accountCost ?? []) {
      if (busiestAccount === null || cost > busiestAccount.cost) busiestAccount = { address, cost };
    }
    const limits = limitsAt(tip.slot);
    return {
      slot: tip.slot,
      transactions: tip.transactions.length,
      cost: tip.packing?.cost ?? 0n,
      blockCostLimit: limits.block,
      busiestAccount,
      accountCostLimit: limits.account,
      waiting: tip.packing?.waiting ?? 0,
      expired: tip.packing?.expired ?? 0,
    };
  };

  const clock = createSlotClock({ slotMs: options.slotMs, onTick: () => void produceBlock() });

  const submit = (tx: DecodedTransaction, verified = false) => queue.submit(tx, verified);

  const airdrop = async (address: string, lamports: bigint): Promise<string> => {
    const wire = await faucet.transfer(address, lamports, tip.blockhash);
    const tx = decodeTransaction(wire); // throws -32602 for a recipient that collides with a fixed key
    submit(tx);
    return tx.signatureStrings[0]!;
  };

  return {
    svm: genesis.wrapper,
    native: svm,
    executor,
    programs,
    genesisSlot,
    faucet: faucet.address,
    cluster,
    addressSignatures,
    epochSchedule,
    slotAt,
    block: (slot) => blocks.get(slot),
    firstAvailableBlock: () => blocks.firstAvailable(),
    blockSlots: (from, to) => blocks.slotsBetween(from, to),
    isLifetimeValid,
    holdsNonce: (message) => heldNonce(message, readNonceAccount, false) !== null,
    blockHeightAt: heightOfSlot,
    lastValidBlockHeight: (blockhash) => window.lastValidBlockHeight(blockhash),
    signatureStatus: (signature) => history.get(signature),
    transaction(signature) {
      const entry = history.get(signature);
      return entry === undefined ? undefined : blocks.get(entry.slot)?.transactions[entry.index];
    },
    isPending: (signature) => queue.isPending(signature),
    accountKeys,
    submit,
    bundles,
    submitBundle(txs) {
      const id = bundleId(txs.map((tx) => tx.signatureStrings[0]!));
      return bundles.submit(priceBundle(id, txs, price)) ? id : null;
    },
    // A blockhash the window does not know may be a nonce; its age is the caller's to check.
    simulate: (tx, keys, sigVerify) =>
      executor.simulate(
        tx,
        keys,
        sigVerify,
        window.heightOf(tx.message.recentBlockhash) === undefined ? nonceOf(tx, tip.blockhash, false) : null,
      ),
    check: (tx, sigVerify) => executor.check(tx, sigVerify),
    airdrop,
    setAccount(address, account) {
      const key = bs58.decode(address);
      if (key.length !== 32) throw new RangeError("address must be 32 bytes");
      const owner = bs58.decode(account.owner);
      if (owner.length !== 32) throw new RangeError("owner must be 32 bytes");
      svm.setAccount(
        key,
        new Account(account.lamports, account.data, owner, account.executable ?? false, account.rentEpoch ?? 0n),
      );
      notifyTouched({ addresses: [address], keys: [key], slot: tip.slot });
    },
    produceBlock,
    get frozen() {
      return frozen;
    },
    set frozen(value: boolean) {
      frozen = value;
    },
    status: () => ({
      processedSlot: slotAt("processed"),
      confirmedSlot: slotAt("confirmed"),
      finalizedSlot: slotAt("finalized"),
      blockHeight: tip.blockHeight,
      queued: queue.length,
      evicted: queue.stats.evicted,
      expired: expiredTotal,
      lastBlock: lastBlockPacking(),
      transactionCount: tip.transactionCount,
      signaturesRemembered: history.size,
      blocksHeld: blocks.size,
      frozen,
    }),
    onBlock(listener) {
      blockListeners.add(listener);
      return () => blockListeners.delete(listener);
    },
    onAccountsTouched(listener) {
      touchListeners.add(listener);
      return () => touchListeners.delete(listener);
    },
    start: () => clock.start(),
    stop: () => clock.stop(),
  };
}
