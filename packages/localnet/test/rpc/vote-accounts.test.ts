/**
 * getVoteAccounts lists every vote account in the bank, as agave's `bank.vote_accounts()`: the node's
 * own and zero-stake ones loaded from files, each read from its vote state. The files are the vote
 * layouts of test/decoder-oracle (v4, v3, 1.14.11 and ones agave cannot read), and each listed
 * account's fields are compared with what agave 4.4.0's own decoder read from the same bytes.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJson, stringifyJson } from "../../src/rpc/json.ts";
import { startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

interface Case {
  name: string;
  pubkey: string;
  owner: string;
  data: string;
  expected?: { parsed: { info: any } } | null;
}
const CASES = (
  parseJson(readFileSync(new URL("../decoder-oracle/expected.json", import.meta.url), "utf8")) as { cases: Case[] }
).cases.filter((c) => c.owner === "Vote111111111111111111111111111111111111111" && !c.name.startsWith("the localnet"));
const readable = CASES.filter((c) => c.expected);

/** RpcVoteAccountInfo as agave builds it from the vote state the decoder read. */
function agaveInfo(c: Case) {
  const info = c.expected!.parsed.info;
  const last = info.votes[info.votes.length - 1];
  return {
    votePubkey: c.pubkey,
    nodePubkey: info.nodePubkey,
    activatedStake: 0,
    commission: info.commission,
    inflationRewardsCommissionBps: info.inflationRewardsCommissionBps,
    epochVoteAccount: true,
    lastVote: last === undefined ? 0 : Number(last.slot),
    rootSlot: info.rootSlot === null ? 0 : Number(info.rootSlot),
    epochCredits: info.epochCredits
      .slice(-5)
      .map((e: any) => [Number(e.epoch), Number(e.credits), Number(e.previousCredits)]),
  };
}

describe("getVoteAccounts", () => {
  let net: TestLocalnet;
  let own: string;

  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "localnet-votes-"));
    const accounts = CASES.map((c) => {
      const file = path.join(dir, `${c.pubkey}.json`);
      const account = {
        lamports: 27_074_400,
        data: [c.data, "base64"],
        owner: c.owner,
        executable: false,
        rentEpoch: 0,
      };
      writeFileSync(file, stringifyJson({ pubkey: c.pubkey, account }));
      return { address: c.pubkey, file };
    });
    net = await startTestLocalnet({ accounts });
    // Past the files' last votes (at most slot 201), so the distance decides which are current.
    await waitFor(
      "slot 300",
      async () => (await net.call("getSlot", [{ commitment: "processed" }])).result > 300,
      30_000,
    );
    own = (await net.call("getVoteAccounts", [{ commitment: "processed" }])).result.current[0].votePubkey;
  }, 60_000);
  afterAll(() => net?.stop());

  const byPubkey = (list: any[]) => Object.fromEntries(list.map((v) => [v.votePubkey, v]));

  it("lists every readable vote account, each from its own vote state", async () => {
    expect(readable.length).toBeGreaterThanOrEqual(4);
    // A distance beyond the slot: every account that ever voted is current (agave's rule under it).
    const { current, delinquent } = (
      await net.call("getVoteAccounts", [{ commitment: "processed", delinquentSlotDistance: 1e12 }])
    ).result;
    expect(delinquent).toEqual([]);
    const listed = byPubkey(current);
    expect(Object.keys(listed).sort()).toEqual([own, ...readable.map((c) => c.pubkey)].sort());
    for (const c of readable) expect(listed[c.pubkey], c.name).toEqual(agaveInfo(c));
  });

  it("drops a delinquent zero-stake account unless keepUnstakedDelinquents, and filters by votePubkey", async () => {
    const strict = (await net.call("getVoteAccounts", [{ commitment: "processed", delinquentSlotDistance: 1 }])).result;
    expect([...strict.current, ...strict.delinquent].map((v: any) => v.votePubkey)).not.toContain(readable[0]!.pubkey);
    const kept = (
      await net.call("getVoteAccounts", [
        { commitment: "processed", delinquentSlotDistance: 1, keepUnstakedDelinquents: true },
      ])
    ).result;
    expect(Object.keys(byPubkey(kept.delinquent)).sort()).toEqual(readable.map((c) => c.pubkey).sort());
    const one = (
      await net.call("getVoteAccounts", [
        { commitment: "processed", votePubkey: readable[1]!.pubkey, delinquentSlotDistance: 1e12 },
      ])
    ).result;
    expect(one).toEqual({ current: [agaveInfo(readable[1]!)], delinquent: [] });
  });
});
