import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Blockhash,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import {
  assertSignaturesValid,
  decodeWireTransaction,
  staticWritableAccounts,
} from "../../src/solana/wire-transaction.ts";
import { computeBudgetOf, transactionFeeLamports } from "../../src/solana/compute-budget.ts";
import { SolgateError } from "../../src/errors.ts";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/solana/blocks/${name}`, import.meta.url), "utf8"));

function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SolgateError);
    return `${(error as SolgateError).reason}: ${(error as Error).message}`;
  }
  throw new Error("expected an error");
}

async function transfer(withBudget: boolean): Promise<Uint8Array> {
  const payer = await generateKeyPairSigner();
  const to = await generateKeyPairSigner();
  const budget = withBudget
    ? [
        getSetComputeUnitLimitInstruction({ units: 1_000 }),
        getSetComputeUnitPriceInstruction({ microLamports: 2_500n }),
      ]
    : [];
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn" as Blockhash, lastValidBlockHeight: 100n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstructions(
        [...budget, getTransferSolInstruction({ source: payer, destination: to.address, amount: 1n })],
        m,
      ),
  );
  const signed = await signTransactionMessageWithSigners(message);
  return Buffer.from(getBase64EncodedWireTransaction(signed), "base64");
}

describe("decodeWireTransaction", () => {
  it("decodes every real mainnet transaction of the recorded block and verifies its signatures", () => {
    const block = fixture("get_block_base64_encoding.json").result;
    expect(block.transactions.length).toBeGreaterThan(0);
    for (const { transaction } of block.transactions) {
      const wire = Buffer.from(transaction[0], "base64");
      const tx = decodeWireTransaction(wire);
      expect(() => assertSignaturesValid(tx)).not.toThrow();
      expect(tx.signers.length).toBe(tx.signatures.length);
    }
  });

  it("names the blockhash and first signature of the recorded transaction", () => {
    const { result } = fixture("get_transaction_base64_encoding.json");
    const tx = decodeWireTransaction(Buffer.from(result.transaction[0], "base64"));
    expect(tx.version).toBe("legacy");
    expect(tx.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{86,88}$/);
    expect(staticWritableAccounts(tx.message)).toContain(tx.signers[0]);
  });

  it("rejects empty, oversized, truncated and trailing-byte input with INVALID_TRANSACTION", async () => {
    const wire = await transfer(false);
    expect(reasonOf(() => decodeWireTransaction(new Uint8Array()))).toMatch(
      /INVALID_TRANSACTION: transaction is empty/,
    );
    expect(reasonOf(() => decodeWireTransaction(new Uint8Array(1233)))).toMatch(/1233 bytes; the limit is 1232/);
    expect(reasonOf(() => decodeWireTransaction(wire.subarray(0, wire.length - 3)))).toMatch(/^INVALID_TRANSACTION/);
    expect(reasonOf(() => decodeWireTransaction(Buffer.concat([wire, Buffer.from([0])])))).toMatch(/trailing/);
    expect(reasonOf(() => decodeWireTransaction(wire.subarray(0, 40)))).toMatch(/truncated/);
  });

  it("rejects a tampered signature and a missing one", async () => {
    const wire = Buffer.from(await transfer(false));
    const good = decodeWireTransaction(wire);
    expect(() => assertSignaturesValid(good)).not.toThrow();
    const flipped = Buffer.from(wire);
    flipped[5] ^= 1;
    expect(reasonOf(() => assertSignaturesValid(decodeWireTransaction(flipped)))).toMatch(/does not verify/);
    const zeroed = Buffer.from(wire);
    zeroed.fill(0, 1, 65);
    expect(reasonOf(() => assertSignaturesValid(decodeWireTransaction(zeroed)))).toMatch(/is missing/);
  });

  it("survives 20,000 random mutations with either a decoded transaction or INVALID_TRANSACTION", async () => {
    const wire = await transfer(true);
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    let rejected = 0;
    for (let i = 0; i < 20_000; i++) {
      const copy = Buffer.from(wire);
      for (let j = 0; j < 1 + random() * 4; j++) copy[Math.floor(random() * copy.length)] = Math.floor(random() * 256);
      const cut = random() < 0.2 ? copy.subarray(0, Math.floor(random() * copy.length)) : copy;
      try {
        assertSignaturesValid(decodeWireTransaction(cut));
      } catch (error) {
        expect((error as SolgateError).reason).toBe("INVALID_TRANSACTION");
        rejected++;
      }
    }
    expect(rejected).toBeGreaterThan(19_000);
  });
});

describe("computeBudgetOf", () => {
  it("reads the price and limit a transaction sets and computes its fee", async () => {
    const tx = decodeWireTransaction(await transfer(true));
    const budget = computeBudgetOf(tx.message);
    expect(budget).toMatchObject({
      unitPrice: 2_500n,
      requestedUnitLimit: 1_000,
      unitLimit: 1_000,
      requestedLoadedAccountsBytes: undefined,
    });
    expect(transactionFeeLamports(1, budget)).toBe(5_000n + 3n); // ceil(2500 * 1000 / 1e6) = 3
  });

  it("falls back to the default limit for the instructions when none is set", async () => {
    const tx = decodeWireTransaction(await transfer(false));
    const budget = computeBudgetOf(tx.message);
    expect(budget).toMatchObject({ unitPrice: 0n, requestedUnitLimit: undefined, unitLimit: 3_000 });
    expect(transactionFeeLamports(1, budget)).toBe(5_000n);
  });
});
