/**
 * The localnet's Jito block engine, driven by Jito's own JSON-RPC client (jito-js-rpc) against a real
 * localnet child process: bundles land all or nothing, in order, in one block; statuses follow Jito's
 * states; refusals carry their reasons; the tip floor reads tips that landed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { generateKeyPairSigner, address, type Address, type KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { JitoJsonRpcClient } from "jito-js-rpc";
import { sendRandomBundles, tallyBundles } from "../bundle-helpers.ts";
import {
  balanceOf,
  fundedSigner,
  signedTransaction,
  startTestLocalnet,
  waitFor,
  type TestLocalnet,
} from "../helpers.ts";

let net: TestLocalnet;
let jito: JitoJsonRpcClient;
let payer: KeyPairSigner;
let tipAccounts: string[];

beforeAll(async () => {
  net = await startTestLocalnet();
  jito = new JitoJsonRpcClient(net.handle.blockEngineUrl);
  payer = await fundedSigner(net, 100_000_000_000n);
  tipAccounts = (await jito.getTipAccounts()).result as string[];
});
afterAll(async () => {
  await net?.stop();
});

const blockhash = async () => (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;

/** A transfer from `from` (optionally with a tip to a tip account in the same transaction). */
async function transfer(
  from: KeyPairSigner,
  to: Address,
  lamports: bigint,
  bh: { blockhash: string; lastValidBlockHeight: bigint },
  tip = 0n,
) {
  const instructions = [getTransferSolInstruction({ source: from, destination: to, amount: lamports })];
  if (tip > 0n) {
    instructions.push(getTransferSolInstruction({ source: from, destination: address(tipAccounts[0]!), amount: tip }));
  }
  return signedTransaction(from, instructions, bh);
}

async function inflight(id: string): Promise<any> {
  const response = await jito.getInFlightBundleStatuses([[id]]);
  return (response.result as any).value[0];
}

async function settled(id: string): Promise<any> {
  return waitFor(`bundle ${id}`, async () => {
    const status = await inflight(id);
    return status.status === "Landed" || status.status === "Failed" ? status : null;
  });
}

describe("the block engine (jito-js-rpc)", () => {
  it("answers 8 tip accounts, the same on every call", async () => {
    expect(tipAccounts).toHaveLength(8);
    expect(new Set(tipAccounts).size).toBe(8);
    expect((await jito.getTipAccounts()).result).toEqual(tipAccounts);
  });

  it("lands a bundle in one block, in order, with Jito's id; getBundleStatuses then reports it", async () => {
    const bh = await blockhash();
    const a = await generateKeyPairSigner();
    const first = await transfer(payer, a.address, 2_000_000_000n, bh);
    // The second spends what the first gave: it only succeeds after the first, in order.
    const second = await transfer(a, payer.address, 1_000_000_000n, bh, 10_000n);
    const response = await jito.sendBundle([[first.base64, second.base64], { encoding: "base64" }]);
    const id = response.result as string;
    expect(id).toBe(createHash("sha256").update(`${first.signature},${second.signature}`).digest("hex"));
    const status = await settled(id);
    expect(status.status).toBe("Landed");
    const block = await waitFor("the block", async () => {
      const response = await net.call("getBlock", [
        status.landed_slot,
        { commitment: "confirmed", maxSupportedTransactionVersion: 0, transactionDetails: "signatures" },
      ]);
      return response.result;
    });
    const at = block.signatures.indexOf(first.signature);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(block.signatures[at + 1]).toBe(second.signature);
    const statuses = (await jito.getBundleStatuses([[id]])).result as any;
    expect(statuses.value[0]).toMatchObject({
      bundle_id: id,
      transactions: [first.signature, second.signature],
      slot: status.landed_slot,
      err: { Ok: null },
    });
  });

  it("lands nothing of a bundle whose member fails, and says Failed", async () => {
    const bh = await blockhash();
    const a = await generateKeyPairSigner();
    const b = await generateKeyPairSigner();
    const first = await transfer(payer, a.address, 1_000_000_000n, bh, 10_000n);
    // `b` holds nothing: its transfer fails, so the first must not land either.
    const failing = await transfer(b, payer.address, 1n, bh);
    const tipBefore = await balanceOf(net, tipAccounts[0]!);
    const id = (await jito.sendBundle([[first.base64, failing.base64], { encoding: "base64" }])).result as string;
    const status = await settled(id);
    expect(status.status).toBe("Failed");
    expect(status.landed_slot).toBeNull();
    expect(await balanceOf(net, a.address)).toBe(0n);
    // Put back as it was: an account that did not exist still does not.
    expect((await net.call("getAccountInfo", [a.address, { commitment: "processed" }])).result.value).toBeNull();
    expect(await balanceOf(net, tipAccounts[0]!)).toBe(tipBefore);
    const sigs = (await net.call("getSignatureStatuses", [[first.signature, failing.signature]])).result.value;
    expect(sigs).toEqual([null, null]);
    expect(((await jito.getBundleStatuses([[id]])).result as any).value).toEqual([null]);
  });

  it("says Invalid for an id it never saw", async () => {
    const status = await inflight("00".repeat(32));
    expect(status).toEqual({ bundle_id: "00".repeat(32), status: "Invalid", landed_slot: null });
  });

  it("refuses more than 5 transactions, duplicates, undecodable, unknown blockhash, bad signature, no tip", async () => {
    const bh = await blockhash();
    const txs = await Promise.all(
      [1n, 2n, 3n, 4n, 5n, 6n].map(async (n) => (await transfer(payer, payer.address, n, bh, 1_000n)).base64),
    );
    const call = async (params: unknown[]) => {
      const response = await fetch(`${net.handle.blockEngineUrl}/bundles`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "sendBundle", params }),
      });
      return (await response.json()) as any;
    };
    const tooMany = await call([txs, { encoding: "base64" }]);
    expect(tooMany.error.code).toBe(-32602);
    expect(tooMany.error.message).toMatch(/6 transactions, the maximum is 5/);
    const duplicate = await call([[txs[0], txs[0]], { encoding: "base64" }]);
    expect(duplicate.error.message).toMatch(/duplicate/);
    const garbage = await call([["AAAA"], { encoding: "base64" }]);
    expect(garbage.error.message).toMatch(/could not be decoded/);
    const untipped = await transfer(payer, payer.address, 7n, bh);
    const noTip = await call([[untipped.base64], { encoding: "base64" }]);
    expect(noTip.error.message).toMatch(/at least 1000 lamports/);
    // A blockhash the chain never produced, and a signature that does not verify.
    const unknownHash = { blockhash: (await generateKeyPairSigner()).address as string, lastValidBlockHeight: 0n };
    const stale = await transfer(payer, payer.address, 8n, unknownHash, 1_000n);
    expect((await call([[stale.base64], { encoding: "base64" }])).error.message).toMatch(
      /expired or unknown blockhash/,
    );
    const forged = Buffer.from((await transfer(payer, payer.address, 9n, bh, 1_000n)).base64, "base64");
    forged[1] = forged[1]! ^ 0xff; // inside the first signature
    expect((await call([[forged.toString("base64")], { encoding: "base64" }])).error.message).toMatch(
      /transaction 0 failed signature verification/,
    );
    const empty = await call([[]]);
    expect(empty.error.message).toMatch(/at least one transaction/);
  });

  it("sends one transaction as a bundle with bundleOnly, answering its id in x-bundle-id", async () => {
    const bh = await blockhash();
    const a = await generateKeyPairSigner();
    const tx = await transfer(payer, a.address, 5_000_000n, bh, 2_000n);
    const response = await fetch(`${net.handle.blockEngineUrl}/transactions?bundleOnly=true`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "sendTransaction",
        params: [tx.base64, { encoding: "base64" }],
      }),
    });
    const body = (await response.json()) as any;
    expect(body.result).toBe(tx.signature);
    const id = response.headers.get("x-bundle-id")!;
    expect(id).toBe(createHash("sha256").update(tx.signature).digest("hex"));
    expect((await settled(id)).status).toBe("Landed");
    expect(await balanceOf(net, a.address)).toBe(5_000_000n);
    // Through jito-js-rpc too.
    const other = await transfer(payer, a.address, 1_000_000n, bh, 2_000n);
    const viaClient = await jito.sendTxn([other.base64, { encoding: "base64" }], true);
    expect(viaClient.result).toBe(other.signature);
  });

  it("serves the tip floor in Jito's shape, from tips that landed", async () => {
    const response = await fetch(`${net.handle.blockEngineUrl}/bundles/tip_floor`);
    const [floor] = (await response.json()) as any[];
    for (const key of [
      "landed_tips_25th_percentile",
      "landed_tips_50th_percentile",
      "landed_tips_75th_percentile",
      "landed_tips_95th_percentile",
      "landed_tips_99th_percentile",
      "ema_landed_tips_50th_percentile",
    ]) {
      expect(typeof floor[key]).toBe("number");
    }
    // Tips that landed above: 10,000 and 2,000 lamports (the failed bundle's 10,000 did not land).
    expect(floor.landed_tips_99th_percentile).toBe(10_000 / 1e9);
    expect(floor.landed_tips_25th_percentile).toBe(2_000 / 1e9);
  });

  it("lands no bundle partly: 60 bundles of 2-5, about half with a failing member at random", async () => {
    const sent = await sendRandomBundles(net, jito, payer, tipAccounts[1]!, 60, "bundle-atomicity");
    const tally = await tallyBundles(net, jito, sent);
    expect(tally.partial).toBe(0);
    expect(tally.outOfOrder).toBe(0);
    expect(tally.failedButLanded).toBe(0);
    expect(tally.leaked).toBe(0);
    // Every bundle without a failing member landed whole; every one with one landed nothing.
    expect(tally.whole).toBe(sent.filter((b) => b.failing === null).length);
    expect(tally.none).toBe(sent.filter((b) => b.failing !== null).length);
    expect(tally.whole).toBeGreaterThan(10);
    expect(tally.none).toBeGreaterThan(10);
  });

  it("reads Pending while it waits (frozen chain), then Landed", async () => {
    const bh = await blockhash();
    const a = await generateKeyPairSigner();
    const tx = await transfer(payer, a.address, 3_000_000n, bh, 1_500n);
    await net.handle.control({ freeze: true });
    let id: string;
    try {
      id = (await jito.sendBundle([[tx.base64], { encoding: "base64" }])).result as string;
      expect((await inflight(id)).status).toBe("Pending");
      expect(((await jito.getBundleStatuses([[id]])).result as any).value).toEqual([null]);
    } finally {
      await net.handle.control({ freeze: false });
    }
    expect((await settled(id)).status).toBe("Landed");
  });

  it("loses bundles at the block engine's drop rate: answered with an id, then Invalid", async () => {
    await net.handle.control({ bundleDropRate: 1 });
    const bh = await blockhash();
    const a = await generateKeyPairSigner();
    const tx = await transfer(payer, a.address, 4_000_000n, bh, 1_500n);
    let id: string;
    try {
      id = (await jito.sendBundle([[tx.base64], { encoding: "base64" }])).result as string;
    } finally {
      await net.handle.control({ bundleDropRate: 0 });
    }
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    // Several slots later it is still unknown: it never reached a block.
    const slot = Number((await net.call("getSlot", [{ commitment: "processed" }])).result);
    await waitFor(
      "a few slots",
      async () => Number((await net.call("getSlot", [{ commitment: "processed" }])).result) > slot + 5,
    );
    expect((await inflight(id)).status).toBe("Invalid");
    expect(await balanceOf(net, a.address)).toBe(0n);
  });
});
