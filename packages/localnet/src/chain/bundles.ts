/**
 * Jito bundles on the localnet: up to 5 transactions that land in order, in one block, all or nothing.
 *
 * A bundle is priced on arrival as the block producer prices transactions (cost-model.ts), as one unit:
 * its cost is the sum of its transactions' costs, its reward the lamports it transfers to the tip
 * accounts (top-level System transfers, as read from the message) plus its transactions' rewards, and
 * its priority reward x 1e6 / (cost + 1): the same scale as a transaction's, so both compete in one
 * order (block-producer.ts walks them together). A bundle that does not fit waits like a transaction;
 * one whose blockhash expired, or that was already processed, is dropped; one that fits runs on a
 * checkpoint of every account its transactions name, and the checkpoint is written back if any member
 * fails (its error, or a load error), so nothing of it lands.
 *
 * Statuses follow Jito's `getInflightBundleStatuses`: Pending while buffered, Landed with its slot,
 * Failed with the reason, and Invalid for an id the engine does not know (never received, dropped by
 * the path's fault, or older than the lookback).
 */
import { createHash } from "node:crypto";
import type { DecodedTransaction } from "../wire/decode-transaction.ts";
import type { TransactionErrorJson } from "../wire/transaction-error.ts";
import { transactionPriority, transactionReward } from "./cost-model.ts";

/** Jito's limit of transactions per bundle. */
export const MAX_BUNDLE_TRANSACTIONS = 5;
/** Jito's minimum tip (lamports) for a bundle to enter the auction. */
export const MIN_TIP_LAMPORTS = 1000n;
/** Bundles remembered after they end (Jito's lookback is 5 minutes; at 400 ms slots 750 slots). */
const STATUS_RETENTION = 20_000;

/**
 * Jito's mainnet tip accounts (as its block engine's `getTipAccounts` answers on mainnet), so a client
 * written for mainnet sees the same addresses here.
 */
export const TIP_ACCOUNTS: readonly string[] = [
  "96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5",
  "HFqU5x63VTqvQss8hp11i4wVV8bD44PvwucfZ2bU7gRe",
  "Cw8CFyM9FkoMi7K7Crf6HNQqf4uEMzpKw6QNghXLvLkY",
  "ADaUMid9yfUytqMBgopwjb2DTLSokTSzL1zt6iGPaS49",
  "DfXygSm4jCyNCybVYYK6DwvWqjKee8pbDmJGcLWNDXjh",
  "ADuUkR4vqLUMWXxW9gh6D6L8pMSawimctcNZ5pGwDcEt",
  "DttWaMuVvTiduZRnguLF7jNxTgiMBZ1hyAumKUiL2KRL",
  "3AVi9Tg9Uo68tJfuvoKvqKNWKkC5wPdSSdeBnizKZ6jT",
];
const TIP_SET: ReadonlySet<string> = new Set(TIP_ACCOUNTS);
const SYSTEM_PROGRAM = "11111111111111111111111111111111";

/**
 * The bundle id as Jito computes it (jito-solana `derive_bundle_id`): the SHA-256 of the transactions'
 * first signatures in base58, joined by commas, as lowercase hex.
 */
export function bundleId(firstSignatures: readonly string[]): string {
  return createHash("sha256").update(firstSignatures.join(",")).digest("hex");
}

/** Is this address one of the tip accounts? */
export const isTipAccount = (address: string): boolean => TIP_SET.has(address);

/**
 * Lamports a transaction transfers to tip accounts through top-level System Program transfers
 * (Transfer, index 2, and TransferWithSeed, index 11). Tips paid through CPI are not seen here (they
 * still count in the tip floor, which reads balances after execution).
 */
export function staticTip(tx: DecodedTransaction): bigint {
  const keys = tx.message.staticKeys;
  let tip = 0n;
  for (const ix of tx.message.instructions) {
    if (keys[ix.programIdIndex] !== SYSTEM_PROGRAM || ix.data.length < 12) continue;
    const view = new DataView(ix.data.buffer, ix.data.byteOffset, ix.data.byteLength);
    const kind = view.getUint32(0, true);
    const to = kind === 2 ? ix.accounts[1] : kind === 11 ? ix.accounts[2] : undefined;
    if (to === undefined || !isTipAccount(keys[to] ?? "")) continue;
    tip += view.getBigUint64(4, true);
  }
  return tip;
}

/** Does the transaction reach a tip account through an address lookup table? (Jito refuses that.) */
export function tipThroughLookupTable(loadedAddresses: readonly string[]): boolean {
  return loadedAddresses.some(isTipAccount);
}

/** A buffered bundle, priced as one unit. */
export interface PendingBundle {
  readonly id: string;
  readonly txs: readonly DecodedTransaction[];
  /** Lamports to tip accounts (static read). */
  readonly tip: bigint;
  /** Sum of the transactions' costs. */
  readonly cost: bigint;
  /** Each transaction's cost, in order. */
  readonly memberCosts: readonly bigint[];
  /** (tip + the transactions' rewards) x 1e6 / (cost + 1). */
  readonly priority: bigint;
  /** Per write-locked account, the cost the bundle puts on it. */
  readonly accountCost: ReadonlyMap<string, bigint>;
  /** Bytes of account data its transactions may allocate. */
  readonly allocated: bigint;
  readonly seq: number;
}

/** Jito's in-flight states. */
export type InflightStatus = "Invalid" | "Pending" | "Failed" | "Landed";

/** What the engine remembers of one bundle. */
export interface BundleRecord {
  id: string;
  signatures: string[];
  status: Exclude<InflightStatus, "Invalid">;
  /** Slot it landed in. */
  slot?: bigint;
  /** Why it failed: a member's error, "expired", "already processed", "lookup tables changed". */
  reason?: string;
  /** Index of the member that failed, when one did. */
  failedIndex?: number;
  /** Lamports the tip accounts gained, measured after execution (landed bundles). */
  landedTip?: bigint;
}

/** What a block did with one bundle. */
export type BundleDisposition =
  | { kind: "landed"; slot: bigint; landedTip: bigint }
  | { kind: "waiting" }
  | { kind: "failed"; reason: string; failedIndex?: number };

/** The engine's buffer and memory of bundles. */
export interface BundlePool {
  /** Buffers a priced bundle (a known id is ignored); returns false when the buffer is full. */
  submit(bundle: Omit<PendingBundle, "seq">): boolean;
  /** Buffered bundles, highest priority first (ties by arrival). */
  ordered(): PendingBundle[];
  /** Records what a block did with a buffered bundle (landed and failed ones leave the buffer). */
  settle(bundle: PendingBundle, disposition: BundleDisposition): void;
  get(id: string): BundleRecord | undefined;
  /** Tips (lamports) of bundles that landed in slots >= `sinceSlot`, oldest first. */
  landedTips(sinceSlot: bigint): { slot: bigint; tip: bigint }[];
  readonly pending: number;
}

/** Prices a bundle; `price` is the chain's per-transaction pricing (cost-model.ts). */
export function priceBundle(
  id: string,
  txs: readonly DecodedTransaction[],
  price: (tx: DecodedTransaction) => { cost: bigint; writable: readonly string[]; allocated: bigint },
): Omit<PendingBundle, "seq"> {
  let cost = 0n;
  let allocated = 0n;
  const memberCosts: bigint[] = [];
  let reward = 0n;
  let tip = 0n;
  const accountCost = new Map<string, bigint>();
  for (const tx of txs) {
    const priced = price(tx);
    cost += priced.cost;
    allocated += priced.allocated;
    memberCosts.push(priced.cost);
    reward += transactionReward(tx.message);
    tip += staticTip(tx);
    for (const key of priced.writable) accountCost.set(key, (accountCost.get(key) ?? 0n) + priced.cost);
  }
  return {
    id,
    txs,
    tip,
    cost,
    memberCosts,
    priority: transactionPriority(reward + tip, cost),
    accountCost,
    allocated,
  };
}

/** Creates the pool; `maxPending` bounds the buffer (the lowest priority is refused when full). */
export function createBundlePool(options: { maxPending: number }): BundlePool {
  let buffer: PendingBundle[] = [];
  const records = new Map<string, BundleRecord>();
  const landed: { slot: bigint; tip: bigint }[] = [];
  let seq = 0;

  const remember = (record: BundleRecord) => {
    records.delete(record.id);
    records.set(record.id, record);
    while (records.size > STATUS_RETENTION) records.delete(records.keys().next().value!);
  };

  return {
    submit(bundle) {
      const known = records.get(bundle.id);
      if (known !== undefined && known.status !== "Failed") return true;
      if (buffer.length >= options.maxPending) return false;
      const entry: PendingBundle = { ...bundle, seq: seq++ };
      // Sorted insertion: after every bundle of higher or equal priority (equal ones arrived earlier).
      let lo = 0;
      let hi = buffer.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (buffer[mid]!.priority >= entry.priority) lo = mid + 1;
        else hi = mid;
      }
      buffer.splice(lo, 0, entry);
      remember({ id: bundle.id, signatures: bundle.txs.map((tx) => tx.signatureStrings[0]!), status: "Pending" });
      return true;
    },
    ordered: () => [...buffer],
    settle(bundle, disposition) {
      if (disposition.kind === "waiting") return;
      buffer = buffer.filter((b) => b !== bundle);
      const record = records.get(bundle.id) ?? {
        id: bundle.id,
        signatures: bundle.txs.map((tx) => tx.signatureStrings[0]!),
        status: "Pending",
      };
      if (disposition.kind === "landed") {
        record.status = "Landed";
        record.slot = disposition.slot;
        record.landedTip = disposition.landedTip;
        landed.push({ slot: disposition.slot, tip: disposition.landedTip });
        if (landed.length > STATUS_RETENTION) landed.shift();
      } else {
        record.status = "Failed";
        record.reason = disposition.reason;
        if (disposition.failedIndex !== undefined) record.failedIndex = disposition.failedIndex;
      }
      remember(record);
    },
    get: (id) => records.get(id),
    landedTips: (sinceSlot) => landed.filter((entry) => entry.slot >= sinceSlot),
    get pending() {
      return buffer.length;
    },
  };
}

/** A short text for a member's error (Failed reasons). */
export function memberErrorText(index: number, err: TransactionErrorJson | null, committed: boolean): string {
  const what = err === null ? "not committed" : typeof err === "string" ? err : JSON.stringify(err);
  return `transaction ${index} failed: ${what}${committed ? "" : " (not committed)"}`;
}
