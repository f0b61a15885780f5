/**
 * The single-validator cluster a `solana-test-validator` runs, written into LiteSVM at genesis and
 * kept moving with the chain: a validator identity apart from the faucet, its vote account, and one
 * stake account delegated to it (bootstrap stake, active from genesis), with agave's account
 * layouts and owners. After each block the vote account records the validator's vote on it (the
 * tower of 31 lockouts, the root, timely-vote credits per rooted slot, the last timestamp), as a
 * voting validator's would (it votes on every block); the Clock sysvar's balance is kept rent-exempt (LiteSVM rewrites it
 * with 1 lamport).
 *
 * Amounts are the test validator's: identity 500 SOL, stake account 1,000,000 SOL of which all but
 * its rent-exempt reserve is delegated, vote account 1,000,000 SOL (agave 4.4 funds it like the
 * stake; 3.0 made it rent-exempt only). The vote account is a v4 vote state
 * (SIMD-0185) with agave 4.4 genesis' values (`create_v4_account_with_authorized` as
 * solana-test-validator calls it): inflation-rewards commission 0 bps collected by the vote account,
 * block-revenue commission 10,000 bps collected by the identity, and the BLS key solana-test-validator
 * derives from the vote account's keypair.
 */
import { createPrivateKey, createPublicKey, createHash, sign, type KeyObject } from "node:crypto";
import bs58 from "bs58";
import { Account } from "litesvm";
import type { LiteSvm } from "../chain/litesvm-native.ts";
import { epochOfSlot, firstSlotInEpoch, type EpochScheduleParams } from "../chain/epoch-schedule.ts";
import { encodeDelegatedStake, STAKE_STATE_SIZE } from "./stake-state.ts";
import {
  encodeVoteState,
  MAX_LOCKOUT_HISTORY,
  type EpochCredits,
  type Lockout,
  VOTE_STATE_SIZE,
} from "./vote-state.ts";
import { createHistorySysvars } from "./history-sysvars.ts";
import { keepSysvarsRentExempt, writeGenesisSysvars } from "./sysvars.ts";
import { deriveBlsPubkey } from "./bls-key.ts";

export const VOTE_PROGRAM = "Vote111111111111111111111111111111111111111";
export const STAKE_PROGRAM = "Stake11111111111111111111111111111111111111";
const SYSTEM_PROGRAM = "11111111111111111111111111111111";
const U64_MAX = 0xffff_ffff_ffff_ffffn;
const LAMPORTS_PER_SOL = 1_000_000_000n;
const IDENTITY_LAMPORTS = 500n * LAMPORTS_PER_SOL;
const STAKE_LAMPORTS = 1_000_000n * LAMPORTS_PER_SOL;
/** agave 4.4's DEFAULT_VAT_TO_BURN_PER_EPOCH (400 ms slots' Validator Admission Ticket burn). */
const VAT_TO_BURN_PER_EPOCH = 1_600_000_000n;
/** Credits a vote earns when it lands one slot after the voted slot (agave's timely vote credits). */
const VOTE_CREDITS_MAXIMUM_PER_SLOT = 16n;
/** agave's MAX_EPOCH_CREDITS_HISTORY. */
const MAX_EPOCH_CREDITS_HISTORY = 64;

/** One key of the cluster: base58 and raw. */
export interface ClusterKey {
  readonly address: string;
  readonly bytes: Uint8Array;
}

/** What the RPC methods read about the validator's vote account. */
export interface VoteSnapshot {
  lastVote: bigint;
  rootSlot: bigint | null;
  epochCredits: readonly EpochCredits[];
}

/**
 * The validator's vote on one block, as agave's vote listener reports it (`RpcVote`): the voted
 * tower's slots (a TowerSync vote carries every lockout), the voted bank's hash, the vote timestamp
 * and the vote transaction's signature.
 */
export interface ClusterVote {
  votePubkey: string;
  slots: bigint[];
  hash: string;
  timestamp: number;
  signature: string;
}

/** The single validator. */
export interface Cluster {
  readonly identity: ClusterKey;
  readonly voteAccount: ClusterKey;
  readonly stakeAccount: ClusterKey;
  /** Lamports delegated to the vote account (all active from genesis). */
  readonly activatedStake: bigint;
  /** The vote state's inflation-rewards commission, basis points (the v4 vote state's native unit). */
  readonly inflationRewardsCommissionBps: number;
  /** Every address the cluster writes (for the account index). */
  readonly addresses: readonly string[];
  /** The vote account's state as of the bank at `slot` (the validator votes on every block). */
  voteAt(slot: bigint): VoteSnapshot;
  /**
   * The vote on the block at `slot` (its hash and time given). The localnet writes votes straight
   * into the vote account, so no vote transaction exists: the signature is the identity's ed25519
   * signature over (vote account, slot, hash), deterministic and unique per vote.
   */
  voteOn(slot: bigint, blockhash: string, blockTime: number): ClusterVote;
  /** Records the validator's vote on a new block and the history sysvars; returns the addresses written. */
  afterBlock(slot: bigint, blockTime: number, blockhash: string): readonly string[];
}

/**
 * An ed25519 key pair from `given` (a 32-byte seed, e.g. a ledger directory's keypair file), or else
 * derived from a fixed label, so the cluster's addresses never change.
 */
function keyFromSeed(label: string, given?: Uint8Array): ClusterKey & { privateKey: KeyObject } {
  const seed = given ?? createHash("sha256").update(`solgate-localnet:${label}`).digest();
  // PKCS#8 wrapper of a raw Ed25519 seed (RFC 8410).
  const der = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]);
  const privateKey = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
  const publicDer = createPublicKey(privateKey).export({
    format: "der",
    type: "spki",
  });
  const bytes = new Uint8Array(publicDer.subarray(publicDer.length - 32));
  return { address: bs58.encode(bytes), bytes, privateKey };
}

/** Keys the cluster may be given (32-byte ed25519 seeds); the rest are derived from fixed labels. */
export interface ClusterSeeds {
  identity?: Uint8Array;
  voteAccount?: Uint8Array;
}

/** Writes the cluster's genesis accounts into `svm` and returns it. */
export function createCluster(
  svm: LiteSvm,
  schedule: EpochScheduleParams,
  genesisSlot: bigint,
  genesisBlockhash: string,
  seeds: ClusterSeeds = {},
): Cluster {
  const identity = keyFromSeed("validator-identity", seeds.identity);
  const voteAccount = keyFromSeed("validator-vote-account", seeds.voteAccount);
  const stakeAccount = keyFromSeed("validator-stake-account");
  const rentExempt = (size: number) => svm.minimumBalanceForRentExemption(BigInt(size));
  const stakeReserve = rentExempt(STAKE_STATE_SIZE);
  const activatedStake = STAKE_LAMPORTS - stakeReserve;
  // agave 4.4 genesis (create_genesis_config_with_leader_ex_no_features) funds a staked validator's
  // vote account with max(stake lamports, minimum_vote_account_balance_for_vat(100)): 1,000,000 SOL
  // against 100 epochs x 1.6 SOL of VAT burn plus its rent-exempt minimum.
  const vatMinimum = 100n * VAT_TO_BURN_PER_EPOCH + rentExempt(VOTE_STATE_SIZE);
  const voteLamports = STAKE_LAMPORTS > vatMinimum ? STAKE_LAMPORTS : vatMinimum;
  const genesisEpoch = epochOfSlot(schedule, genesisSlot).epoch;
  // agave 4.4 genesis: create_v4_account_with_authorized(node, vote, bls, vote, 0, vote, 10_000, node).
  const inflationRewardsCommissionBps = 0;
  const fixedFields = {
    nodePubkey: identity.bytes,
    authorizedWithdrawer: voteAccount.bytes,
    inflationRewardsCollector: voteAccount.bytes,
    blockRevenueCollector: identity.bytes,
    inflationRewardsCommissionBps,
    blockRevenueCommissionBps: 10_000,
    pendingDelegatorRewards: 0n,
    blsPubkeyCompressed: deriveBlsPubkey(voteAccount.privateKey),
    authorizedVoters: [{ epoch: genesisEpoch, voter: voteAccount.bytes }],
  };

  /**
   * The vote state after the validator voted on every slot from genesis to `slot`: a tower of the
   * last 31 slots (the oldest with 31 confirmations), the slot before it as root, and 16 credits per
   * rooted slot, kept per epoch as agave's `increment_credits` does (cumulative, with the previous
   * epoch's total beside it).
   */
  const voteAt = (slot: bigint): VoteSnapshot & { votes: Lockout[] } => {
    const votes: Lockout[] = [];
    const first =
      slot - BigInt(MAX_LOCKOUT_HISTORY) + 1n > genesisSlot ? slot - BigInt(MAX_LOCKOUT_HISTORY) + 1n : genesisSlot;
    for (let s = first; s <= slot; s++) votes.push({ slot: s, confirmationCount: Number(slot - s) + 1, latency: 1 });
    const rootSlot = slot - BigInt(MAX_LOCKOUT_HISTORY) >= genesisSlot ? slot - BigInt(MAX_LOCKOUT_HISTORY) : null;
    const epochCredits: EpochCredits[] = [];
    if (rootSlot !== null) {
      let total = 0n;
      let epoch = epochOfSlot(schedule, genesisSlot).epoch;
      const lastEpoch = epochOfSlot(schedule, rootSlot).epoch;
      for (; epoch <= lastEpoch; epoch++) {
        const from = firstSlotInEpoch(schedule, epoch) > genesisSlot ? firstSlotInEpoch(schedule, epoch) : genesisSlot;
        const end = firstSlotInEpoch(schedule, epoch + 1n) - 1n;
        const to = end < rootSlot ? end : rootSlot;
        const previous = total;
        total += (to - from + 1n) * VOTE_CREDITS_MAXIMUM_PER_SLOT;
        epochCredits.push({ epoch, credits: total, previousCredits: previous });
      }
    }
    return { lastVote: slot, rootSlot, epochCredits: epochCredits.slice(-MAX_EPOCH_CREDITS_HISTORY), votes };
  };

  const writeVoteAccount = (slot: bigint, timestamp: bigint) => {
    const state = voteAt(slot);
    const data = encodeVoteState({
      ...fixedFields,
      votes: state.votes,
      rootSlot: state.rootSlot,
      epochCredits: state.epochCredits,
      lastTimestamp: { slot, timestamp },
    });
    svm.setAccount(voteAccount.bytes, new Account(voteLamports, data, bs58.decode(VOTE_PROGRAM), false, U64_MAX));
  };

  svm.setAccount(
    identity.bytes,
    new Account(IDENTITY_LAMPORTS, new Uint8Array(0), bs58.decode(SYSTEM_PROGRAM), false, U64_MAX),
  );
  // Genesis: an initialized vote account with no votes yet.
  svm.setAccount(
    voteAccount.bytes,
    new Account(
      voteLamports,
      encodeVoteState({
        ...fixedFields,
        votes: [],
        rootSlot: null,
        epochCredits: [],
        lastTimestamp: { slot: 0n, timestamp: 0n },
      }),
      bs58.decode(VOTE_PROGRAM),
      false,
      U64_MAX,
    ),
  );
  const stakeData = encodeDelegatedStake({
    rentExemptReserve: stakeReserve,
    staker: identity.bytes,
    withdrawer: identity.bytes,
    voter: voteAccount.bytes,
    stake: activatedStake,
    activationEpoch: U64_MAX, // bootstrap stake: active from genesis
    deactivationEpoch: U64_MAX,
    creditsObserved: 0n,
  });
  svm.setAccount(
    stakeAccount.bytes,
    new Account(STAKE_LAMPORTS, stakeData, bs58.decode(STAKE_PROGRAM), false, U64_MAX),
  );
  const sysvarAddresses = writeGenesisSysvars(svm);
  const historySysvars = createHistorySysvars(
    svm,
    { slot: genesisSlot, blockhash: genesisBlockhash, epoch: genesisEpoch },
    activatedStake,
  );

  return {
    identity: { address: identity.address, bytes: identity.bytes },
    voteAccount: { address: voteAccount.address, bytes: voteAccount.bytes },
    stakeAccount: { address: stakeAccount.address, bytes: stakeAccount.bytes },
    activatedStake,
    inflationRewardsCommissionBps,
    addresses: [identity.address, voteAccount.address, stakeAccount.address, ...sysvarAddresses],
    voteAt(slot) {
      if (slot < genesisSlot) return { lastVote: 0n, rootSlot: null, epochCredits: [] };
      const { lastVote, rootSlot, epochCredits } = voteAt(slot);
      return { lastVote, rootSlot, epochCredits };
    },
    voteOn(slot, blockhash, blockTime) {
      const first =
        slot - BigInt(MAX_LOCKOUT_HISTORY) + 1n > genesisSlot ? slot - BigInt(MAX_LOCKOUT_HISTORY) + 1n : genesisSlot;
      const slots: bigint[] = [];
      for (let s = first; s <= slot; s++) slots.push(s);
      const slotBytes = Buffer.alloc(8);
      slotBytes.writeBigUInt64LE(slot);
      const message = Buffer.concat([voteAccount.bytes, slotBytes, bs58.decode(blockhash)]);
      const signature = bs58.encode(sign(null, message, identity.privateKey));
      return { votePubkey: voteAccount.address, slots, hash: blockhash, timestamp: blockTime, signature };
    },
    afterBlock(slot, blockTime, blockhash) {
      writeVoteAccount(slot, BigInt(blockTime));
      historySysvars.afterBlock(slot, blockhash, epochOfSlot(schedule, slot).epoch);
      const written = keepSysvarsRentExempt(svm);
      return [voteAccount.address, ...written];
    },
  };
}
