import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
} from "@solana/kit";
import type { Address, Blockhash, Instruction } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { pricesOfBlock, scanTransaction } from "../../src/fees/block-transactions.ts";
import { tipOfWire } from "../../src/fees/block-tips.ts";
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

describe("tips in a block", () => {
  const TIP_ACCOUNTS = new Set([
    "96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5",
    "HFqU5x63VTqvQss8hp11i4wVV8bD44PvwucfZ2bU7gRe",
    "Cw8CFyM9FkoMi7K7Crf6HNQqf4uEMzpKw6QNghXLvLkY",
    "ADaUMid9yfUytqMBgopwjb2DTLSokTSzL1zt6iGPaS49",
    "DfXygSm4jCyNCybVYYK6DwvWqjKee8pbDmJGcLWNDXjh",
    "ADuUkR4vqLUMWXxW9gh6D6L8pMSawimctcNZ5pGwDcEt",
    "DttWaMuVvTiduZRnguLF7jNxTgiMBZ1hyAumKUiL2KRL",
    "3AVi9Tg9Uo68tJfuvoKvqKNWKkC5wPdSSdeBnizKZ6jT",
  ]);

  /** Tips as kit's full decoder sees them: top-level System transfers (index 2) to a static tip account. */
  function tipOf(base64: string): bigint {
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
    const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes) as unknown as {
      staticAccounts: string[];
      instructions: { programAddressIndex: number; accountIndices?: number[]; data?: Uint8Array }[];
    };
    const keys = message.staticAccounts.map(String);
    let tip = 0n;
    for (const ix of message.instructions) {
      const data = ix.data ?? new Uint8Array();
      const to = keys[ix.accountIndices?.[1] ?? keys.length];
      if (keys[ix.programAddressIndex] !== "11111111111111111111111111111111") continue;
      if (data.length !== 12 || new DataView(data.buffer, data.byteOffset).getUint32(0, true) !== 2) continue;
      if (to !== undefined && TIP_ACCOUNTS.has(to))
        tip += new DataView(data.buffer, data.byteOffset).getBigUint64(4, true);
    }
    return tip;
  }

  it("finds every Jito tip of the real mainnet block, as kit's decoder does, and nothing else", () => {
    const entries = (block.transactions as { transaction: [string, string] }[]).filter(
      (e) => !scanTransaction(Buffer.from(e.transaction[0], "base64"))!.isVote,
    );
    const expected = entries.map((e) => tipOf(e.transaction[0]));
    const found = pricesOfBlock(block).transactions.map((t) => t.tip ?? 0n);
    // This block holds no tip: a scanner that saw tips in other transfers would fail here.
    expect(found).toEqual(expected);
  });

  it("sums top-level transfers to tip accounts; other transfers and other System instructions are not tips", async () => {
    const payer = await generateKeyPairSigner();
    const other = await generateKeyPairSigner();
    const tipAccount = address("HFqU5x63VTqvQss8hp11i4wVV8bD44PvwucfZ2bU7gRe");
    const wire = (instructions: Instruction[]) => {
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) =>
          setTransactionMessageLifetimeUsingBlockhash(
            { blockhash: "11111111111111111111111111111111" as Blockhash, lastValidBlockHeight: 1n },
            m,
          ),
        (m) => appendTransactionMessageInstructions(instructions, m),
      );
      return new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)));
    };
    const transfer = (to: Address, amount: bigint) =>
      getTransferSolInstruction({ source: payer, destination: to, amount });
    expect(tipOfWire(wire([transfer(tipAccount, 5_000n)]))).toBe(5_000n);
    expect(
      tipOfWire(wire([transfer(tipAccount, 5_000n), transfer(other.address, 7n), transfer(tipAccount, 1_000n)])),
    ).toBe(6_000n);
    expect(tipOfWire(wire([transfer(other.address, 5_000n)]))).toBe(0n);
    // Assign (System instruction 1) naming a tip account: not a transfer.
    const assign = { ...transfer(tipAccount, 5_000n), data: new Uint8Array([1, 0, 0, 0, ...new Uint8Array(8)]) };
    expect(tipOfWire(wire([assign]))).toBe(0n);
    // Truncated bytes never throw and never make a tip up.
    const whole = wire([transfer(tipAccount, 5_000n)]);
    for (let cut = 0; cut < whole.length; cut++) expect([0n, 5_000n]).toContain(tipOfWire(whole.subarray(0, cut)));
  });
});
