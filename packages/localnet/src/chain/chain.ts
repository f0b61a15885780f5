/**
 * The chain around one LiteSVM instance: a slot clock producing a block per slot, a new blockhash
 * per block, a 151-block blockhash window, a transaction queue executed at the next slot,
 * signature history with de-duplication, commitment levels, a faucet, and recent blocks.
 *
 * LiteSVM only knows "now": it has no blocks, accepts only its latest blockhash (its check is off
 * here) and remembers 32 signatures (history is off here). Everything time-shaped is this file's.
 */
import bs58 from "bs58";
import { LiteSVM } from "litesvm";
import { Account, Clock, type LiteSvm } from "litesvm/dist/internal.js";
import { generateKeyPair, getAddressFromPublicKey, signBytes } from "@solana/kit";
import type { Commitment } from "../rpc/protocol.ts";
import { decodeTransaction, type DecodedTransaction } from "../wire/decode-transaction.ts";
import { resolveAccountKeys, staticAccountKeys, type AccountKeys } from "../wire/account-keys.ts";
import { computeBudgetOf } from "../wire/fees.ts";
import type { TransactionErrorJson } from "../wire/transaction-error.ts";
import { createBlockhashWindow, MAX_PROCESSING_AGE } from "./blockhash-window.ts";
import { createBlockStore, type Block, type TransactionRecord } from "./block-store.ts";
import { epochOfSlot, type EpochScheduleParams } from "./epoch-schedule.ts";
import { createExecutor, type ExecutionOutcome, type Executor } from "./executor.ts";
import { createSignatureHistory, type SignatureEntry } from "./signature-history.ts";
import { createSlotClock } from "./slot-clock.ts";

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
  /** Pending transactions beyond this are dropped, as an overloaded leader would. */
  maxQueue: number;
  /** Transactions executed per block at most; the rest wait for the next slot. */
  maxTransactionsPerBlock: number;
  /** Slot of the genesis block (recorded mainnet blocks can be loaded below a high start). */
  startSlot: bigint;
  /** Recorded blocks (recorded-blocks.ts), all below `startSlot`, in slot order: held as the oldest blocks. */
  recordedBlocks?: readonly Block[];
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
  readonly genesisSlot: bigint;
  /** Address of the faucet that funds requestAirdrop. */
  readonly faucet: string;
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

const SYSTEM_PROGRAM = "11111111111111111111111111111111";
const FAUCET_LAMPORTS = 1_000_000_000_000_000_000n; // a billion SOL, far beyond any test's needs
const STATUS_CACHE_SLOTS = 300n;

/** Creates the chain with its genesis block; call `start()` to run the slot clock. */
export async function createChain(options: ChainOptions): Promise<Chain> {
  const wrapper = new LiteSVM();
  const svm = (wrapper as unknown as { inner: LiteSvm }).inner;
  svm.setBlockhashCheck(false);
  svm.setTransactionHistory(0n);
  svm.setSigverify(true);
  // A validator's genesis has the wrapped-SOL mints; LiteSVM adds them only when asked.
  svm.withNativeMints();
  const executor = createExecutor(svm);
  const es = svm.getEpochSchedule();
  const epochSchedule: EpochScheduleParams = {
    slotsPerEpoch: es.slotsPerEpoch,
    warmup: es.warmup,
    firstNormalEpoch: es.firstNormalEpoch,
    firstNormalSlot: es.firstNormalSlot,
  };
  const window = createBlockhashWindow();
  const history = createSignatureHistory({ limit: options.historyLimit, protectSlots: STATUS_CACHE_SLOTS });
  const blocks = createBlockStore({ retention: options.blockRetention });
  const queue: { tx: DecodedTransaction; verified: boolean }[] = [];
  /** Signature -> whether a queued copy has verified signatures. */
  const pending = new Map<string, boolean>();
  const blockListeners = new Set<(block: Block) => void>();
  const touchListeners = new Set<(touched: TouchedAccounts) => void>();
  let transactionCount = 0n;
  let frozen = false;

  const faucetKeys = await generateKeyPair();
  const faucet = await getAddressFromPublicKey(faucetKeys.publicKey);
  const faucetBytes = bs58.decode(faucet);
  svm.setAccount(faucetBytes, new Account(FAUCET_LAMPORTS, new Uint8Array(0), bs58.decode(SYSTEM_PROGRAM), false, 0n));

  const setClock = (slot: bigint) => {
    const { epoch } = epochOfSlot(epochSchedule, slot);
    svm.setClock(new Clock(slot, 0n, epoch, epoch + 1n, BigInt(Math.floor(Date.now() / 1000))));
  };

  const genesisSlot = options.startSlot;
  setClock(genesisSlot);
  const genesis: Block = {
    slot: genesisSlot,
    parentSlot: genesisSlot === 0n ? 0n : genesisSlot - 1n,
    blockHeight: 0n,
    blockhash: svm.latestBlockhash(),
    previousBlockhash: "11111111111111111111111111111111",
    blockTime: Math.floor(Date.now() / 1000),
    transactions: [],
    transactionCount: 0n,
    minUnitPrice: null,
    accountMinUnitPrice: new Map(),
  };
  for (const recorded of options.recordedBlocks ?? []) {
    if (recorded.slot >= genesisSlot) throw new RangeError(`recorded block ${recorded.slot} is not below the start slot ${genesisSlot}`);
    blocks.add(recorded);
  }
  blocks.add(genesis);
  window.add(genesis.blockhash, 0n);
  let tip = genesis;

  const notifyTouched = (touched: TouchedAccounts) => {
    for (const listener of touchListeners) listener(touched);
  };

  const slotAt = (commitment: Commitment): bigint => {
    const depth = commitment === "processed" ? 0n : BigInt(commitment === "confirmed" ? options.confirmSlots : options.finalizeSlots);
    const slot = tip.slot - depth;
    return slot < genesisSlot ? genesisSlot : slot;
  };

  const readForLookup = (address: string) => {
    const account = executor.readAccount(address);
    return account === null ? null : { owner: account.owner, data: account.data };
  };

  const accountKeys = (tx: DecodedTransaction): AccountKeys =>
    tx.message.lookups.length === 0 ? staticAccountKeys(tx.message) : resolveAccountKeys(tx.message, readForLookup, tip.slot);

  /** Durable nonce: first instruction AdvanceNonceAccount and the nonce account holds this blockhash. */
  const isNonceValid = (tx: DecodedTransaction): boolean => {
    const ix = tx.message.instructions[0];
    if (!ix || tx.message.staticKeys[ix.programIdIndex] !== SYSTEM_PROGRAM) return false;
    if (ix.data.length < 4 || ix.data[0] !== 4 || ix.data[1] !== 0 || ix.data[2] !== 0 || ix.data[3] !== 0) return false;
    const nonceIndex = ix.accounts[0];
    if (nonceIndex === undefined || nonceIndex >= tx.message.staticKeys.length) return false;
    const account = executor.readAccount(tx.message.staticKeys[nonceIndex]!);
    if (account === null || account.owner !== SYSTEM_PROGRAM || account.data.length < 80 || account.data[4] !== 1) return false;
    return bs58.encode(account.data.subarray(40, 72)) === tx.message.recentBlockhash;
  };

  const heightOfSlot = (slot: bigint): bigint => blocks.get(slot)?.blockHeight ?? tip.blockHeight - (tip.slot - slot);

  const isLifetimeValid = (tx: DecodedTransaction, slot: bigint, maxAge = MAX_PROCESSING_AGE): boolean => {
    const produced = window.heightOf(tx.message.recentBlockhash);
    const height = heightOfSlot(slot);
    return (produced !== undefined && produced <= height && height <= produced + maxAge) || isNonceValid(tx);
  };

  const produceBlock = (): Block | null => {
    if (frozen) return null;
    const slot = tip.slot + 1n;
    const blockHeight = tip.blockHeight + 1n;
    setClock(slot);
    const batch = queue.splice(0, options.maxTransactionsPerBlock);
    const records: TransactionRecord[] = [];
    let minUnitPrice: bigint | null = null;
    const accountMinUnitPrice = new Map<string, bigint>();
    for (const { tx, verified } of batch) {
      const signature = tx.signatureStrings[0]!;
      pending.delete(signature);
      if (history.has(signature)) continue;
      // The block at `slot` checks against blockhashes up to its parent's.
      if (!window.isValidAt(tx.message.recentBlockhash, blockHeight) && !isNonceValid(tx)) continue;
      let keys: AccountKeys;
      try {
        keys = accountKeys(tx);
      } catch {
        continue; // lookup tables changed since submission: a leader would drop it too
      }
      const outcome = executor.execute(tx, keys, !verified);
      if (!outcome.committed) continue;
      const unitPrice = computeBudgetOf(tx.message).unitPrice;
      const record: TransactionRecord = { signature, slot, index: records.length, tx, keys, outcome, unitPrice };
      records.push(record);
      history.add(signature, { slot, index: record.index, err: outcome.err });
      if (minUnitPrice === null || unitPrice < minUnitPrice) minUnitPrice = unitPrice;
      keys.keys.forEach((key, i) => {
        if (!keys.writable[i]) return;
        const current = accountMinUnitPrice.get(key);
        if (current === undefined || unitPrice < current) accountMinUnitPrice.set(key, unitPrice);
      });
      notifyTouched({ addresses: keys.keys, keys: keys.keyBytes, slot });
    }
    transactionCount += BigInt(records.length);
    svm.expireBlockhash();
    const block: Block = {
      slot,
      parentSlot: tip.slot,
      blockHeight,
      blockhash: svm.latestBlockhash(),
      previousBlockhash: tip.blockhash,
      blockTime: Math.floor(Date.now() / 1000),
      transactions: records,
      transactionCount,
      minUnitPrice,
      accountMinUnitPrice,
    };
    blocks.add(block);
    window.add(block.blockhash, blockHeight);
    window.prune(blockHeight);
    history.prune(slot);
    tip = block;
    for (const listener of blockListeners) {
      try {
        listener(block);
      } catch {
        // A failing subscriber must not stop block production.
      }
    }
    return block;
  };

  const clock = createSlotClock({ slotMs: options.slotMs, onTick: () => void produceBlock() });

  const submit = (tx: DecodedTransaction, verified = false) => {
    const signature = tx.signatureStrings[0]!;
    if (history.has(signature) || queue.length >= options.maxQueue) return;
    // A queued copy shadows a duplicate, unless it is unverified and this one is verified: a
    // forged copy (same first signature, other bytes) must not keep the genuine one out.
    const queued = pending.get(signature);
    if (queued === true || (queued === false && !verified)) return;
    pending.set(signature, verified);
    queue.push({ tx, verified });
  };

  const airdrop = async (address: string, lamports: bigint): Promise<string> => {
    const recipient = bs58.decode(address);
    const message = new Uint8Array(3 + 1 + 32 * 3 + 32 + 1 + 1 + 1 + 2 + 1 + 12);
    let o = 0;
    message.set([1, 0, 1, 3], o);
    o += 4;
    for (const key of [faucetBytes, recipient, bs58.decode(SYSTEM_PROGRAM)]) {
      message.set(key, o);
      o += 32;
    }
    message.set(bs58.decode(tip.blockhash), o);
    o += 32;
    message.set([1, 2, 2, 0, 1, 12, 2, 0, 0, 0], o);
    o += 10;
    new DataView(message.buffer).setBigUint64(o, lamports, true);
    const signature = new Uint8Array(await signBytes(faucetKeys.privateKey, message));
    const wire = new Uint8Array(1 + 64 + message.length);
    wire[0] = 1;
    wire.set(signature, 1);
    wire.set(message, 65);
    const tx = decodeTransaction(wire); // throws -32602 for a recipient that collides with a fixed key
    submit(tx);
    return tx.signatureStrings[0]!;
  };

  return {
    svm: wrapper,
    native: svm,
    executor,
    genesisSlot,
    faucet,
    epochSchedule,
    slotAt,
    block: (slot) => blocks.get(slot),
    firstAvailableBlock: () => blocks.firstAvailable(),
    blockSlots: (from, to) => blocks.slotsBetween(from, to),
    isLifetimeValid,
    blockHeightAt: heightOfSlot,
    lastValidBlockHeight: (blockhash) => window.lastValidBlockHeight(blockhash),
    signatureStatus: (signature) => history.get(signature),
    transaction(signature) {
      const entry = history.get(signature);
      return entry === undefined ? undefined : blocks.get(entry.slot)?.transactions[entry.index];
    },
    isPending: (signature) => pending.has(signature),
    accountKeys,
    submit,
    simulate: (tx, keys, sigVerify) => executor.simulate(tx, keys, sigVerify),
    check: (tx, sigVerify) => executor.check(tx, sigVerify),
    airdrop,
    setAccount(address, account) {
      const key = bs58.decode(address);
      if (key.length !== 32) throw new RangeError("address must be 32 bytes");
      const owner = bs58.decode(account.owner);
      if (owner.length !== 32) throw new RangeError("owner must be 32 bytes");
      svm.setAccount(key, new Account(account.lamports, account.data, owner, account.executable ?? false, account.rentEpoch ?? 0n));
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
      transactionCount,
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
