/**
 * The single-validator cluster, as a test validator has it: an identity apart from the faucet, its
 * vote account and a stake account delegated to it (owned by the Vote and Stake programs, in their
 * layouts), a leader schedule of that one identity, block production, commitment, and the methods
 * a node without snapshots or gossip peers answers.
 */
import { AccountRole, generateKeyPairSigner, type Address, type KeyPairSigner } from "@solana/kit";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixture, shapeDiff } from "../accounts/helpers.ts";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";
import { createSocket } from "node:dgram";
import { shredVersionOf } from "../../src/cluster/shred-version.ts";

const SHRED_ORACLE = JSON.parse(readFileSync(new URL("../decoder-oracle/expected.json", import.meta.url), "utf8")) as {
  shredVersions: { hash: string; shredVersion: number }[];
};

const VOTE_PROGRAM = "Vote111111111111111111111111111111111111111";
const STAKE_PROGRAM = "Stake11111111111111111111111111111111111111";

let net: TestLocalnet;
let payer: KeyPairSigner;
let identity: string;

beforeAll(async () => {
  // Epochs of 32 slots (no warm-up), so epoch credits and boundaries come within the test.
  net = await startTestLocalnet({ slotsPerEpoch: 32 });
  payer = await fundedSigner(net);
  identity = (await net.call("getIdentity")).result.identity;
}, 30_000);
afterAll(async () => {
  await net?.stop();
});

const processedSlot = async () => (await net.call("getSlot", [{ commitment: "processed" }])).result as number;
const account = async (address: string) =>
  (await net.call("getAccountInfo", [address, { encoding: "base64", commitment: "processed" }])).result.value;
const bytes = (value: { data: [string, string] }) => Buffer.from(value.data[0], "base64");

describe("the validator", () => {
  it("has an identity apart from the faucet that funds airdrops", async () => {
    const recipient = await generateKeyPairSigner();
    const signature = (await net.call("requestAirdrop", [recipient.address, 1_000_000_000])).result;
    const tx = await waitFor(
      "airdrop",
      async () => (await net.call("getTransaction", [signature, { commitment: "confirmed" }])).result,
    );
    const faucet = tx.transaction.message.accountKeys[0];
    expect(identity).not.toBe(faucet);
    // The identity is a funded system account, as the test validator's (500 SOL) is.
    const info = await account(identity);
    expect(info.owner).toBe("11111111111111111111111111111111");
    expect(info.lamports).toBe(500_000_000_000);
  });

  it("answers getVersion as agave 4.4.0", async () => {
    const { result } = await net.call("getVersion");
    expect(result["solana-core"]).toBe("4.4.0");
    expect(result["feature-set"]).toBe(3_722_100_051);
  });

  it("has a vote account and a delegated stake account in the programs' layouts", async () => {
    const { current, delinquent } = (await net.call("getVoteAccounts", [{ commitment: "processed" }])).result;
    expect(delinquent).toEqual([]);
    expect(current).toHaveLength(1);
    const [vote] = current;
    expect(vote.nodePubkey).toBe(identity);
    expect(vote.epochVoteAccount).toBe(true);
    const voteAccount = await account(vote.votePubkey);
    expect(voteAccount.owner).toBe(VOTE_PROGRAM);
    const voteData = bytes(voteAccount);
    expect(voteData.length).toBe(3762);
    // agave 4.4 genesis funds the vote account with the stake's 1,000,000 SOL (above the VAT minimum).
    expect(voteAccount.lamports).toBe(1_000_000_000_000_000);
    expect(voteData.readUInt32LE(0)).toBe(3); // VoteStateVersions::V4 (SIMD-0185), as agave 4.4 writes it
    expect(
      Buffer.from(voteData.subarray(4, 36)).equals(Buffer.from((await import("bs58")).default.decode(identity))),
    ).toBe(true);
    // agave 4.4's getVoteAccounts (SIMD-0291 active): the percent rounded up from the basis points, and these.
    expect(vote.commission).toBe(0);
    expect(vote.inflationRewardsCommissionBps).toBe(0);
    // jsonParsed: genesis' collectors and commissions (create_v4_account_with_authorized) and the BLS key.
    const parsed = (
      await net.call("getAccountInfo", [vote.votePubkey, { encoding: "jsonParsed", commitment: "processed" }])
    ).result.value.data.parsed.info;
    expect(parsed).toMatchObject({
      nodePubkey: identity,
      authorizedWithdrawer: vote.votePubkey,
      commission: 0,
      priorVoters: [],
      inflationRewardsCommissionBps: 0,
      inflationRewardsCollector: vote.votePubkey,
      blockRevenueCollector: identity,
      blockRevenueCommissionBps: 10_000,
      pendingDelegatorRewards: "0",
    });
    // The key solana-test-validator 4.4.0 derives from the (default) vote keypair, per the decoder oracle.
    const oracle = JSON.parse(readFileSync(new URL("../decoder-oracle/expected.json", import.meta.url), "utf8"));
    expect(parsed.blsPubkeyCompressed).toBe(oracle.defaultVoteAccountBls.blsPubkey);
    expect(parsed.votes[0]).toHaveProperty("latency");
    // The stake account: delegated to the vote account, activated stake = its delegation.
    const stakes = (
      await net.call("getProgramAccounts", [STAKE_PROGRAM, { encoding: "base64", commitment: "processed" }])
    ).result;
    expect(stakes).toHaveLength(1);
    const stake = bytes(stakes[0].account);
    expect(stakes[0].account.data[0].length).toBeGreaterThan(0);
    expect(stake.length).toBe(200);
    expect(stake.readUInt32LE(0)).toBe(2); // StakeStateV2::Stake
    const bs58 = (await import("bs58")).default;
    expect(bs58.encode(stake.subarray(124, 156))).toBe(vote.votePubkey);
    expect(Number(stake.readBigUInt64LE(156))).toBe(vote.activatedStake);
    expect(stake.readBigUInt64LE(4) + stake.readBigUInt64LE(156)).toBe(BigInt(stakes[0].account.lamports));
  });

  it("votes on every block: lastVote follows the slot, the root 31 behind, credits per epoch", async () => {
    const slot = await processedSlot();
    await waitFor("slot 64", async () => (await processedSlot()) > 64);
    const { current } = (await net.call("getVoteAccounts", [{ commitment: "confirmed" }])).result;
    const confirmed = (await net.call("getSlot", [{ commitment: "confirmed" }])).result;
    expect(current[0].lastVote).toBeGreaterThanOrEqual(slot);
    expect(current[0].lastVote).toBeLessThanOrEqual(confirmed + 1);
    expect(current[0].rootSlot).toBe(current[0].lastVote - 31);
    expect(current[0].epochCredits[0]).toEqual([0, 512, 0]); // 32 rooted slots of epoch 0, 16 credits each
    for (const entry of current[0].epochCredits) expect(entry).toHaveLength(3);
    // agave's filters: another vote key lists nothing; a malformed one is refused.
    const other = await generateKeyPairSigner();
    expect((await net.call("getVoteAccounts", [{ votePubkey: other.address }])).result).toEqual({
      current: [],
      delinquent: [],
    });
    expect((await net.call("getVoteAccounts", [{ votePubkey: "nope" }])).error.code).toBe(-32602);
  });

  it("schedules the one identity as leader of every slot", async () => {
    const schedule = (await net.call("getLeaderSchedule", [null, { commitment: "processed" }])).result;
    const epoch = (await net.call("getEpochInfo", [{ commitment: "processed" }])).result;
    expect(Object.keys(schedule)).toEqual([identity]);
    expect(schedule[identity]).toHaveLength(epoch.slotsInEpoch);
    expect(schedule[identity].slice(0, 3)).toEqual([0, 1, 2]);
    // agave 4.4: an identity without slots is refused (3.0 answered {}); keyByVoteAccount keys by vote account.
    expect((await net.call("getLeaderSchedule", [{ identity: payer.address }])).error).toEqual({
      code: -32022,
      message: `Node ${payer.address} was not in the leader schedule for specified epoch`,
    });
    const votePubkey = (await net.call("getVoteAccounts")).result.current[0].votePubkey;
    const byVote = (await net.call("getLeaderSchedule", [null, { keyByVoteAccount: true, identity }])).result;
    expect(Object.keys(byVote)).toEqual([votePubkey]);
    expect(byVote[votePubkey]).toEqual(schedule[identity]);
    expect((await net.call("getLeaderSchedule", [10_000_000_000])).result).toBeNull();
    // The first param is agave's untagged RpcLeaderScheduleConfigWrapper: a slot or a config.
    expect((await net.call("getLeaderSchedule", ["5"])).error).toEqual({
      code: -32602,
      message: "Invalid params: data did not match any variant of untagged enum RpcLeaderScheduleConfigWrapper.",
    });
    expect((await net.call("getSlotLeader", [{ commitment: "processed" }])).result).toBe(identity);
    expect((await net.call("getSlotLeaders", [0, 10])).result).toEqual(Array(10).fill(identity));
    expect((await net.call("getSlotLeaders", [0, 5001])).error).toEqual({
      code: -32602,
      message: "Invalid limit; max 5000",
    });
    expect((await net.call("getSlotLeaders", [10_000_000_000, 1])).error.message).toMatch(
      /^Invalid slot range: leader schedule for epoch \d+ is unavailable$/,
    );
  });

  it("reports block production for the epoch and refuses bad ranges with agave's texts", async () => {
    const res = (await net.call("getBlockProduction", [{ commitment: "processed" }])).result;
    const { firstSlot, lastSlot } = res.value.range;
    expect(res.context.slot).toBe(lastSlot);
    expect(res.value.byIdentity[identity]).toEqual([lastSlot - firstSlot + 1, lastSlot - firstSlot + 1]);
    const ranged = (
      await net.call("getBlockProduction", [{ commitment: "processed", range: { firstSlot: 1, lastSlot: 3 } }])
    ).result;
    expect(ranged.value).toEqual({ byIdentity: { [identity]: [3, 3] }, range: { firstSlot: 1, lastSlot: 3 } });
    expect((await net.call("getBlockProduction", [{ range: { firstSlot: 5, lastSlot: 3 } }])).error.message).toBe(
      "lastSlot, 3, cannot be less than firstSlot, 5",
    );
    expect(
      (await net.call("getBlockProduction", [{ range: { firstSlot: 0, lastSlot: 10_000_000 } }])).error.message,
    ).toMatch(/^lastSlot, 10000000, is too large; max \d+$/);
    expect(
      (await net.call("getBlockProduction", [{ identity: payer.address, commitment: "processed" }])).result.value
        .byIdentity,
    ).toEqual({});
  });

  it("derives the shred version from the genesis hash as agave's compute_shred_version does", () => {
    for (const { hash, shredVersion } of SHRED_ORACLE.shredVersions)
      expect(shredVersionOf(hash), hash).toBe(shredVersion);
  });

  it("lists itself as the one cluster node, with the sockets it binds", async () => {
    const nodes = (await net.call("getClusterNodes")).result;
    expect(nodes).toHaveLength(1);
    const hostPort = new URL(net.handle.rpcUrl).host;
    expect(nodes[0]).toMatchObject({
      pubkey: identity,
      rpc: hostPort,
      pubsub: hostPort,
      version: "4.4.0",
      featureSet: 3_722_100_051,
      clientId: "Agave", // agave 4.4's RpcContactInfo names the node's client (solana-version ClientId)
    });
    // agave's Node: gossip, TVU, QUIC TPU and TPU-forwards, TPU-vote and serve-repair on 127.0.0.1; no UDP TPU.
    const genesisHash = (await net.call("getGenesisHash")).result;
    expect(nodes[0].shredVersion).toBe(shredVersionOf(genesisHash));
    expect(nodes[0].shredVersion).not.toBe(1);
    expect(nodes[0].tpu).toBeNull();
    expect(nodes[0].tpuForwards).toBeNull();
    const sockets = ["gossip", "tvu", "tpuQuic", "tpuForwardsQuic", "tpuVote", "serveRepair"].map(
      (role) => nodes[0][role] as string,
    );
    expect(new Set(sockets).size).toBe(6);
    for (const socket of sockets) {
      expect(socket).toMatch(/^127\.0\.0\.1:\d+$/);
      // Reserved: the localnet holds the port, so binding it again fails.
      const probe = createSocket("udp4");
      const bound = await new Promise<string>((resolve) => {
        probe.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
        probe.bind(Number(socket.split(":")[1]), "127.0.0.1", () => resolve("bound"));
      });
      probe.close();
      expect(bound, socket).toBe("EADDRINUSE");
    }
  });

  it("answers block commitment, shred and snapshot slots as a node with all stake does", async () => {
    const tip = await processedSlot();
    const fresh = (await net.call("getBlockCommitment", [tip])).result;
    expect(fresh.totalStake).toBeGreaterThan(0);
    expect(fresh.commitment === null || fresh.commitment.length === 32).toBe(true);
    if (fresh.commitment !== null)
      expect(fresh.commitment.reduce((a: number, b: number) => a + b, 0)).toBe(fresh.totalStake);
    expect((await net.call("getBlockCommitment", [0])).result).toEqual({
      commitment: null,
      totalStake: fresh.totalStake,
    });
    expect((await net.call("getMaxRetransmitSlot")).result).toBeGreaterThanOrEqual(tip);
    expect((await net.call("getMaxShredInsertSlot")).result).toBeGreaterThanOrEqual(tip);
    expect((await net.call("getHighestSnapshotSlot")).error).toEqual({ code: -32008, message: "No snapshot" });
  });

  it("answers getStakeMinimumDelegation with what the Stake program itself returns", async () => {
    const res = (await net.call("getStakeMinimumDelegation", [{ commitment: "processed" }])).result;
    expect(res.context.apiVersion).toBe("4.4.0");
    // StakeInstruction::GetMinimumDelegation (13) puts the minimum in the return data.
    const bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
    const ix = { programAddress: STAKE_PROGRAM as Address, accounts: [], data: new Uint8Array([13, 0, 0, 0]) };
    const tx = await signedTransaction(payer, [ix], bh);
    const simulated = (
      await net.call("simulateTransaction", [tx.base64, { encoding: "base64", commitment: "processed" }])
    ).result.value;
    expect(simulated.err).toBeNull();
    expect(Number(Buffer.from(simulated.returnData.data[0], "base64").readBigUInt64LE(0))).toBe(res.value);
    void AccountRole;
  });

  it("answers getEpochInfo in the recorded node's shape", async () => {
    const ours = await net.call("getEpochInfo", [{ commitment: "processed" }]);
    expect(shapeDiff(ours.result, fixture("rpc/getEpochInfo.json").result)).toEqual([]);
  });
});

describe("the leader schedule cache", () => {
  it("answers only the latest 10 epochs' schedules, as agave's LeaderScheduleCache keeps them", async () => {
    const short = await startTestLocalnet({ slotsPerEpoch: 32, slotMs: 5 });
    try {
      // Root in epoch 10: the cache holds epochs 2..=11 (the root's leader-schedule epoch), 0 and 1 evicted.
      await waitFor(
        "epoch 10 finalized",
        async () => (await short.call("getSlot", [{ commitment: "finalized" }])).result >= 10 * 32 + 2,
        60_000,
      );
      // Epochs pass every 160 ms here: take the answers between two reads of the same finalized epoch.
      const finalizedEpoch = async () =>
        (await short.call("getEpochInfo", [{ commitment: "finalized" }])).result.epoch as number;
      for (let attempt = 0; ; attempt++) {
        const epoch = await finalizedEpoch();
        const oldest = epoch + 1 - 9;
        const answers = await Promise.all([
          short.call("getSlotLeaders", [(oldest - 1) * 32, 1]),
          short.call("getSlotLeaders", [oldest * 32, 1]),
          short.call("getLeaderSchedule", [(oldest - 1) * 32]),
          short.call("getLeaderSchedule", [oldest * 32]),
        ]);
        if ((await finalizedEpoch()) !== epoch && attempt < 20) continue;
        expect(answers[0].error).toEqual({
          code: -32602,
          message: `Invalid slot range: leader schedule for epoch ${oldest - 1} is unavailable`,
        });
        expect(answers[1].result).toHaveLength(1);
        expect(answers[2].result).toBeNull();
        expect(answers[3].result).not.toBeNull();
        break;
      }
    } finally {
      await short.stop();
    }
  }, 90_000);
});
