import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadRecordedBlocks, parseRecordedBlock } from "../src/recorded-blocks.ts";
import { startLocalnet } from "../src/launcher.ts";
import type { LocalnetHandle } from "../src/launcher.ts";

const FIXTURE = fileURLToPath(
  new URL("../../../test/fixtures/solana/blocks/get_block_base64_encoding.json", import.meta.url),
);
const response = JSON.parse(readFileSync(FIXTURE, "utf8"));
const recorded = response.result;
const SLOT = BigInt(recorded.parentSlot) + 1n;
const clone = () => structuredClone(recorded);

describe("recorded blocks", () => {
  it("parses a real getBlock response, with or without its JSON-RPC envelope", () => {
    const block = parseRecordedBlock(response);
    expect(parseRecordedBlock(recorded)).toEqual(block);
    expect(block).toMatchObject({
      slot: SLOT,
      parentSlot: SLOT - 1n,
      blockHeight: BigInt(recorded.blockHeight),
      blockhash: recorded.blockhash,
    });
    expect(block.transactions).toHaveLength(recorded.transactions.length);
    block.transactions.forEach((record, i) => {
      expect(Buffer.from(record.tx.wire).toString("base64")).toBe(recorded.transactions[i].transaction[0]);
      expect(record.outcome.fee).toBe(BigInt(recorded.transactions[i].meta.fee));
      expect(record.outcome.preBalances).toEqual(recorded.transactions[i].meta.preBalances.map(BigInt));
      expect(record).toMatchObject({ slot: SLOT, index: i });
    });
    expect(block.transactions.map((r) => r.unitPrice).filter((p) => p > 0n)).toEqual([100_000n]);
    // Votes do not count toward the per-slot minimum, as in agave's prioritization fee cache.
    expect(block.minUnitPrice).toBe(0n);
  });

  it("takes the slot from a `slot` field when the file has one", () => {
    expect(parseRecordedBlock({ ...clone(), slot: 147078740 }).slot).toBe(147078740n);
  });

  it("refuses what it cannot serve faithfully, saying where and why", () => {
    const jsonEncoded = clone();
    jsonEncoded.transactions[3].transaction = { message: {}, signatures: [] };
    expect(() => parseRecordedBlock(jsonEncoded, "f.json")).toThrow(/^f\.json: transaction 3: .*encoding "base64"/);
    const noTransactions = clone();
    delete noTransactions.transactions;
    expect(() => parseRecordedBlock(noTransactions, "f.json")).toThrow(/transactionDetails "full"/);
    const badLoaded = clone();
    badLoaded.transactions[0].meta.loadedAddresses.writable = ["So11111111111111111111111111111111111111112"];
    expect(() => parseRecordedBlock(badLoaded, "f.json")).toThrow(/transaction 0: meta.loadedAddresses has 1 writable/);
    const truncated = clone();
    truncated.transactions[1].transaction[0] = truncated.transactions[1].transaction[0].slice(0, 40);
    expect(() => parseRecordedBlock(truncated, "f.json")).toThrow(/transaction 1: transaction does not decode/);
    expect(() => parseRecordedBlock({ jsonrpc: "2.0", id: 1, error: { code: -32004, message: "x" } })).toThrow(
      /JSON-RPC error/,
    );
    expect(() => parseRecordedBlock({ ...clone(), blockhash: "nope" })).toThrow(/blockhash is not a 32-byte hash/);
  });

  it("loads files in slot order and rejects two files for one slot", () => {
    const dir = mkdtempSync(join(tmpdir(), "recorded-"));
    try {
      const later = join(dir, "later.json");
      writeFileSync(later, JSON.stringify({ ...clone(), slot: Number(SLOT) + 5 }));
      const blocks = loadRecordedBlocks([later, FIXTURE]);
      expect(blocks.map((b) => b.slot)).toEqual([SLOT, SLOT + 5n]);
      expect(blocks[1].transactionCount).toBe(BigInt(2 * recorded.transactions.length));
      expect(() => loadRecordedBlocks([FIXTURE, FIXTURE])).toThrow(/two recorded blocks claim slot/);
      expect(() => loadRecordedBlocks([join(dir, "missing.json")])).toThrow(/missing\.json/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a localnet with LOCALNET_BLOCKS", () => {
  let localnet: LocalnetHandle;
  const call = async (method: string, params: unknown[]) => {
    const res = await fetch(localnet.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return (await res.json()) as { result?: Record<string, unknown>; error?: { code: number } };
  };

  beforeAll(async () => {
    localnet = await startLocalnet({ blocks: [FIXTURE] });
  });
  afterAll(async () => {
    await localnet?.stop();
  });

  it("serves the recorded block through getBlock, as recorded, and starts the chain right after it", async () => {
    const { result } = await call("getBlock", [
      Number(SLOT),
      { encoding: "base64", maxSupportedTransactionVersion: 0, commitment: "confirmed" },
    ]);
    expect(result).toMatchObject({
      blockhash: recorded.blockhash,
      previousBlockhash: recorded.previousBlockhash,
      parentSlot: recorded.parentSlot,
      blockHeight: recorded.blockHeight,
      blockTime: recorded.blockTime,
    });
    const transactions = result!.transactions as { transaction: [string, string]; meta: Record<string, unknown> }[];
    expect(transactions.map((t) => t.transaction)).toEqual(
      recorded.transactions.map((t: { transaction: unknown }) => t.transaction),
    );
    transactions.forEach((t, i) => {
      const meta = recorded.transactions[i].meta;
      expect(t.meta).toMatchObject({
        err: meta.err,
        fee: meta.fee,
        loadedAddresses: meta.loadedAddresses,
        logMessages: meta.logMessages,
        preBalances: meta.preBalances,
        postBalances: meta.postBalances,
        status: meta.status,
      });
    });
    const next = await call("getBlock", [
      Number(SLOT) + 1,
      { encoding: "base64", transactionDetails: "signatures", rewards: false },
    ]);
    expect(next.result).toMatchObject({ parentSlot: Number(SLOT) });
    const earlier = await call("getBlock", [Number(SLOT) - 1, { encoding: "base64" }]);
    expect(earlier.error?.code).toBe(-32001); // below the first block held: "cleaned up", as a node answers
  });
});
