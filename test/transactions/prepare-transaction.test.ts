/**
 * PrepareTransaction's core against a real localnet: a draft gets a measured compute-unit limit, the
 * asked price, a fresh blockhash and empty signatures; signed by the client it lands and pays
 * exactly the fee announced. Also legacy drafts, drafts with their own budget, failing drafts and
 * v0 drafts that load accounts from a real address lookup table.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  generateKeyPairSigner,
  getTransactionDecoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransaction,
  compressTransactionMessageUsingAddressLookupTables,
} from "@solana/kit";
import type { Address, Instruction, KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import {
  getSetComputeUnitLimitInstruction,
  getSetLoadedAccountsDataSizeLimitInstruction,
} from "@solana-program/compute-budget";
import { createTransactions } from "../../src/transactions/transactions.ts";
import type { Transactions } from "../../src/transactions/transactions.ts";
import { decodeWireTransaction } from "../../src/solana/wire-transaction.ts";
import { computeBudgetOf } from "../../src/solana/compute-budget.ts";
import { loadedAccountsLimitFor } from "../../src/transactions/prepare-transaction.ts";
import { DEFAULT_LOADED_ACCOUNTS_BYTES, costShapeOf, transactionCost } from "../../src/fees/transaction-cost.ts";
import { SolgateError } from "../../src/errors.ts";
import { createLookupTable } from "../fees/on-chain.ts";
import { startChainFixture, transferTransaction } from "./chain-fixture.ts";
import type { ChainFixture } from "./chain-fixture.ts";

let chain: ChainFixture;
let core: Transactions;
let payer: KeyPairSigner;

beforeAll(async () => {
  chain = await startChainFixture();
  core = createTransactions({ upstream: chain.upstream, pollIntervalMs: 25, rebroadcastIntervalMs: 150 });
  core.start();
  payer = await chain.funded(100);
});

afterAll(async () => {
  core?.stop();
  await chain?.stop();
});

/** Signs prepared wire bytes as a wallet would. */
async function sign(wire: Uint8Array, signers: KeyPairSigner[]): Promise<Uint8Array> {
  const tx = getTransactionDecoder().decode(wire);
  const signed = await signTransaction(
    signers.map((s) => s.keyPair),
    tx,
  );
  return new Uint8Array(getTransactionEncoder().encode(signed));
}

/** An unsigned draft (zero signatures) with an old, made-up blockhash. */
function draft(instructions: Instruction[], version: 0 | "legacy" = 0, feePayer: Address = payer.address): Uint8Array {
  const message = pipe(
    createTransactionMessage({ version }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn" as never, lastValidBlockHeight: 0n },
        m,
      ),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)));
}

/** The SetLoadedAccountsDataSizeLimit a compiled message carries, if any. */
const loadedLimitOf = (wire: Uint8Array) =>
  computeBudgetOf(decodeWireTransaction(wire).message).requestedLoadedAccountsBytes;

async function transferTo(lamports = 1_000_000n): Promise<Instruction> {
  const to = (await generateKeyPairSigner()).address;
  return getTransferSolInstruction({ source: payer, destination: to, amount: lamports });
}

describe("PrepareTransaction core on a real localnet", () => {
  it("readies a draft that, once signed, lands paying exactly the expected fee", async () => {
    for (const version of [0, "legacy"] as const) {
      const prepared = await core.prepare({
        wire: draft([await transferTo()], version),
        priorityFee: { kind: "microLamports", microLamports: 50_000n },
      });
      const decoded = decodeWireTransaction(prepared.wire);
      expect(decoded.version).toBe(version);
      expect(decoded.signatures.every((s) => s.every((b) => b === 0))).toBe(true);
      expect(decoded.blockhash).toBe(prepared.blockhash);
      expect(prepared.lastValidBlockHeight).toBeGreaterThan(await chain.upstream.rpc.getBlockHeight().send());
      const budget = computeBudgetOf(decoded.message);
      expect(budget.requestedUnitLimit).toBe(prepared.computeUnitLimit);
      expect(budget.unitPrice).toBe(50_000n);
      // A transfer plus three compute-budget instructions uses 600 units: limit = ceil(600 * 1.1) + 1,000.
      expect(prepared.computeUnitLimit).toBe(1_660);
      expect(prepared.expectedFee).toBe(5_000n + 83n);
      expect(prepared.estimate).toBeUndefined();

      const before = await chain.balance(payer.address);
      const signed = await sign(prepared.wire, [payer]);
      chain.resetCalls();
      const sent = await core.send({ wire: signed });
      // The blockhash came from Solgate moments ago: checking it took no upstream call.
      expect(chain.calls.get("isBlockhashValid") ?? 0).toBe(0);
      expect(sent.state).toMatch(/^(confirmed|finalized)$/);
      expect(sent.fee).toBe(prepared.expectedFee);
      expect(await chain.balance(payer.address)).toBe(before - 1_000_000n - prepared.expectedFee);
    }
  });

  it("keeps the draft's own compute budget unless asked to replace it, and empties signatures", async () => {
    const signed = await transferTransaction({
      payer,
      blockhash: await chain.latestBlockhash(),
      budget: { units: 30_000, microLamports: 42n },
    });
    const kept = await core.prepare({ wire: signed.wire, priorityFee: { kind: "microLamports", microLamports: 9n } });
    expect(kept).toMatchObject({ computeUnitLimit: 30_000, computeUnitPrice: 42n });
    expect(decodeWireTransaction(kept.wire).signatures[0].every((b) => b === 0)).toBe(true);

    const replaced = await core.prepare({
      wire: signed.wire,
      priorityFee: { kind: "microLamports", microLamports: 9n },
      replaceComputeBudget: true,
    });
    expect(replaced).toMatchObject({ computeUnitLimit: 1_660, computeUnitPrice: 9n });
    const instructions = decodeWireTransaction(replaced.wire).message.instructions;
    // The transfer, the price, the limit and the loaded-accounts limit.
    expect(instructions).toHaveLength(4);
  });

  it("asks for the loaded-accounts data its simulation loaded, with a margin, and the transaction lands", async () => {
    const prepared = await core.prepare({
      wire: draft([await transferTo()]),
      priorityFee: { kind: "microLamports", microLamports: 1n },
    });
    const limit = loadedLimitOf(prepared.wire);
    // What the node says the prepared transaction loads, read from the node itself.
    const { value } = await chain.upstream.rpc
      .simulateTransaction(Buffer.from(prepared.wire).toString("base64") as never, {
        encoding: "base64",
        sigVerify: false,
        replaceRecentBlockhash: true,
      })
      .send();
    expect(value.err).toBeNull();
    const loaded = Number(value.loadedAccountsDataSize);
    expect(loaded).toBeGreaterThan(0);
    expect(limit).toBe(loadedAccountsLimitFor(loaded));
    expect(prepared.loadedAccountsDataSizeLimit).toBe(limit);
    expect(limit).toBeGreaterThanOrEqual(2 * loaded);
    expect(limit! % (32 * 1024)).toBe(0);
    // agave's cost model charges the requested size: 8 CU per 32 KiB, 16,384 CU at the 64 MiB default.
    const { message, signatures } = decodeWireTransaction(prepared.wire);
    const shape = costShapeOf(message, signatures.length, 2);
    const saved =
      transactionCost({ ...shape, loadedAccountsBytes: DEFAULT_LOADED_ACCOUNTS_BYTES }) - transactionCost(shape);
    expect(saved).toBe(16_384 - (limit! / (32 * 1024)) * 8);

    const sent = await core.send({ wire: await sign(prepared.wire, [payer]) });
    expect(sent.state).toMatch(/^(confirmed|finalized)$/);
  });

  it("keeps a draft's own loaded-accounts limit, and replaces it when asked", async () => {
    // 128 bytes: less than a transfer loads (64 bytes per account, and the accounts' data), so it fails at load.
    const tight = draft([
      getSetLoadedAccountsDataSizeLimitInstruction({ accountDataSizeLimit: 128 }),
      await transferTo(),
    ]);
    const kept = await core.prepare({ wire: tight }).catch((e: unknown) => e);
    expect((kept as SolgateError).reason).toBe("SIMULATION_FAILED");
    expect((kept as SolgateError).details.errorCode).toBe("MaxLoadedAccountsDataSizeExceeded");

    const replaced = await core.prepare({ wire: tight, replaceComputeBudget: true });
    expect(loadedLimitOf(replaced.wire)).toBeGreaterThan(128);
    const sent = await core.send({ wire: await sign(replaced.wire, [payer]) });
    expect(sent.state).toMatch(/^(confirmed|finalized)$/);

    // A draft with its own compute-unit limit is not simulated, and gets no loaded-accounts limit.
    const own = await core.prepare({
      wire: draft([getSetComputeUnitLimitInstruction({ units: 30_000 }), await transferTo()]),
    });
    expect(own.computeUnitLimit).toBe(30_000);
    expect(loadedLimitOf(own.wire)).toBeUndefined();
    expect(own.loadedAccountsDataSizeLimit).toBeUndefined();
  });

  it("refuses a draft that fails in simulation, with its logs", async () => {
    const poor = await generateKeyPairSigner();
    const doomed = draft(
      [getTransferSolInstruction({ source: poor, destination: payer.address, amount: 1n })],
      0,
      poor.address,
    );
    const error = await core.prepare({ wire: doomed }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SolgateError);
    expect((error as SolgateError).reason).toBe("SIMULATION_FAILED");
    expect((error as SolgateError).details.errorCode).toBe("AccountNotFound");
  });

  it("decompiles a v0 draft through a real address lookup table and keeps it compressed", async () => {
    const recipients = await Promise.all([1, 2, 3].map(() => generateKeyPairSigner()));
    const table = await lookupTableOf(recipients.map((r) => r.address));
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(payer.address, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn" as never, lastValidBlockHeight: 0n },
          m,
        ),
      (m) =>
        appendTransactionMessageInstructions(
          recipients.map((r) =>
            getTransferSolInstruction({ source: payer, destination: r.address, amount: 1_000_000n }),
          ),
          m,
        ),
      (m) => compressTransactionMessageUsingAddressLookupTables(m, { [table]: recipients.map((r) => r.address) }),
    );
    const wire = new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)));
    expect(decodeWireTransaction(wire).message).toHaveProperty("addressTableLookups.length", 1);

    const prepared = await core.prepare({ wire, priorityFee: { kind: "microLamports", microLamports: 1n } });
    const decoded = decodeWireTransaction(prepared.wire);
    expect(decoded.message.version).toBe(0);
    expect((decoded.message as { addressTableLookups?: unknown[] }).addressTableLookups).toHaveLength(1);
    const sent = await core.send({ wire: await sign(prepared.wire, [payer]) });
    expect(sent.state).toMatch(/^(confirmed|finalized)$/);
    expect(sent.fee).toBe(prepared.expectedFee);
    for (const r of recipients) expect(await chain.balance(r.address)).toBe(1_000_000n);
  });
});

describe("PrepareTransaction with a lookup table that is not one", () => {
  /** A v0 draft whose one lookup names `table` (index 0, writable). */
  function throughTable(table: Address): Uint8Array {
    const recipient = "11111111111111111111111111111112" as Address;
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(payer.address, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn" as never, lastValidBlockHeight: 0n },
          m,
        ),
      (m) =>
        appendTransactionMessageInstructions(
          [getTransferSolInstruction({ source: payer, destination: recipient, amount: 1n })],
          m,
        ),
      (m) => compressTransactionMessageUsingAddressLookupTables(m, { [table]: [recipient] }),
    );
    return new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)));
  }

  it("is INVALID_TRANSACTION in Solgate's words, with no library or upstream text", async () => {
    const missing = (await generateKeyPairSigner()).address;
    // A system account with no data (the payer), an executable of another owner (the token program), none at all.
    const cases: [Address, string][] = [
      [payer.address, `account ${payer.address} is not an address lookup table`],
      [
        "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" as Address,
        "account TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA is not an address lookup table",
      ],
      [missing, `address lookup table ${missing} does not exist`],
    ];
    for (const [table, words] of cases) {
      const error = await core.prepare({ wire: throughTable(table) }).catch((e: unknown) => e);
      expect(error, String(error)).toBeInstanceOf(SolgateError);
      const { reason, message } = error as SolgateError;
      expect(reason, message).toBe("INVALID_TRANSACTION");
      // kit's own phrases ("Not all accounts were decoded", "Codec [fixCodecSize] ...") never reach a client.
      expect(message).not.toMatch(
        /Codec|fixCodecSize|SOLANA_ERROR|decoded|Encoded accounts|Contents of these|https?:|127\.0\.0\.1/,
      );
      expect(message).toContain(words);
    }
  });
});

/** Creates and extends a lookup table holding `addresses`; resolves once it can be used. */
async function lookupTableOf(addresses: Address[]): Promise<Address> {
  const table = await createLookupTable(chain.upstream.rpc, payer, addresses);
  // Addresses appended in a slot are usable from the next one.
  await new Promise((r) => setTimeout(r, 100));
  return table;
}
