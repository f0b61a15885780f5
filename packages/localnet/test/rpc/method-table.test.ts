/**
 * Every method of agave 3.0's HTTP JSON-RPC API (the `rpc_minimal`, `rpc_bank`, `rpc_accounts`,
 * `rpc_accounts_scan` and `rpc_full` traits of its rpc.rs) is served, and the README's table lists
 * exactly these; the methods agave 2.0 removed are -32601 as on agave.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestLocalnet, type TestLocalnet } from "../helpers.ts";

const AGAVE_3_0_METHODS = [
  // rpc_minimal
  "getBalance",
  "getEpochInfo",
  "getGenesisHash",
  "getHealth",
  "getIdentity",
  "getSlot",
  "getBlockHeight",
  "getHighestSnapshotSlot",
  "getTransactionCount",
  "getVersion",
  "getVoteAccounts",
  "getLeaderSchedule",
  // rpc_bank
  "getMinimumBalanceForRentExemption",
  "getInflationGovernor",
  "getInflationRate",
  "getEpochSchedule",
  "getSlotLeader",
  "getSlotLeaders",
  "getBlockProduction",
  // rpc_accounts
  "getAccountInfo",
  "getMultipleAccounts",
  "getBlockCommitment",
  "getTokenAccountBalance",
  "getTokenSupply",
  // rpc_accounts_scan
  "getProgramAccounts",
  "getLargestAccounts",
  "getSupply",
  "getTokenLargestAccounts",
  "getTokenAccountsByOwner",
  "getTokenAccountsByDelegate",
  // rpc_full
  "getInflationReward",
  "getClusterNodes",
  "getRecentPerformanceSamples",
  "getSignatureStatuses",
  "getMaxRetransmitSlot",
  "getMaxShredInsertSlot",
  "requestAirdrop",
  "sendTransaction",
  "simulateTransaction",
  "minimumLedgerSlot",
  "getBlock",
  "getBlockTime",
  "getBlocks",
  "getBlocksWithLimit",
  "getTransaction",
  "getSignaturesForAddress",
  "getFirstAvailableBlock",
  "getLatestBlockhash",
  "isBlockhashValid",
  "getFeeForMessage",
  "getStakeMinimumDelegation",
  "getRecentPrioritizationFees",
];

const REMOVED_IN_AGAVE_2 = [
  "getConfirmedBlock",
  "getConfirmedBlocks",
  "getConfirmedBlocksWithLimit",
  "getConfirmedSignaturesForAddress2",
  "getConfirmedTransaction",
  "getFeeCalculatorForBlockhash",
  "getFeeRateGovernor",
  "getFees",
  "getRecentBlockhash",
  "getSnapshotSlot",
  "getStakeActivation",
];

let net: TestLocalnet;
beforeAll(async () => {
  net = await startTestLocalnet();
}, 30_000);
afterAll(async () => {
  await net?.stop();
});

describe("agave 3.0's method list", () => {
  it("serves every method (never -32601 or -32603)", async () => {
    for (const method of AGAVE_3_0_METHODS) {
      const res = await net.call(method, []);
      if (res.error) expect([-32601, -32603], `${method}: ${JSON.stringify(res.error)}`).not.toContain(res.error.code);
    }
  });

  it("answers the methods agave 2.0 removed with -32601", async () => {
    for (const method of REMOVED_IN_AGAVE_2) {
      expect((await net.call(method, [])).error, method).toEqual({ code: -32601, message: "Method not found" });
    }
  });

  it("lists exactly these methods in the README's table", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const rows = readme
      .split("\n")
      .filter((line) => /^\| (cluster|clock|supply and inflation|accounts|transactions|blocks) +\|/.test(line));
    const listed = rows.flatMap((row) =>
      row
        .split("|")[2]!
        .split(",")
        .map((m) => m.trim().split(" ")[0]!),
    );
    expect([...listed].sort()).toEqual([...AGAVE_3_0_METHODS].sort());
  });
});
