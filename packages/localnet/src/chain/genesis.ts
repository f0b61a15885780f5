/**
 * A LiteSVM set up as a chain's genesis: its own blockhash and history checks off (the chain keeps a
 * 151-block window and a signature history itself), signature checks on, the wrapped-SOL mints a
 * validator's genesis has, the clock sysvar at the start slot, and the genesis block.
 */
import { LiteSVM } from "litesvm";
import bs58 from "bs58";
import { Account, Clock, EpochSchedule } from "litesvm";
import { nativeSvm, type LiteSvm } from "./litesvm-native.ts";
import { NATIVE_MINT, TOKEN_PROGRAM } from "../accounts/program-ids.ts";
import { GENESIS_FEATURE_IDS } from "../cluster/feature-ids.ts";
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

const FEATURE_PROGRAM = bs58.decode("Feature111111111111111111111111111111111111");
const U64_MAX = 0xffff_ffff_ffff_ffffn;

/** spl-token's `native_mint::ACCOUNT_DATA`: no mint authority, supply 0, 9 decimals, initialized, no freeze authority. */
function nativeMintData(): Uint8Array {
  const data = new Uint8Array(82);
  data[44] = 9;
  data[45] = 1;
  return data;
}

/** agave's `DEFAULT_SLOTS_PER_EPOCH` (and `DEFAULT_LEADER_SCHEDULE_SLOT_OFFSET`): two days of 400 ms slots. */
export const DEFAULT_SLOTS_PER_EPOCH = 432_000n;

/**
 * Creates the LiteSVM and the genesis block at `startSlot`. The epoch schedule is solana-test-validator's:
 * `EpochSchedule::without_warmup()` (432,000 slots from epoch 0), or with `slotsPerEpoch`
 * (`--slots-per-epoch`) `EpochSchedule::custom(n, n, false)`; LiteSVM's own default warms up.
 */
export function createGenesis(startSlot: bigint, slotsPerEpoch = DEFAULT_SLOTS_PER_EPOCH): Genesis {
  const wrapper = new LiteSVM();
  const svm = nativeSvm(wrapper);
  svm.setBlockhashCheck(false);
  svm.setTransactionHistory(0n);
  svm.setSigverify(true);
  // solana-test-validator's genesis has SPL Token's native mint (and no Token-2022 one, which
  // LiteSVM's withNativeMints would add): 1 SOL, rent epoch 1, spl-token's `native_mint::ACCOUNT_DATA`.
  svm.setAccount(
    bs58.decode(NATIVE_MINT),
    new Account(1_000_000_000n, nativeMintData(), bs58.decode(TOKEN_PROGRAM), false, 1n),
  );
  // And a feature account for every feature it activates (runtime genesis_utils' activate_feature):
  // `Feature { activated_at: Some(0) }`, rent-exempt, owned by the Feature program.
  const featureData = new Uint8Array(9);
  featureData[0] = 1;
  const featureLamports = svm.minimumBalanceForRentExemption(BigInt(featureData.length));
  for (const id of GENESIS_FEATURE_IDS) {
    svm.setAccount(bs58.decode(id), new Account(featureLamports, featureData, FEATURE_PROGRAM, false, U64_MAX));
  }
  svm.setEpochSchedule(new EpochSchedule(slotsPerEpoch, slotsPerEpoch, false, 0n, 0n));
  const es = svm.getEpochSchedule();
  const epochSchedule: EpochScheduleParams = {
    slotsPerEpoch: es.slotsPerEpoch,
    leaderScheduleSlotOffset: es.leaderScheduleSlotOffset,
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
