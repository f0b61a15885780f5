/**
 * A delegated stake account's data in agave's layout: bincode `StakeStateV2::Stake(Meta, Stake,
 * StakeFlags)` in a 200-byte account (`StakeStateV2::size_of()`), as the Stake program writes it.
 */

/** Bytes of a stake account. */
export const STAKE_STATE_SIZE = 200;
/** agave's deprecated `warmup_cooldown_rate` still stored in every delegation. */
export const DEFAULT_WARMUP_COOLDOWN_RATE = 0.25;

/** A delegated stake (no lockup). */
export interface DelegatedStake {
  rentExemptReserve: bigint;
  staker: Uint8Array;
  withdrawer: Uint8Array;
  voter: Uint8Array;
  stake: bigint;
  activationEpoch: bigint;
  deactivationEpoch: bigint;
  creditsObserved: bigint;
}

/** Serialises a delegated stake account. */
export function encodeDelegatedStake(s: DelegatedStake): Uint8Array {
  const out = new Uint8Array(STAKE_STATE_SIZE);
  const view = new DataView(out.buffer);
  view.setUint32(0, 2, true); // StakeStateV2::Stake
  view.setBigUint64(4, s.rentExemptReserve, true);
  out.set(s.staker, 12);
  out.set(s.withdrawer, 44);
  // Lockup: unix_timestamp (i64) 0, epoch 0, custodian default: bytes 76..124 stay zero.
  out.set(s.voter, 124);
  view.setBigUint64(156, s.stake, true);
  view.setBigUint64(164, s.activationEpoch, true);
  view.setBigUint64(172, s.deactivationEpoch, true);
  view.setFloat64(180, DEFAULT_WARMUP_COOLDOWN_RATE, true);
  view.setBigUint64(188, s.creditsObserved, true);
  // StakeFlags (u8) at 196: empty.
  return out;
}
