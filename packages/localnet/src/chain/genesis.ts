/**
 * A LiteSVM set up as a chain's genesis: its own blockhash and history checks off (the chain keeps a
 * 151-block window and a signature history itself), signature checks on, the wrapped-SOL mints a
 * validator's genesis has, the clock sysvar at the start slot, and the genesis block.
 */
import { LiteSVM } from "litesvm";
import { Clock, EpochSchedule, type LiteSvm } from "litesvm/dist/internal.js";
import type { Block } from "./block-store.ts";
import { epochOfSlot, type EpochScheduleParams } from "./epoch-schedule.ts";

/** The configured LiteSVM and the chain's first block. */
export interface Genesis {
  /** The LiteSVM wrapper (what the account index and seeding code take). */
  readonly wrapper: LiteSVM;
  /** Its native binding, which the chain drives directly (the wrapper re-encodes every key through kit). */
  readonly svm: LiteSvm;
  readonly epochSchedule: EpochScheduleParams;
  /** Moves the clock sysvar to `slot` (epoch from the schedule, Unix time now). */
  setClock(slot: bigint): void;
  /** The genesis block, at `startSlot`, height 0, no transactions. */
  readonly block: Block;
}

/**
 * Creates the LiteSVM and the genesis block at `startSlot`. `slotsPerEpoch` (solana-test-validator's
 * `--slots-per-epoch`) sets a schedule without warm-up, as agave's `EpochSchedule::custom(n, n, false)`.
 */
export function createGenesis(startSlot: bigint, slotsPerEpoch?: bigint): Genesis {
  const wrapper = new LiteSVM();
  const svm = (wrapper as unknown as { inner: LiteSvm }).inner;
  svm.setBlockhashCheck(false);
  svm.setTransactionHistory(0n);
  svm.setSigverify(true);
  // A validator's genesis has the wrapped-SOL mints; LiteSVM adds them only when asked.
  svm.withNativeMints();
  if (slotsPerEpoch !== undefined) svm.setEpochSchedule(new EpochSchedule(slotsPerEpoch, slotsPerEpoch, false, 0n, 0n));
  const es = svm.getEpochSchedule();
  const epochSchedule: EpochScheduleParams = {
    slotsPerEpoch: es.slotsPerEpoch,
    warmup: es.warmup,
    firstNormalEpoch: es.firstNormalEpoch,
    firstNormalSlot: es.firstNormalSlot,
  };
  // agave's epoch_start_timestamp: the clock's time at the epoch's first block.
  let epochStart = { epoch: -1n, timestamp: 0n };
  const setClock = (slot: bigint) => {
    const { epoch } = epochOfSlot(epochSchedule, slot);
    const now = BigInt(Math.floor(Date.now() / 1000));
    if (epoch !== epochStart.epoch) epochStart = { epoch, timestamp: now };
    svm.setClock(new Clock(slot, epochStart.timestamp, epoch, epoch + 1n, now));
  };
  setClock(startSlot);
  const block: Block = {
    slot: startSlot,
    parentSlot: startSlot === 0n ? 0n : startSlot - 1n,
    blockHeight: 0n,
    blockhash: svm.latestBlockhash(),
    previousBlockhash: "11111111111111111111111111111111",
    blockTime: Math.floor(Date.now() / 1000),
    transactions: [],
    transactionCount: 0n,
    minUnitPrice: null,
    accountMinUnitPrice: new Map(),
  };
  return { wrapper, svm, epochSchedule, setClock, block };
}
