/**
 * The vote account's data in agave 4.4's layout: bincode `VoteStateVersions::V4` (tag 3, vote state
 * v4 of SIMD-0185) padded to `VoteStateV4::size_of()` = 3762 bytes (the v3 size, so accounts need no
 * resize), the layout agave 4.4's genesis (`create_v4_account_with_authorized`) and vote program
 * write and its account-decoder (`parse_vote`) reads. Against v3: the u8 commission gives way to the
 * inflation-rewards and block-revenue collectors and commissions in basis points, the pending
 * delegator rewards and an optional compressed BLS public key; the prior-voters buffer is gone.
 */

/** Bytes of a vote account (agave's `VoteStateV4::size_of()`, equal to v3's). */
export const VOTE_STATE_SIZE = 3762;
/** agave's MAX_LOCKOUT_HISTORY: votes in the tower before the oldest becomes the root. */
export const MAX_LOCKOUT_HISTORY = 31;
/** Bytes of a compressed BLS12-381 G1 public key. */
export const BLS_PUBLIC_KEY_COMPRESSED_SIZE = 48;
/** `VoteStateVersions::V4`'s bincode tag. */
const V4_TAG = 3;

/** One landed vote of the tower. */
export interface Lockout {
  slot: bigint;
  confirmationCount: number;
  latency: number;
}

/** `(epoch, credits, previousCredits)`. */
export interface EpochCredits {
  epoch: bigint;
  credits: bigint;
  previousCredits: bigint;
}

/** The fields of a v4 vote state. */
export interface VoteState {
  nodePubkey: Uint8Array;
  authorizedWithdrawer: Uint8Array;
  /** Receives the inflation rewards' commission (agave's default: the vote account itself). */
  inflationRewardsCollector: Uint8Array;
  /** Receives the block revenue's commission (agave's default: the node identity). */
  blockRevenueCollector: Uint8Array;
  /** Commission on inflation rewards, basis points (0..10,000). */
  inflationRewardsCommissionBps: number;
  /** Commission on block revenue, basis points (agave's default: 10,000). */
  blockRevenueCommissionBps: number;
  pendingDelegatorRewards: bigint;
  /** The compressed BLS public key (48 bytes), or null. */
  blsPubkeyCompressed: Uint8Array | null;
  votes: readonly Lockout[];
  rootSlot: bigint | null;
  /** `(epoch, authorized voter)`, ascending. */
  authorizedVoters: Array<{ epoch: bigint; voter: Uint8Array }>;
  epochCredits: readonly EpochCredits[];
  lastTimestamp: { slot: bigint; timestamp: bigint };
}

/** Serialises a vote state (throws when it does not fit, which the tower bound prevents). */
export function encodeVoteState(state: VoteState): Uint8Array {
  const out = new Uint8Array(VOTE_STATE_SIZE);
  const view = new DataView(out.buffer);
  let at = 0;
  const u8 = (v: number) => {
    out[at] = v;
    at += 1;
  };
  const u16 = (v: number) => {
    view.setUint16(at, v, true);
    at += 2;
  };
  const u32 = (v: number) => {
    view.setUint32(at, v, true);
    at += 4;
  };
  const u64 = (v: bigint) => {
    view.setBigUint64(at, v, true);
    at += 8;
  };
  const bytes = (k: Uint8Array, size: number) => {
    if (k.length !== size) throw new RangeError(`expected ${size} bytes, got ${k.length}`);
    out.set(k, at);
    at += size;
  };
  const key = (k: Uint8Array) => bytes(k, 32);
  u32(V4_TAG);
  key(state.nodePubkey);
  key(state.authorizedWithdrawer);
  key(state.inflationRewardsCollector);
  key(state.blockRevenueCollector);
  u16(state.inflationRewardsCommissionBps);
  u16(state.blockRevenueCommissionBps);
  u64(state.pendingDelegatorRewards);
  if (state.blsPubkeyCompressed === null) u8(0);
  else {
    u8(1);
    bytes(state.blsPubkeyCompressed, BLS_PUBLIC_KEY_COMPRESSED_SIZE);
  }
  u64(BigInt(state.votes.length));
  for (const vote of state.votes) {
    u8(vote.latency);
    u64(vote.slot);
    u32(vote.confirmationCount);
  }
  if (state.rootSlot === null) u8(0);
  else {
    u8(1);
    u64(state.rootSlot);
  }
  u64(BigInt(state.authorizedVoters.length));
  for (const { epoch, voter } of state.authorizedVoters) {
    u64(epoch);
    key(voter);
  }
  u64(BigInt(state.epochCredits.length));
  for (const c of state.epochCredits) {
    u64(c.epoch);
    u64(c.credits);
    u64(c.previousCredits);
  }
  u64(state.lastTimestamp.slot);
  view.setBigInt64(at, state.lastTimestamp.timestamp, true);
  at += 8;
  if (at > VOTE_STATE_SIZE) throw new RangeError("vote state overflows its account");
  return out;
}
