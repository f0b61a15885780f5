/**
 * The vote account's data in agave's layout: bincode `VoteStateVersions::Current` (tag 2, vote state
 * V3) padded to `VoteState::size_of()` = 3762 bytes, the layout agave 3.0 writes and its
 * account-decoder (`parse_vote`) reads.
 */

/** Bytes of a vote account (agave's `VoteStateV3::size_of()`). */
export const VOTE_STATE_SIZE = 3762;
/** agave's MAX_LOCKOUT_HISTORY: votes in the tower before the oldest becomes the root. */
export const MAX_LOCKOUT_HISTORY = 31;
/** Entries in the prior-voters circular buffer. */
const PRIOR_VOTERS = 32;

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

/** The fields of a vote state this localnet writes. */
export interface VoteState {
  nodePubkey: Uint8Array;
  authorizedWithdrawer: Uint8Array;
  commission: number;
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
  const u32 = (v: number) => {
    view.setUint32(at, v, true);
    at += 4;
  };
  const u64 = (v: bigint) => {
    view.setBigUint64(at, v, true);
    at += 8;
  };
  const key = (k: Uint8Array) => {
    out.set(k, at);
    at += 32;
  };
  u32(2);
  key(state.nodePubkey);
  key(state.authorizedWithdrawer);
  u8(state.commission);
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
  // Prior voters: never switched, so the circular buffer is empty (index at its last slot).
  at += PRIOR_VOTERS * 48;
  u64(BigInt(PRIOR_VOTERS - 1));
  u8(1);
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
