/**
 * The single-validator cluster's methods, in agave 4.4's shapes: getIdentity, getVoteAccounts,
 * getLeaderSchedule, getSlotLeader, getSlotLeaders, getBlockProduction, getClusterNodes,
 * getBlockCommitment, getMaxRetransmitSlot, getMaxShredInsertSlot, getHighestSnapshotSlot and
 * getStakeMinimumDelegation.
 */
import bs58 from "bs58";
import type { Chain } from "../chain/chain.ts";
import { epochOfSlot, firstSlotInEpoch, slotsInEpoch } from "../chain/epoch-schedule.ts";
import {
  API_VERSION,
  FEATURE_SET,
  base58Key,
  boolField,
  commitmentField,
  configParam,
  contextSlot,
  expectArity,
  stringField,
  u64Field,
  u64Param,
  withContext,
} from "./params.ts";
import { parseVote } from "../accounts/parse-vote.ts";
import type { NodeSocketRole } from "../cluster/node-sockets.ts";
import { shredVersionOf } from "../cluster/shred-version.ts";
import { JsonRpcError, RpcErrorCode, invalidParams, type MethodContext, type MethodTable } from "./protocol.ts";

/** agave's DELINQUENT_VALIDATOR_SLOT_DISTANCE. */
const DELINQUENT_VALIDATOR_SLOT_DISTANCE = 128n;
/** agave's MAX_RPC_VOTE_ACCOUNT_INFO_EPOCH_CREDITS_HISTORY. */
const EPOCH_CREDITS_HISTORY = 5;
/** agave's LeaderScheduleCache MAX_SCHEDULES. */
const MAX_CACHED_SCHEDULES = 10n;
/** agave's MAX_GET_SLOT_LEADERS. */
const MAX_GET_SLOT_LEADERS = 5000;
/** agave's SlotHistory::MAX_ENTRIES (the range getBlockProduction can answer). */
const SLOT_HISTORY_ENTRIES = 1024n * 1024n;
/** Lockouts a vote account holds (a block's commitment array has one entry per confirmation count). */
const MAX_LOCKOUT_HISTORY = 31n;
/**
 * The Stake program's minimum delegation with `stake_raise_minimum_delegation_to_1_sol` active, as
 * on a test validator (every feature active) and in this chain's own Stake program (a test asks it).
 */
const STAKE_MINIMUM_DELEGATION = 1_000_000_000n;

const decode58 = (text: string): Uint8Array | null => {
  try {
    return bs58.decode(text);
  } catch {
    return null;
  }
};

/** agave's `RpcVoteAccountInfo`. */
interface VoteAccountInfo {
  activatedStake: bigint;
  commission: number;
  epochCredits: unknown[][];
  epochVoteAccount: boolean;
  inflationRewardsCommissionBps: number;
  lastVote: bigint;
  nodePubkey: string;
  rootSlot: bigint;
  votePubkey: string;
}

/**
 * A vote account other than the node's, read from its vote state as agave's `VoteStateView` reads it
 * (null when it does not deserialize: agave's stakes cache holds no such account). It has no stake
 * (the localnet delegates only to its own), and it counts as an epoch vote account, as one present
 * at genesis does.
 */
function otherVoteAccount(address: string, data: Uint8Array): VoteAccountInfo | null {
  const parsed = parseVote(data, address);
  if (parsed === null) return null;
  const info = parsed.info as {
    nodePubkey: string;
    votes: { slot: number | bigint }[];
    rootSlot: number | bigint | null;
    epochCredits: { epoch: number | bigint; credits: string; previousCredits: string }[];
    inflationRewardsCommissionBps: number;
    commission: number;
  };
  const last = info.votes[info.votes.length - 1];
  return {
    activatedStake: 0n,
    commission: info.commission,
    epochCredits: info.epochCredits
      .slice(-EPOCH_CREDITS_HISTORY)
      .map((c) => [BigInt(c.epoch), BigInt(c.credits), BigInt(c.previousCredits)]),
    epochVoteAccount: true,
    inflationRewardsCommissionBps: info.inflationRewardsCommissionBps,
    lastVote: last === undefined ? 0n : BigInt(last.slot),
    nodePubkey: info.nodePubkey,
    rootSlot: info.rootSlot === null ? 0n : BigInt(info.rootSlot),
    votePubkey: address,
  };
}

/** What these methods need. */
export interface ClusterMethodDeps {
  chain: Chain;
  /** The node's reserved gossip, TVU, TPU and repair sockets (`host:port`), once bound. */
  nodeSockets?: () => Readonly<Record<NodeSocketRole, string>> | undefined;
  /** Every account the Vote program owns (the account index's). */
  voteAccounts?: () => Iterable<{ readonly address: string; readonly data: Uint8Array }>;
  /** `host:port` the server listens on (known once it listens): the node's rpc and pubsub address. */
  listenAddress(): string;
}

/** Creates the cluster method table. */
export function createClusterMethods({
  chain,
  listenAddress,
  voteAccounts = () => [],
  nodeSockets = () => undefined,
}: ClusterMethodDeps): MethodTable {
  const { cluster } = chain;
  const schedule = chain.epochSchedule;
  const identity = cluster.identity.address;
  const shredVersion = shredVersionOf(chain.block(chain.genesisSlot)!.blockhash);

  /**
   * agave's leader schedule cache (`LeaderScheduleCache`, which getSlotLeaders and getLeaderSchedule
   * read): up to the root's leader-schedule epoch (the next one), and only the latest
   * MAX_SCHEDULES = 10 epochs it computed, older ones evicted.
   */
  const scheduleAvailable = (epoch: bigint, rootSlot: bigint) => {
    const maxEpoch = epochOfSlot(schedule, rootSlot).epoch + 1n;
    return epoch <= maxEpoch && epoch + MAX_CACHED_SCHEDULES > maxEpoch;
  };

  /** Leaders of `limit` slots from `start`, or agave's error for an epoch not yet scheduled. */
  const slotLeaders = (start: bigint, limit: number, bankSlot: bigint): string[] => {
    const out: string[] = [];
    let { epoch, slotIndex } = epochOfSlot(schedule, start);
    while (out.length < limit) {
      if (!scheduleAvailable(epoch, bankSlot)) {
        throw invalidParams(`Invalid slot range: leader schedule for epoch ${epoch} is unavailable`);
      }
      const remaining = slotsInEpoch(schedule, epoch) - slotIndex;
      const take = BigInt(limit - out.length) < remaining ? limit - out.length : Number(remaining);
      for (let i = 0; i < take; i++) out.push(identity);
      epoch++;
      slotIndex = 0n;
    }
    return out;
  };

  const hasBlock = (slot: bigint) => slot >= chain.genesisSlot || chain.block(slot) !== undefined;

  return {
    getIdentity(params) {
      expectArity(params, 0, 0);
      return { identity };
    },

    getVoteAccounts(params, ctx) {
      expectArity(params, 0, 1);
      const config = configParam(params[0]);
      const votePubkey = stringField(config, "votePubkey");
      if (votePubkey !== undefined) base58Key(votePubkey, decode58);
      const keepUnstaked = boolField(config, "keepUnstakedDelinquents", false);
      const distance = u64Field(config, "delinquentSlotDistance") ?? DELINQUENT_VALIDATOR_SLOT_DISTANCE;
      const slot = ctx.slotAt(commitmentField(config));
      const current: unknown[] = [];
      const delinquent: unknown[] = [];
      // agave's bank.vote_accounts(): every vote account the bank holds, the node's own and any other
      // (loaded from a file or created by a transaction), each from its own vote state.
      const infos: VoteAccountInfo[] = [];
      if (votePubkey === undefined || votePubkey === cluster.voteAccount.address) {
        const vote = cluster.voteAt(slot);
        infos.push({
          activatedStake: cluster.activatedStake,
          // agave 4.4 (commission_rate_in_basis_points active, SIMD-0291): the percent is the vote
          // state's basis points rounded up, at most 255; the basis points are given beside it.
          commission: Math.min(Math.ceil(cluster.inflationRewardsCommissionBps / 100), 255),
          epochCredits: vote.epochCredits
            .slice(-EPOCH_CREDITS_HISTORY)
            .map((c) => [c.epoch, c.credits, c.previousCredits]),
          epochVoteAccount: true,
          inflationRewardsCommissionBps: cluster.inflationRewardsCommissionBps,
          lastVote: vote.lastVote,
          nodePubkey: identity,
          rootSlot: vote.rootSlot ?? 0n,
          votePubkey: cluster.voteAccount.address,
        });
      }
      for (const account of voteAccounts()) {
        if (account.address === cluster.voteAccount.address) continue;
        if (votePubkey !== undefined && account.address !== votePubkey) continue;
        const info = otherVoteAccount(account.address, account.data);
        if (info !== null) infos.push(info);
      }
      for (const info of infos) {
        const isCurrent = slot >= distance ? info.lastVote > slot - distance : info.lastVote > 0n;
        if (isCurrent) current.push(info);
        else if (keepUnstaked || info.activatedStake > 0n) delinquent.push(info);
      }
      return { current, delinquent };
    },

    getLeaderSchedule(params, ctx) {
      expectArity(params, 0, 2);
      // agave: the first param is a slot or the config (RpcLeaderScheduleConfigWrapper).
      let slotParam: bigint | undefined;
      let config: Record<string, unknown>;
      const first = params[0];
      if (first !== null && typeof first === "object" && !Array.isArray(first)) {
        config = configParam(first);
      } else {
        const isSlot =
          typeof first === "bigint" || (typeof first === "number" && Number.isInteger(first) && first >= 0);
        if (first !== undefined && first !== null && !isSlot) {
          throw invalidParams(
            "Invalid params: data did not match any variant of untagged enum RpcLeaderScheduleConfigWrapper.",
          );
        }
        if (first !== undefined && first !== null) slotParam = u64Param(first);
        config = configParam(params[1]);
      }
      const filter = stringField(config, "identity");
      if (filter !== undefined) base58Key(filter, decode58);
      // agave 4.4: keyByVoteAccount keys the schedule by the leaders' vote accounts.
      const byVoteAccount = boolField(config, "keyByVoteAccount", false);
      const bankSlot = ctx.slotAt(commitmentField(config));
      const slot = slotParam ?? bankSlot;
      const { epoch } = epochOfSlot(schedule, slot);
      if (!scheduleAvailable(epoch, ctx.slotAt("finalized"))) return null;
      if (filter !== undefined && filter !== identity) {
        // agave 4.4 refuses an identity with no slot in the schedule (3.0 answered {}).
        throw new JsonRpcError(
          RpcErrorCode.LEADER_SCHEDULE_IDENTITY_NOT_FOUND,
          `Node ${filter} was not in the leader schedule for specified epoch`,
        );
      }
      const length = Number(slotsInEpoch(schedule, epoch));
      return { [byVoteAccount ? cluster.voteAccount.address : identity]: Array.from({ length }, (_, i) => i) };
    },

    getSlotLeader(params, ctx) {
      expectArity(params, 0, 1);
      contextSlot(ctx, configParam(params[0]));
      return identity;
    },

    getSlotLeaders(params, ctx) {
      expectArity(params, 2, 2);
      const start = u64Param(params[0]);
      const limit = u64Param(params[1]);
      if (limit > BigInt(MAX_GET_SLOT_LEADERS)) throw invalidParams(`Invalid limit; max ${MAX_GET_SLOT_LEADERS}`);
      return slotLeaders(start, Number(limit), ctx.slotAt("finalized"));
    },

    getBlockProduction(params, ctx) {
      expectArity(params, 0, 1);
      const config = configParam(params[0]);
      const filter = stringField(config, "identity");
      if (filter !== undefined) base58Key(filter, decode58);
      const bankSlot = ctx.slotAt(commitmentField(config));
      let firstSlot: bigint;
      let lastSlot: bigint;
      if (config.range === undefined || config.range === null) {
        firstSlot = firstSlotInEpoch(schedule, epochOfSlot(schedule, bankSlot).epoch);
        lastSlot = bankSlot;
      } else {
        const range = configParam(config.range);
        if (range.firstSlot === undefined) throw invalidParams("Invalid params: missing field `firstSlot`.");
        firstSlot = u64Param(range.firstSlot);
        lastSlot = u64Field(range, "lastSlot") ?? bankSlot;
        if (lastSlot < firstSlot)
          throw invalidParams(`lastSlot, ${lastSlot}, cannot be less than firstSlot, ${firstSlot}`);
      }
      const oldest = bankSlot + 1n > SLOT_HISTORY_ENTRIES ? bankSlot + 1n - SLOT_HISTORY_ENTRIES : 0n;
      if (firstSlot < oldest) throw invalidParams(`firstSlot, ${firstSlot}, is too small; min ${oldest}`);
      if (lastSlot > bankSlot) throw invalidParams(`lastSlot, ${lastSlot}, is too large; max ${bankSlot}`);
      slotLeaders(firstSlot, Number(lastSlot - firstSlot) + 1, bankSlot); // agave's schedule check
      const byIdentity: Record<string, [bigint, bigint]> = {};
      if (filter === undefined || filter === identity) {
        let produced = 0n;
        for (let s = firstSlot; s <= lastSlot; s++) if (hasBlock(s)) produced++;
        byIdentity[identity] = [lastSlot - firstSlot + 1n, produced];
      }
      return withContext(bankSlot, { byIdentity, range: { firstSlot, lastSlot } });
    },

    getClusterNodes(params) {
      expectArity(params, 0, 0);
      const address = listenAddress();
      // One node, this one, with the sockets agave's Node binds: gossip, TVU, QUIC TPU and TPU-forwards,
      // TPU-vote and serve-repair are bound (nodeSockets) though not served; agave 4.4 binds no UDP TPU.
      const sockets = nodeSockets();
      return [
        {
          // agave 4.4: the node's client (solana-version's ClientId, "Agave" for agave's own build).
          clientId: "Agave",
          featureSet: FEATURE_SET,
          gossip: sockets?.gossip ?? null,
          pubkey: identity,
          pubsub: address,
          rpc: address,
          serveRepair: sockets?.serveRepair ?? null,
          shredVersion,
          tpu: null,
          tpuForwards: null,
          tpuForwardsQuic: sockets?.tpuForwardsQuic ?? null,
          tpuQuic: sockets?.tpuQuic ?? null,
          tpuVote: sockets?.tpuVote ?? null,
          tvu: sockets?.tvu ?? null,
          version: API_VERSION,
        },
      ];
    },

    getBlockCommitment(params, ctx) {
      expectArity(params, 1, 1);
      const slot = u64Param(params[0]);
      const tip = ctx.slotAt("processed");
      const root = ctx.slotAt("finalized");
      // The commitment cache holds unrooted slots: the whole stake confirms slot s with a lockout of
      // (tip - s + 1) confirmations, since the validator voted on every slot.
      let commitment: bigint[] | null = null;
      if (slot > root && slot <= tip && hasBlock(slot)) {
        commitment = new Array<bigint>(Number(MAX_LOCKOUT_HISTORY) + 1).fill(0n);
        const depth = tip - slot < MAX_LOCKOUT_HISTORY ? tip - slot : MAX_LOCKOUT_HISTORY;
        commitment[Number(depth)] = cluster.activatedStake;
      }
      return { commitment, totalStake: cluster.activatedStake };
    },

    getMaxRetransmitSlot(params, ctx) {
      expectArity(params, 0, 0);
      return ctx.slotAt("processed");
    },

    getMaxShredInsertSlot(params, ctx) {
      expectArity(params, 0, 0);
      return ctx.slotAt("processed");
    },

    getHighestSnapshotSlot(params) {
      expectArity(params, 0, 0);
      // The localnet takes no snapshots: agave's answer for a node without any.
      throw new JsonRpcError(RpcErrorCode.NO_SNAPSHOT, "No snapshot");
    },

    getStakeMinimumDelegation(params, ctx: MethodContext) {
      expectArity(params, 0, 1);
      const slot = contextSlot(ctx, configParam(params[0]));
      return withContext(slot, STAKE_MINIMUM_DELEGATION);
    },
  };
}
