import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { getBase64Encoder, getCompiledTransactionMessageDecoder, getTransactionDecoder } from "@solana/kit";
import { pricesOfBlock, scanTransaction } from "../../src/fees/block-transactions.ts";
import { costShapeOf, transactionCost } from "../../src/fees/transaction-cost.ts";

const fixture = (path: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/solana/${path}`, import.meta.url), "utf8"));
const block = fixture("blocks/get_block_base64_encoding.json").result;
const v0 = fixture("rpc/getTransaction_v0_success_slot302649801.json").result;
const v0Jupiter = fixture("rpc/getTransaction.json").result;
const vote = fixture("rpc/getTransaction_vote_with_transactionIndex_slot432674372.json").result;
const failed = fixture("rpc/getTransaction_failed_Custom30_slot303573396.json").result;

/** What the scanner must find, worked out with kit's full decoder (independent of the scanner). */
function expectedOf(entry: { transaction: [string, string]; meta: { loadedAddresses?: { writable: string[] } } }) {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(entry.transaction[0]));
  const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes) as unknown as {
    header: { numSignerAccounts: number; numReadonlySignerAccounts: number; numReadonlyNonSignerAccounts: number };
    staticAccounts: string[];
    instructions: { programAddressIndex: number; data?: Uint8Array }[];
  };
  const { numSignerAccounts: s, numReadonlySignerAccounts: rs, numReadonlyNonSignerAccounts: ru } = message.header;
  const keys = message.staticAccounts.map(String);
  const writable = keys.filter((_, i) => i < s - rs || (i >= s && i < keys.length - ru));
  let price = 0n;
  let isVote = false;
  for (const ix of message.instructions) {
    const program = keys[ix.programAddressIndex];
    if (program === "Vote111111111111111111111111111111111111111") isVote = true;
    const data = ix.data ?? new Uint8Array();
    if (program === "ComputeBudget111111111111111111111111111111" && data[0] === 3) {
      price = new DataView(data.buffer, data.byteOffset).getBigUint64(1, true);
    }
  }
  const allWritable = [...writable, ...(entry.meta.loadedAddresses?.writable ?? [])];
  // The cost facts, through the compiled-message path (costShapeOf, as drafts are costed), not the scanner's byte walk.
  const signatures = message.header.numSignerAccounts;
  const shape = costShapeOf({ ...message, staticAccounts: keys }, signatures, allWritable.length);
  const unitLimit = shape.unitLimit;
  const cost = transactionCost(shape);
  return { price, isVote, writable: allWritable, unitLimit, signatures, cost, signature: tx.signatures };
}

const factsOf = (t: {
  price: bigint;
  writable: readonly string[];
  unitLimit?: number;
  signatures?: number;
  cost?: number;
}) => ({
  price: t.price,
  writable: t.writable,
  unitLimit: t.unitLimit,
  signatures: t.signatures,
  cost: t.cost,
});

describe("prices of a block", () => {
  it("reads the real mainnet block: votes left out, prices and write locks as kit decodes them", () => {
    const prices = pricesOfBlock(block);
    const expected = block.transactions.map(expectedOf);
    expect(prices.votes).toBe(expected.filter((e: { isVote: boolean }) => e.isVote).length);
    expect(prices.votes).toBe(2);
    expect(prices.unreadable).toBe(0);
    expect(prices.transactions.map(factsOf)).toEqual(
      expected.filter((e: { isVote: boolean }) => !e.isVote).map(factsOf),
    );
    // The first signature, as a view of the block's bytes, is the transaction's id.
    const firstId = Object.keys(expected.find((e: { isVote: boolean }) => !e.isVote).signature)[0];
    expect(
      Buffer.from(prices.transactions[0].signature!).equals(
        Buffer.from(expected.find((e: { isVote: boolean }) => !e.isVote).signature[firstId]),
      ),
    ).toBe(true);
    expect(prices.transactions.every((t) => t.cost! > t.unitLimit!)).toBe(true);
    expect(prices.transactions.map((t) => t.price).filter((p) => p > 0n)).toEqual([100_000n]);
  });

  it("adds write locks loaded from lookup tables (v0, meta.loadedAddresses.writable)", () => {
    const prices = pricesOfBlock({ transactions: [v0, v0Jupiter, vote, failed] });
    expect(prices.votes).toBe(1);
    expect(prices.transactions).toHaveLength(3);
    for (const [i, entry] of [v0, v0Jupiter, failed].entries()) {
      expect(factsOf(prices.transactions[i])).toEqual(factsOf(expectedOf(entry)));
    }
    expect(prices.transactions[0].writable).toEqual(expect.arrayContaining(v0.meta.loadedAddresses.writable));
    expect(prices.transactions.some((t) => t.price > 0n)).toBe(true);
  });

  it("counts, and never throws on, truncated or foreign transaction bytes", () => {
    const wire = Buffer.from(v0.transaction[0], "base64");
    for (let cut = 0; cut < wire.length; cut += 7) {
      const result = scanTransaction(wire.subarray(0, cut));
      // A cut inside the (unread) lookup section may still scan; anything earlier must not.
      if (result !== undefined) expect(cut).toBeGreaterThan(300);
    }
    const entries = [
      { transaction: [wire.subarray(0, 100).toString("base64"), "base64"] },
      { transaction: ["not base64 at all", "base58"] },
      { transaction: null },
      { transaction: [Buffer.from([1, ...new Uint8Array(64), 0x81]).toString("base64"), "base64"] }, // version 1
    ];
    expect(pricesOfBlock({ transactions: entries })).toEqual({ transactions: [], votes: 0, unreadable: 4 });
  });

  it("rejects a result without a transaction list", () => {
    expect(() => pricesOfBlock({} as never)).toThrow(TypeError);
  });
});
