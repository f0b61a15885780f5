/**
 * Epoch arithmetic of agave's `EpochSchedule`, warmup included (epochs of 32, 64, 128, ... slots
 * until `firstNormalSlot`), though the localnet's schedule, as solana-test-validator's, has none.
 */

/** The fields of an epoch schedule this module needs. */
export interface EpochScheduleParams {
  slotsPerEpoch: bigint;
  leaderScheduleSlotOffset: bigint;
  warmup: boolean;
  firstNormalEpoch: bigint;
  firstNormalSlot: bigint;
}

const MINIMUM_SLOTS_PER_EPOCH = 32n;
const MINIMUM_SLOTS_LOG2 = 5n;

function nextPowerOfTwoLog2(n: bigint): bigint {
  let log = 0n;
  while (1n << log < n) log++;
  return log;
}

/** Epoch and index within it of a slot. */
export function epochOfSlot(schedule: EpochScheduleParams, slot: bigint): { epoch: bigint; slotIndex: bigint } {
  if (schedule.warmup && slot < schedule.firstNormalSlot) {
    const epoch = nextPowerOfTwoLog2(slot + MINIMUM_SLOTS_PER_EPOCH + 1n) - MINIMUM_SLOTS_LOG2 - 1n;
    const epochLength = 1n << (epoch + MINIMUM_SLOTS_LOG2);
    return { epoch, slotIndex: slot - (epochLength - MINIMUM_SLOTS_PER_EPOCH) };
  }
  const normalIndex = slot - (schedule.warmup ? schedule.firstNormalSlot : 0n);
  const epoch = (schedule.warmup ? schedule.firstNormalEpoch : 0n) + normalIndex / schedule.slotsPerEpoch;
  return { epoch, slotIndex: normalIndex % schedule.slotsPerEpoch };
}

/** Number of slots in an epoch. */
export function slotsInEpoch(schedule: EpochScheduleParams, epoch: bigint): bigint {
  if (schedule.warmup && epoch < schedule.firstNormalEpoch) return 1n << (epoch + MINIMUM_SLOTS_LOG2);
  return schedule.slotsPerEpoch;
}

/** First slot of an epoch. */
export function firstSlotInEpoch(schedule: EpochScheduleParams, epoch: bigint): bigint {
  if (schedule.warmup && epoch <= schedule.firstNormalEpoch) return ((1n << epoch) - 1n) * MINIMUM_SLOTS_PER_EPOCH;
  const base = schedule.warmup ? schedule.firstNormalSlot : 0n;
  const epochs = epoch - (schedule.warmup ? schedule.firstNormalEpoch : 0n);
  return base + epochs * schedule.slotsPerEpoch;
}
