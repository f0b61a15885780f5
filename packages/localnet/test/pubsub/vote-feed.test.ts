/**
 * voteSubscribe as agave 4.4.0 (like 3.0.6) serves it: "Method not found" (-32601) unless the
 * validator runs with `--rpc-pubsub-enable-vote-subscription`, voteUnsubscribe too once its params
 * have parsed (`vote_unsubscribe` checks the flag first), and when enabled, one `voteNotification` per vote of the validator with agave's `RpcVote`
 * shape, checked against the chain's own record of that vote (vote account, block, block time) and
 * the identity's signature.
 */
import { createPublicKey, verify } from "node:crypto";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadLocalnetConfig } from "../../src/config.ts";
import { startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";
import { connect, sleep, type WsClient } from "./ws-client.ts";

/** An ed25519 public key object from its 32 raw bytes (SPKI DER prefix, RFC 8410). */
const ed25519 = (raw: Uint8Array) =>
  createPublicKey({
    key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), raw]),
    format: "der",
    type: "spki",
  });

it("reads LOCALNET_VOTE_SUBSCRIPTION as a 0/1 switch, off by default", () => {
  expect(loadLocalnetConfig({}).voteSubscription).toBe(false);
  expect(loadLocalnetConfig({ LOCALNET_VOTE_SUBSCRIPTION: "1" }).voteSubscription).toBe(true);
  expect(loadLocalnetConfig({ LOCALNET_VOTE_SUBSCRIPTION: "0" }).voteSubscription).toBe(false);
  expect(() => loadLocalnetConfig({ LOCALNET_VOTE_SUBSCRIPTION: "yes" })).toThrow(
    'LOCALNET_VOTE_SUBSCRIPTION must be 0 or 1, got "yes"',
  );
});

describe("voteSubscribe off (agave's default)", () => {
  let net: TestLocalnet;
  let ws: WsClient;
  beforeAll(async () => {
    net = await startTestLocalnet();
    ws = await connect(net.handle.wsUrl);
  });
  afterAll(async () => {
    ws?.close();
    await net?.stop();
  });

  it("answers -32601 Method not found, to voteUnsubscribe too once its params parse", async () => {
    const res = await ws.request("voteSubscribe");
    expect(res.error).toEqual({ code: -32601, message: "Method not found" });
    expect((await ws.request("voteUnsubscribe", [12345])).error).toEqual({ code: -32601, message: "Method not found" });
    const slots = await ws.subscribe("slotSubscribe");
    expect((await ws.request("voteUnsubscribe", [slots])).error).toEqual({ code: -32601, message: "Method not found" });
    expect((await ws.request("voteUnsubscribe", ["x"])).error.code).toBe(-32602);
  });
});

describe("voteSubscribe on (--rpc-pubsub-enable-vote-subscription)", () => {
  let net: TestLocalnet;
  let ws: WsClient;
  beforeAll(async () => {
    net = await startTestLocalnet({ slotMs: 25, voteSubscription: true });
    ws = await connect(net.handle.wsUrl);
  });
  afterAll(async () => {
    ws?.close();
    await net?.stop();
  });

  it("refuses params as agave's parameterless method does", async () => {
    const res = await ws.request("voteSubscribe", [{ commitment: "confirmed" }]);
    expect(res.error.code).toBe(-32602);
  });

  it("notifies each vote as agave's RpcVote, one per block, matching the chain's record", async () => {
    const sub = await ws.subscribe("voteSubscribe");
    expect(typeof sub).toBe("number");
    await ws.next(sub, () => ws.received(sub).length >= 40);
    const votes = ws.received(sub).map((n) => {
      expect(n.method).toBe("voteNotification");
      return n.params.result;
    });
    const identity = (await net.call("getIdentity")).result.identity;
    const voteAccount = (await net.call("getVoteAccounts")).result.current[0].votePubkey;
    for (const [i, vote] of votes.entries()) {
      expect(Object.keys(vote)).toEqual(["votePubkey", "slots", "hash", "timestamp", "signature"]);
      expect(vote.votePubkey).toBe(voteAccount);
      const last = vote.slots.at(-1);
      // The tower: up to 31 consecutive slots ending at the voted one.
      expect(vote.slots.length).toBe(Math.min(31, vote.slots.length));
      expect(vote.slots).toEqual(vote.slots.map((_: number, k: number) => last - vote.slots.length + 1 + k));
      if (i > 0) expect(last).toBe(votes[i - 1].slots.at(-1) + 1);
      expect(bs58.decode(vote.signature)).toHaveLength(64);
    }
    // Old enough to have a full tower; its block is on record.
    const vote = votes.at(-1);
    expect(vote.slots).toHaveLength(31);
    const slot = vote.slots.at(-1);
    const block = await waitFor("the voted block", async () => {
      const res = await net.call("getBlock", [
        slot,
        { commitment: "confirmed", transactionDetails: "none", rewards: false },
      ]);
      return res.result;
    });
    expect(vote.hash).toBe(block.blockhash);
    expect(vote.timestamp).toBe(block.blockTime);
    // The vote account recorded the same vote (its last vote moved to or past the slot).
    const account = (await net.call("getVoteAccounts", [{ commitment: "processed" }])).result.current[0];
    expect(account.lastVote).toBeGreaterThanOrEqual(slot);
    // Signed by the validator's identity, over (vote account, slot, hash), so each vote's is unique.
    const slotBytes = Buffer.alloc(8);
    slotBytes.writeBigUInt64LE(BigInt(slot));
    const message = Buffer.concat([bs58.decode(voteAccount), slotBytes, bs58.decode(vote.hash)]);
    expect(verify(null, message, ed25519(bs58.decode(identity)), bs58.decode(vote.signature))).toBe(true);
    expect(new Set(votes.map((v) => v.signature)).size).toBe(votes.length);

    expect((await ws.request("voteUnsubscribe", [sub])).result).toBe(true);
    await sleep(100);
    const count = ws.received(sub).length;
    await sleep(200);
    expect(ws.received(sub).length).toBe(count);
  });
});
