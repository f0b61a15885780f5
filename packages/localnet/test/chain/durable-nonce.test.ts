/**
 * agave's durable-nonce rules (agave 4.2: runtime/src/bank/check_transactions.rs, svm/src/
 * transaction_processor.rs `validate_transaction_nonce` / `validate_transaction_fee_payer`,
 * svm/src/rollback_accounts.rs; SIMD-0083, 0191, 0242), against the real localnet with real signed
 * transactions. A fee ladder (pre-signed rungs on one nonce, at most one may land) rests on them:
 * - a transaction is a nonce transaction only when AdvanceNonceAccount is instruction 0 on a static,
 *   writable, System-owned, initialized nonce account that holds the transaction's blockhash, and
 *   the nonce authority signed that instruction; anything else is BlockhashNotFound: not included,
 *   no fee, the nonce unmoved;
 * - an instruction that fails, or an account that fails to load (fees-only), still charges the fee
 *   and advances the nonce (the rollback accounts), so no other rung can land;
 * - a fee payer that cannot pay and stay rent-exempt: not processed, no fee, the nonce unmoved;
 * - two transactions on one nonce in one block: the first runs, the second is dropped uncharged;
 * - the advanced nonce is sha256("DURABLE_NONCE" || the bank's last blockhash), with 5,000
 *   lamports per signature.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { AccountRole, generateKeyPairSigner, type Instruction, type KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import {
  getSetComputeUnitPriceInstruction,
  getSetLoadedAccountsDataSizeLimitInstruction,
} from "@solana-program/compute-budget";
import { NonceState, NonceVersion } from "@solana-program/system";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceOf, fundedSigner, startTestLocalnet, type TestLocalnet } from "../helpers.ts";
import {
  accountFile,
  advance,
  createNonceAccount,
  durableNonceOf,
  EMPTY_RENT,
  expectNeverIncluded,
  landed,
  LOOKUP_TABLE_PROGRAM,
  lookupTableData,
  NONCE_RENT,
  nonceData,
  nonceTransaction,
  randomHash,
  rawAdvance,
  readNonce,
  sendChecked,
  sendUnchecked,
  slotsPass,
  SYSTEM,
} from "./nonce-helpers.ts";

const CONFIG_PROGRAM = "Config1111111111111111111111111111111111111";

let net: TestLocalnet;
let payer: KeyPairSigner;
/** The authority of every nonce account here. */
let authority: KeyPairSigner;
const files = {
  /** A valid nonce account: its stored value and address. */
  valid: { nonce: randomHash(), address: "" },
  /** Nonce layout and value, owned by another program. */
  foreign: { nonce: randomHash(), address: "" },
  /** Owned by the System program, nonce layout, state Uninitialized. */
  uninitialized: { nonce: randomHash(), address: "" },
  /** A legacy-version nonce account (agave only uses current-version ones). */
  legacy: { nonce: randomHash(), address: "" },
  /** A valid nonce with one byte too many: the leader's strict size check refuses it. */
  long: { nonce: randomHash(), address: "" },
  /** A lookup table that holds the valid nonce account's address. */
  table: "",
};
/** Payers that cannot pay: too little for the fee, too little to stay rent-exempt. */
let poor: KeyPairSigner;
let nearRent: KeyPairSigner;
/** A nonce account that pays its own fee but would fall below its rent-exempt minimum. */
let poorNonce: KeyPairSigner;
const poorNonceValue = randomHash();

beforeAll(async () => {
  authority = await generateKeyPairSigner();
  poor = await generateKeyPairSigner();
  nearRent = await generateKeyPairSigner();
  poorNonce = await generateKeyPairSigner();
  const dir = mkdtempSync(path.join(tmpdir(), "localnet-nonce-"));
  const keyed = async (entry: { address: string }) => {
    entry.address = (await generateKeyPairSigner()).address;
  };
  for (const entry of [files.valid, files.foreign, files.uninitialized, files.legacy, files.long]) await keyed(entry);
  files.table = (await generateKeyPairSigner()).address;
  const a = authority.address;
  accountFile(dir, files.valid.address, {
    lamports: NONCE_RENT,
    owner: SYSTEM,
    data: nonceData({ authority: a, nonce: files.valid.nonce }),
  });
  accountFile(dir, files.foreign.address, {
    lamports: NONCE_RENT,
    owner: CONFIG_PROGRAM,
    data: nonceData({ authority: a, nonce: files.foreign.nonce }),
  });
  accountFile(dir, files.uninitialized.address, {
    lamports: NONCE_RENT,
    owner: SYSTEM,
    data: nonceData({ authority: a, nonce: files.uninitialized.nonce, state: NonceState.Uninitialized }),
  });
  accountFile(dir, files.legacy.address, {
    lamports: NONCE_RENT,
    owner: SYSTEM,
    data: nonceData({ authority: a, nonce: files.legacy.nonce, version: NonceVersion.Legacy }),
  });
  accountFile(dir, files.long.address, {
    lamports: NONCE_RENT + 10_000n,
    owner: SYSTEM,
    data: new Uint8Array([...nonceData({ authority: a, nonce: files.long.nonce }), 0]),
  });
  accountFile(dir, files.table, {
    lamports: 10_000_000n,
    owner: LOOKUP_TABLE_PROGRAM,
    data: lookupTableData([files.valid.address]),
  });
  accountFile(dir, poor.address, { lamports: 1000n, owner: SYSTEM, data: new Uint8Array(0) });
  accountFile(dir, nearRent.address, { lamports: EMPTY_RENT + 2000n, owner: SYSTEM, data: new Uint8Array(0) });
  accountFile(dir, poorNonce.address, {
    lamports: NONCE_RENT + 2000n,
    owner: SYSTEM,
    data: nonceData({ authority: a, nonce: poorNonceValue }),
  });
  net = await startTestLocalnet({ accountsDir: dir });
  payer = await fundedSigner(net);
}, 30_000);
afterAll(async () => {
  await net?.stop();
});

/** The confirmed block at `slot` (with its signatures when asked). */
const blockAt = async (slot: number, signatures = false) =>
  (
    await net.call("getBlock", [
      slot,
      {
        commitment: "confirmed",
        transactionDetails: signatures ? "signatures" : "none",
        rewards: false,
        maxSupportedTransactionVersion: 0,
      },
    ])
  ).result;
const to = async () => (await generateKeyPairSigner()).address;
const transfer = async (from: KeyPairSigner, amount: bigint): Promise<Instruction> =>
  getTransferSolInstruction({ source: from, destination: await to(), amount });
const price = (microLamports: bigint) => getSetComputeUnitPriceInstruction({ microLamports });

/**
 * The transaction is not a nonce transaction: preflight refuses it with BlockhashNotFound (nothing
 * processed: no fee), and sent without preflight it never lands, charges nothing and moves no nonce.
 */
async function expectRefused(tx: { base64: string; signature: string }, payerAddress: string, nonceAccount: string) {
  const sent = await sendChecked(net, tx);
  expect(sent.error?.code).toBe(-32002);
  expect(sent.error.message).toBe("Transaction simulation failed: Blockhash not found");
  expect(sent.error.data.err).toBe("BlockhashNotFound");
  expect(sent.error.data.fee).toBeNull();
  const balance = await balanceOf(net, payerAddress);
  const before = (await net.call("getAccountInfo", [nonceAccount, { encoding: "base64" }])).result.value;
  await sendUnchecked(net, tx);
  await slotsPass(net);
  await expectNeverIncluded(net, tx.signature);
  expect(await balanceOf(net, payerAddress)).toBe(balance);
  expect((await net.call("getAccountInfo", [nonceAccount, { encoding: "base64" }])).result.value).toEqual(before);
}

describe("what makes a nonce transaction (anything else is BlockhashNotFound: not included, no fee, no advance)", () => {
  it("AdvanceNonceAccount must be instruction 0", async () => {
    const tx = await nonceTransaction(
      payer,
      [await transfer(payer, 1n), advance(files.valid.address, authority)],
      files.valid.nonce,
    );
    await expectRefused(tx, payer.address, files.valid.address);
  });

  it("the nonce account must be a static key, not one loaded from a lookup table (SIMD-0242)", async () => {
    const tx = await nonceTransaction(payer, [advance(files.valid.address, authority)], files.valid.nonce, {
      [files.table]: [files.valid.address],
    });
    await expectRefused(tx, payer.address, files.valid.address);
  });

  it("the nonce account must be writable in instruction 0", async () => {
    const tx = await nonceTransaction(
      payer,
      [rawAdvance(files.valid.address, AccountRole.READONLY, authority)],
      files.valid.nonce,
    );
    await expectRefused(tx, payer.address, files.valid.address);
  });

  it("the nonce account must be owned by the System program", async () => {
    const tx = await nonceTransaction(payer, [advance(files.foreign.address, authority)], files.foreign.nonce);
    await expectRefused(tx, payer.address, files.foreign.address);
  });

  it("the nonce account must be initialized", async () => {
    const tx = await nonceTransaction(
      payer,
      [advance(files.uninitialized.address, authority)],
      files.uninitialized.nonce,
    );
    await expectRefused(tx, payer.address, files.uninitialized.address);
  });

  it("the nonce account must be of the current version (a legacy one is not verified)", async () => {
    const tx = await nonceTransaction(payer, [advance(files.legacy.address, authority)], files.legacy.nonce);
    await expectRefused(tx, payer.address, files.legacy.address);
  });

  it("its stored nonce must equal the transaction's blockhash", async () => {
    const tx = await nonceTransaction(payer, [advance(files.valid.address, authority)], randomHash());
    await expectRefused(tx, payer.address, files.valid.address);
  });

  it("the nonce authority must sign: another signer in its place does not do", async () => {
    const stranger = await fundedSigner(net, 1_000_000_000n);
    const tx = await nonceTransaction(payer, [advance(files.valid.address, stranger)], files.valid.nonce);
    await expectRefused(tx, payer.address, files.valid.address);
  });

  it("the nonce authority must sign: named in instruction 0 without a signature does not do", async () => {
    const tx = await nonceTransaction(
      payer,
      [rawAdvance(files.valid.address, AccountRole.WRITABLE, authority.address)],
      files.valid.nonce,
    );
    await expectRefused(tx, payer.address, files.valid.address);
  });

  it("a leader also refuses a nonce account whose data is not exactly 80 bytes (strict size check)", async () => {
    const tx = await nonceTransaction(payer, [advance(files.long.address, authority)], files.long.nonce);
    const balance = await balanceOf(net, payer.address);
    const before = await readNonce(net, files.long.address);
    await sendUnchecked(net, tx);
    await slotsPass(net);
    await expectNeverIncluded(net, tx.signature);
    expect(await balanceOf(net, payer.address)).toBe(balance);
    expect(await readNonce(net, files.long.address)).toEqual(before);
  });

  it("when all hold, it lands: the nonce becomes sha256('DURABLE_NONCE' || the parent's blockhash), 5,000 lamports per signature", async () => {
    const tx = await nonceTransaction(
      payer,
      [advance(files.valid.address, authority), await transfer(payer, EMPTY_RENT)],
      files.valid.nonce,
    );
    const sent = await sendChecked(net, tx);
    expect(sent.error).toBeUndefined();
    const record = await landed(net, tx.signature);
    expect(record.meta.err).toBeNull();
    const block = await blockAt(record.slot);
    const after = await readNonce(net, files.valid.address);
    expect(after.nonce).toBe(durableNonceOf(block.previousBlockhash));
    expect(after.lamportsPerSignature).toBe(5000n);
    expect(after.authority).toBe(authority.address);
    expect(after.lamports).toBe(NONCE_RENT);
    // The same transaction again: the nonce moved, so agave's age check (before its status cache) refuses it.
    const again = await sendChecked(net, tx);
    expect(again.error?.data?.err).toBe("BlockhashNotFound");
    // Another rung on the old value: refused by preflight; sent without it, dropped uncharged.
    const rung = await nonceTransaction(
      payer,
      [advance(files.valid.address, authority), price(5_000n), await transfer(payer, EMPTY_RENT)],
      files.valid.nonce,
    );
    await expectRefused(rung, payer.address, files.valid.address);
  });
});

describe("a nonce transaction that fails after loading: fee charged, nonce advanced (the rollback accounts)", () => {
  it("an instruction error lands charged; the advanced nonce refuses every other rung", async () => {
    const nonce = await createNonceAccount(net, payer, authority.address);
    const value = (await readNonce(net, nonce.address)).nonce;
    const failing = await nonceTransaction(
      payer,
      [advance(nonce.address, authority), price(10n), await transfer(payer, 1_000_000_000_000_000n)],
      value,
    );
    const other = await nonceTransaction(
      payer,
      [advance(nonce.address, authority), price(1000n), await transfer(payer, EMPTY_RENT)],
      value,
    );
    // Preflight reports the instruction error, with the fee it would charge.
    const checked = await sendChecked(net, failing);
    expect(checked.error?.data?.err).toEqual({ InstructionError: [2, { Custom: 1 }] });
    const fee = checked.error.data.fee;
    expect(fee).toBeGreaterThan(10000); // two signatures and a priority fee

    const before = await balanceOf(net, payer.address);
    await sendUnchecked(net, failing);
    const record = await landed(net, failing.signature);
    expect(record.meta.err).toEqual({ InstructionError: [2, { Custom: 1 }] });
    expect(record.meta.fee).toBe(fee);
    const status = (await net.call("getSignatureStatuses", [[failing.signature]])).result.value[0];
    expect(status.err).toEqual({ InstructionError: [2, { Custom: 1 }] });
    expect(await balanceOf(net, payer.address)).toBe(before - BigInt(fee));
    const block = await blockAt(record.slot);
    const after = await readNonce(net, nonce.address);
    expect(after.nonce).toBe(durableNonceOf(block.previousBlockhash));
    expect(after.lamportsPerSignature).toBe(5000n);
    expect(after.lamports).toBe(NONCE_RENT);

    // The other rung can never land: preflight refuses it, and sent anyway it is dropped uncharged.
    const refused = await sendChecked(net, other);
    expect(refused.error?.data?.err).toBe("BlockhashNotFound");
    const balance = await balanceOf(net, payer.address);
    await sendUnchecked(net, other);
    await slotsPass(net);
    await expectNeverIncluded(net, other.signature);
    expect(await balanceOf(net, payer.address)).toBe(balance);
  });

  it("when the fee payer is the nonce account, it keeps the advanced nonce and loses the fee", async () => {
    const nonce = await createNonceAccount(net, payer, authority.address, NONCE_RENT + 1_000_000_000n);
    const pre = await readNonce(net, nonce.address);
    // A transfer out of an account that carries data fails in the System program.
    const failing = await nonceTransaction(
      nonce,
      [advance(nonce.address, authority), await transfer(nonce, 1n)],
      pre.nonce,
    );
    await sendUnchecked(net, failing);
    const record = await landed(net, failing.signature);
    expect(record.meta.err).toEqual({ InstructionError: [1, "InvalidArgument"] });
    expect(record.meta.fee).toBe(10000); // two signatures: the nonce account and the authority
    const block = await blockAt(record.slot);
    const after = await readNonce(net, nonce.address);
    expect(after.lamports).toBe(pre.lamports - 10000n);
    expect(after.nonce).toBe(durableNonceOf(block.previousBlockhash));
    expect(after.authority).toBe(authority.address);
    expect(after.lamportsPerSignature).toBe(5000n);
    expect(record.meta.postBalances[0]).toBe(Number(pre.lamports - 10000n));
  });
});

describe("a nonce transaction whose accounts fail to load is fees-only (SIMD-0191): fee charged, nonce advanced", () => {
  const cases: [string, (nonce: string) => Promise<Instruction[]>, string][] = [
    [
      "the loaded-accounts data limit exceeded",
      async () => [getSetLoadedAccountsDataSizeLimitInstruction({ accountDataSizeLimit: 1024 })],
      "MaxLoadedAccountsDataSizeExceeded",
    ],
    [
      "a program account that is not executable",
      async () => [
        { programAddress: (await fundedSigner(net, 1_000_000n)).address, accounts: [], data: new Uint8Array([1]) },
      ],
      "InvalidProgramForExecution",
    ],
  ];
  for (const [what, instructions, error] of cases) {
    it(`${what}: ${error}`, async () => {
      const nonce = await createNonceAccount(net, payer, authority.address);
      const value = (await readNonce(net, nonce.address)).nonce;
      const tx = await nonceTransaction(
        payer,
        [advance(nonce.address, authority), ...(await instructions(nonce.address))],
        value,
      );
      const simulated = (
        await net.call("simulateTransaction", [tx.base64, { encoding: "base64", commitment: "processed" }])
      ).result.value;
      expect(simulated.err).toBe(error);
      expect(simulated.fee).toBe(10000);
      // agave 3.0's size of a fees-only transaction: its rollback accounts' data (the nonce's 80 bytes).
      expect(simulated.loadedAccountsDataSize).toBe(80);
      const before = await balanceOf(net, payer.address);
      await sendUnchecked(net, tx);
      const record = await landed(net, tx.signature);
      expect(record.meta.err).toBe(error);
      expect(record.meta.fee).toBe(10000);
      expect(await balanceOf(net, payer.address)).toBe(before - 10000n);
      const status = (await net.call("getSignatureStatuses", [[tx.signature]])).result.value[0];
      expect(status.err).toBe(error);
      const block = await blockAt(record.slot);
      const after = await readNonce(net, nonce.address);
      expect(after.nonce).toBe(durableNonceOf(block.previousBlockhash));
      expect(after.lamports).toBe(NONCE_RENT);
    });
  }
});

describe("a fee payer that cannot pay the fee and stay rent-exempt: not processed, no fee, no advance", () => {
  const cases: [string, () => KeyPairSigner, () => Promise<{ address: string; nonce: string }>, unknown][] = [
    ["too little for the fee", () => poor, async () => files.valid, "InsufficientFundsForFee"],
    [
      "a System account the fee would leave below its rent-exempt minimum",
      () => nearRent,
      async () => files.valid,
      { InsufficientFundsForRent: { account_index: 0 } },
    ],
    [
      "the nonce account itself, which must keep its rent-exempt minimum",
      () => poorNonce,
      async () => ({ address: poorNonce.address, nonce: poorNonceValue }),
      "InsufficientFundsForFee",
    ],
  ];
  for (const [what, who, which, error] of cases) {
    it(`${what}: ${JSON.stringify(error)}`, async () => {
      const { address } = await which();
      const nonce = await readNonce(net, address);
      const tx = await nonceTransaction(who(), [advance(address, authority)], nonce.nonce);
      const sent = await sendChecked(net, tx);
      expect(sent.error?.code).toBe(-32002);
      expect(sent.error.data.err).toEqual(error);
      expect(sent.error.data.fee).toBeNull();
      const simulated = (
        await net.call("simulateTransaction", [tx.base64, { encoding: "base64", commitment: "processed" }])
      ).result.value;
      expect(simulated.err).toEqual(error);
      expect(simulated.fee).toBeNull();
      const balance = await balanceOf(net, who().address);
      await sendUnchecked(net, tx);
      await slotsPass(net);
      await expectNeverIncluded(net, tx.signature);
      expect(await balanceOf(net, who().address)).toBe(balance);
      expect(await readNonce(net, address)).toEqual(nonce);
    });
  }
});

describe("two transactions on one nonce in one block (SIMD-0083): the first runs, the second is dropped uncharged", () => {
  const cases: [string, bigint][] = [
    ["both would succeed", EMPTY_RENT],
    ["the first fails", 1_000_000_000_000_000n],
  ];
  for (const [what, amount] of cases) {
    it(what, async () => {
      const nonce = await createNonceAccount(net, payer, authority.address);
      const value = (await readNonce(net, nonce.address)).nonce;
      // Rungs of a ladder: the dearer one is first in the block's priority order.
      const cheap = await nonceTransaction(
        payer,
        [advance(nonce.address, authority), price(1_000n), await transfer(payer, amount)],
        value,
      );
      const dear = await nonceTransaction(
        payer,
        [advance(nonce.address, authority), price(1_000_000n), await transfer(payer, amount)],
        value,
      );
      await net.handle.control({ freeze: true });
      const before = await balanceOf(net, payer.address);
      try {
        await sendUnchecked(net, cheap);
        await sendUnchecked(net, dear);
      } finally {
        await net.handle.control({ freeze: false });
      }
      const record = await landed(net, dear.signature);
      await slotsPass(net);
      await expectNeverIncluded(net, cheap.signature);
      const block = await blockAt(record.slot, true);
      expect(block.signatures).toContain(dear.signature);
      expect(block.signatures).not.toContain(cheap.signature);
      expect(record.meta.err === null).toBe(amount === EMPTY_RENT);
      // Charged once, the dear rung's fee.
      expect(await balanceOf(net, payer.address)).toBe(
        before - BigInt(record.meta.fee) - (record.meta.err === null ? amount : 0n),
      );
      expect((await readNonce(net, nonce.address)).nonce).toBe(durableNonceOf(block.previousBlockhash));
    });
  }
});

describe("getFeeForMessage prices a durable-nonce message (agave's load_message_nonce_data)", () => {
  it("answers the fee while the nonce account holds the message's blockhash, null once it moved", async () => {
    const nonce = await createNonceAccount(net, payer, authority.address);
    const value = (await readNonce(net, nonce.address)).nonce;
    const tx = await nonceTransaction(
      payer,
      [advance(nonce.address, authority), price(1_000_000n), await transfer(payer, EMPTY_RENT)],
      value,
    );
    // The message follows the signatures (one byte of count: fewer than 128 of them).
    const wire = Buffer.from(tx.base64, "base64");
    const message = wire.subarray(1 + 64 * wire[0]!).toString("base64");
    const priced = (await net.call("getFeeForMessage", [message, { commitment: "processed" }])).result.value;
    const simulated = (
      await net.call("simulateTransaction", [tx.base64, { encoding: "base64", commitment: "processed" }])
    ).result.value;
    expect(simulated.err).toBeNull();
    expect(priced).toBe(simulated.fee);
    expect(priced).toBeGreaterThan(10000);
    await sendUnchecked(net, tx);
    expect((await landed(net, tx.signature)).meta.fee).toBe(priced);
    expect((await net.call("getFeeForMessage", [message, { commitment: "processed" }])).result.value).toBeNull();
  });
});

describe("an AdvanceNonceAccount instruction in a transaction with a recent blockhash (a client cancelling a ladder)", () => {
  it("advances a nonce last advanced in the block whose parent's blockhash the transaction uses", async () => {
    const nonce = await createNonceAccount(net, payer, authority.address);
    const value = (await readNonce(net, nonce.address)).nonce;
    const rung = await nonceTransaction(payer, [advance(nonce.address, authority), price(1n)], value);
    await sendUnchecked(net, rung);
    const landedRung = await landed(net, rung.signature);
    // That parent's blockhash is still recent: the cancel uses it.
    const parent = (await blockAt(landedRung.slot)).previousBlockhash;
    const cancel = await nonceTransaction(payer, [advance(nonce.address, authority)], parent);
    const sent = await sendChecked(net, cancel);
    expect(sent.error).toBeUndefined();
    const record = await landed(net, cancel.signature);
    expect(record.meta.err).toBeNull();
    expect((await readNonce(net, nonce.address)).nonce).toBe(
      durableNonceOf((await blockAt(record.slot)).previousBlockhash),
    );
  });

  it("fails a second advance in one block (NonceBlockhashNotExpired), whichever recent blockhash it uses", async () => {
    const nonce = await createNonceAccount(net, payer, authority.address);
    // A recent blockhash that is not the next block's parent's.
    const slot = (await net.call("getSlot", [{ commitment: "confirmed" }])).result;
    const older = (await blockAt(slot - 1)).blockhash;
    const first = await nonceTransaction(payer, [advance(nonce.address, authority), price(1_000n)], older);
    const second = await nonceTransaction(payer, [advance(nonce.address, authority), price(1n)], older);
    await net.handle.control({ freeze: true });
    try {
      await sendUnchecked(net, first);
      await sendUnchecked(net, second);
    } finally {
      await net.handle.control({ freeze: false });
    }
    const ran = await landed(net, first.signature);
    const failed = await landed(net, second.signature);
    expect(failed.slot).toBe(ran.slot);
    expect(ran.meta.err).toBeNull();
    expect(failed.meta.err).toEqual({ InstructionError: [0, { Custom: 7 }] });
    expect((await readNonce(net, nonce.address)).nonce).toBe(
      durableNonceOf((await blockAt(ran.slot)).previousBlockhash),
    );
  });
});
