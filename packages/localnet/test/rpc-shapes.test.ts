/**
 * The localnet's responses against real node responses (test/fixtures/solana, copied from the
 * shared fixtures with their provenance): for each method this module owns, the same keys
 * recursively, the same JSON types and the same error codes. Keys a newer agave adds beyond an
 * older fixture are allowed only from the explicit list below.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { getCreateAssociatedTokenIdempotentInstructionAsync } from "@solana-program/token";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "./helpers.ts";

/** Fields agave added after some fixtures were captured (the fixtures span agave 1.14 to 4.1). */
const NEWER_FIELDS = new Set([
  "costUnits",
  "transactionIndex",
  "computeUnitsConsumed",
  "loadedAddresses",
  "returnData",
  "fee",
  "innerInstructions",
  "loadedAccountsDataSize",
  "replacementBlockhash",
  "preBalances",
  "postBalances",
  "preTokenBalances",
  "postTokenBalances",
  "apiVersion",
  "stackHeight",
  "source",
]);

/** Program-specific payloads (a vote's `info` is not a transfer's): compared by JSON type only. */
const OPAQUE = new Set(["info"]);

function fixture(path: string): any {
  const json = JSON.parse(readFileSync(new URL(`../../../test/fixtures/solana/${path}`, import.meta.url), "utf8"));
  return json.parsed ?? json;
}

type Kind = "null" | "number" | "string" | "boolean" | "array" | "object";
const kind = (v: unknown): Kind => (v === null ? "null" : Array.isArray(v) ? "array" : (typeof v as Kind));

/** Differences between `ours` and a real node's `theirs`; empty when the shapes agree. */
function shapeDiff(ours: unknown, theirs: unknown, path: string, emptyHere: Record<string, string>): string[] {
  if (theirs === null) return []; // a nullable field: its non-null type is unknown from this sample
  if (kind(ours) !== kind(theirs)) return [`${path}: ${kind(ours)} where the node has ${kind(theirs)}`];
  if (Array.isArray(theirs)) {
    const mine = ours as unknown[];
    if (theirs.length === 0) return []; // no element to compare with
    if (mine.length === 0)
      return path in emptyHere ? [] : [`${path}: empty where the node has ${theirs.length} element(s)`];
    const tuple = theirs.some((x) => kind(x) !== kind(theirs[0]));
    if (tuple) {
      if (mine.length !== theirs.length)
        return [`${path}: tuple of ${mine.length} where the node has ${theirs.length}`];
      return theirs.flatMap((t, i) => shapeDiff(mine[i], t, `${path}[${i}]`, emptyHere));
    }
    return mine.flatMap((m, i) => shapeDiff(m, theirs[0], `${path}[${i}]`, emptyHere)).slice(0, 5);
  }
  if (kind(theirs) === "object") {
    const mine = ours as Record<string, unknown>;
    const t = theirs as Record<string, unknown>;
    const problems: string[] = [];
    for (const key of Object.keys(t)) {
      if (!(key in mine)) problems.push(`${path}.${key}: missing`);
      else if (OPAQUE.has(key))
        problems.push(...(kind(mine[key]) === kind(t[key]) ? [] : [`${path}.${key}: ${kind(mine[key])}`]));
      else problems.push(...shapeDiff(mine[key], t[key], `${path}.${key}`, emptyHere));
    }
    for (const key of Object.keys(mine)) {
      if (!(key in t) && !NEWER_FIELDS.has(key)) problems.push(`${path}.${key}: not in the node's response`);
    }
    return problems;
  }
  return [];
}

/**
 * Compares a whole JSON-RPC response (result or error) with a fixture file. An array that is empty here where the
 * node's is populated is a difference, unless `emptyHere` names its path with the reason this test's own chain
 * leaves it empty (an empty array would otherwise match any populated one).
 */
function expectShape(ours: any, path: string, emptyHere: Record<string, string> = {}) {
  const theirs = fixture(path);
  if (theirs.error) {
    expect(ours.error?.code, `${path}: ${JSON.stringify(ours)}`).toBe(theirs.error.code);
    expect(shapeDiff(ours.error, theirs.error, "$.error", emptyHere), path).toEqual([]);
  } else {
    expect(ours.error, path).toBeUndefined();
    expect(shapeDiff(ours.result, theirs.result, "$.result", emptyHere), path).toEqual([]);
  }
}

let net: TestLocalnet;
let payer: KeyPairSigner;
const sigs: Record<string, string> = {};

async function statusOf(signature: string) {
  return (await net.call("getSignatureStatuses", [[signature]])).result.value[0];
}

beforeAll(async () => {
  net = await startTestLocalnet({ finalizeSlots: 32 });
  payer = await fundedSigner(net, 10_000_000_000n);
  const bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
  const owner = await generateKeyPairSigner();
  // A v0 transaction with inner instructions and token accounts (ATA creation for wrapped SOL).
  const ata = await signedTransaction(
    payer,
    [
      getSetComputeUnitPriceInstruction({ microLamports: 10n }),
      await getCreateAssociatedTokenIdempotentInstructionAsync({
        payer,
        owner: owner.address,
        mint: "So11111111111111111111111111111111111111112" as never,
      }),
    ],
    bh,
  );
  const legacy = await signedTransaction(
    payer,
    [getTransferSolInstruction({ source: payer, destination: owner.address, amount: 1_000_000n })],
    bh,
    "legacy",
  );
  const failing = await signedTransaction(
    payer,
    [getTransferSolInstruction({ source: payer, destination: owner.address, amount: 10n ** 15n })],
    bh,
  );
  for (const tx of [ata, legacy])
    await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
  // The failing one in a later block: the json block fixture holds successful transactions only.
  await waitFor("legacy", async () => statusOf(legacy.signature));
  // A legacy transaction failing with a named InstructionError: a transfer missing its destination.
  const named = await signedTransaction(
    payer,
    [
      {
        programAddress: "11111111111111111111111111111111" as never,
        accounts: [{ address: payer.address, role: 3 }],
        data: new Uint8Array([2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]),
      },
    ],
    bh,
    "legacy",
  );
  for (const tx of [failing, named])
    await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
  Object.assign(sigs, {
    ata: ata.signature,
    legacy: legacy.signature,
    failing: failing.signature,
    named: named.signature,
  });
  await waitFor(
    "finalized",
    async () =>
      (await statusOf(named.signature))?.confirmationStatus === "finalized" &&
      (await statusOf(failing.signature))?.confirmationStatus === "finalized",
  );
});
afterAll(async () => {
  await net?.stop();
});

describe("response shapes against real node output", () => {
  it("getLatestBlockhash, getEpochInfo, getRecentPrioritizationFees", async () => {
    expectShape(await net.call("getLatestBlockhash"), "rpc/getLatestBlockhash.json");
    expectShape(await net.call("getEpochInfo"), "rpc/getEpochInfo.json");
    expectShape(
      await net.call("getRecentPrioritizationFees", [[payer.address]]),
      "rpc/getRecentPrioritizationFees.json",
    );
  });

  it("getSignatureStatuses, successful and failed", async () => {
    expectShape(
      await net.call("getSignatureStatuses", [[sigs.legacy], { searchTransactionHistory: true }]),
      "rpc/getSignatureStatuses_finalized_ok.json",
    );
    expectShape(
      await net.call("getSignatureStatuses", [[sigs.failing]]),
      "rpc/getSignatureStatuses_InstructionError_Custom3012.json",
    );
  });

  it("getTransaction in base64, json and jsonParsed, successful and failed, legacy and v0", async () => {
    const v0 = { encoding: "base64", maxSupportedTransactionVersion: 0 };
    const noLookups = "our v0 transaction uses no address lookup table";
    for (const f of ["getTransaction.json", "getTransaction_v0_success_slot302649801.json"]) {
      expectShape(await net.call("getTransaction", [sigs.ata, v0]), `rpc/${f}`, {
        "$.result.meta.loadedAddresses.readonly": noLookups,
        "$.result.meta.loadedAddresses.writable": noLookups,
        "$.result.meta.preTokenBalances": "the wrapped-SOL token account is created by the transaction itself",
      });
    }
    expectShape(
      await net.call("getTransaction", [sigs.legacy, v0]),
      "rpc/getTransaction_vote_with_transactionIndex_slot432674372.json",
    );
    expectShape(
      await net.call("getTransaction", [sigs.legacy, { encoding: "base64" }]),
      "rpc/getTransaction_base64_slot369139986.json",
    );
    expectShape(
      await net.call("getTransaction", [sigs.failing, v0]),
      "rpc/getTransaction_failed_Custom30_slot303573396.json",
      {
        "$.result.meta.preTokenBalances": "our failing transaction is a SOL transfer: no token accounts",
        "$.result.meta.postTokenBalances": "our failing transaction is a SOL transfer: no token accounts",
      },
    );
    expectShape(
      await net.call("getTransaction", [sigs.named, v0]),
      "rpc/getTransaction_failed_IncorrectProgramId_slot303576101.json",
      { "$.result.meta.innerInstructions": "our failing instruction invokes no other program" },
    );
    expectShape(
      await net.call("getTransaction", [sigs.legacy, { encoding: "json" }]),
      "blocks/get_transaction_json_encoding.json",
    );
    expectShape(
      await net.call("getTransaction", [sigs.legacy, { encoding: "jsonParsed" }]),
      "blocks/get_transaction_json_parsed_encoding.json",
    );
  });

  it("getBlock with full json transactions and with signatures only", async () => {
    const slot = (await statusOf(sigs.legacy)).slot;
    const full = await net.call("getBlock", [slot, { encoding: "json", maxSupportedTransactionVersion: 0 }]);
    // The fixture is a 2022 block (no versions, no v0 transactions): compare our legacy ones.
    full.result.transactions = full.result.transactions.filter((tx: any) => tx.version === "legacy");
    expect(full.result.transactions.length).toBeGreaterThan(0);
    for (const tx of full.result.transactions) delete tx.version;
    // The localnet burns fees whole, no leader share (packages/localnet/README.md): no block rewards.
    const noRewards = { "$.result.rewards": "fees are burned whole: no leader reward" };
    expectShape(full, "blocks/get_block_json_encoding.json", noRewards);
    expectShape(
      await net.call("getBlock", [slot, { transactionDetails: "signatures" }]),
      "rpc/getBlock_transactionDetails_signatures.json",
      noRewards,
    );
  });

  it("sendTransaction preflight failures and simulateTransaction errors", async () => {
    const bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
    const stranger = await generateKeyPairSigner();
    const config = { encoding: "base64", preflightCommitment: "processed" };
    const insufficient = await signedTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: stranger.address, amount: 10n ** 16n })],
      bh,
    );
    expectShape(
      await net.call("sendTransaction", [insufficient.base64, config]),
      "rpc/sendTransaction_-32002_preflight_Custom1_insufficient_lamports.json",
    );
    const unfunded = await signedTransaction(
      stranger,
      [getTransferSolInstruction({ source: stranger, destination: payer.address, amount: 1n })],
      bh,
    );
    const notFound = await net.call("sendTransaction", [unfunded.base64, config]);
    expect(notFound.error.data.err).toBe("AccountNotFound");
    expectShape(notFound, "rpc/sendTransaction_-32002_preflight_AccountNotFound.json");
    const stale = await signedTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: payer.address, amount: 1n })],
      {
        blockhash: "4gmejZCH4Hokk3YWmZfKyV1Y1Yj2rkChnejHmEeLSJ3e",
        lastValidBlockHeight: 0n,
      },
    );
    expectShape(
      await net.call("sendTransaction", [stale.base64, config]),
      "rpc/sendTransaction_-32002_BlockhashNotFound.json",
    );
    // A system transfer missing its destination account: InstructionError MissingAccount.
    const missing = await signedTransaction(
      payer,
      [
        {
          programAddress: "11111111111111111111111111111111" as never,
          accounts: [{ address: payer.address, role: 3 }],
          data: new Uint8Array([2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]),
        },
      ],
      bh,
    );
    const simulated = await net.call("simulateTransaction", [
      missing.base64,
      { encoding: "base64", replaceRecentBlockhash: true, commitment: "confirmed" },
    ]);
    expect(simulated.result.value.err).toEqual({ InstructionError: [0, "MissingAccount"] });
    expectShape(simulated, "rpc/simulateTransaction_err_MissingAccount_apiVersion4.1.0.json");
  });

  it("error shapes: -32005 unhealthy and -32602 WrongSize", async () => {
    expectShape(
      await net.call("getTransaction", ["3vZ67CGoRYkuT76TtpRaKG5PjNTrSAiX4n7Ykn4zBrxp"]),
      "rpc/error_-32602_invalid_param_WrongSize.json",
    );
    await net.handle.control({ lagSlots: 500 });
    try {
      expectShape(await net.call("getHealth"), "rpc/getHealth_error_-32005_node_unhealthy.json");
    } finally {
      await net.handle.control({ lagSlots: 0 });
    }
  });
});
