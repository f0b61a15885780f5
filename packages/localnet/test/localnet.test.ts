/**
 * The localnet end to end through the launcher, driven by @solana/kit clients: airdrops,
 * transfers confirmed over PubSub, SPL tokens, fees (also on failed transactions), de-duplication,
 * the blockhash window, getBlock / getTransaction encodings and prioritization fees.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertIsTransactionWithBlockhashLifetime,
  generateKeyPairSigner,
  getSignatureFromTransaction,
  lamports,
  sendAndConfirmTransactionFactory,
  signTransactionMessageWithSigners,
  createTransactionMessage,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  appendTransactionMessageInstructions,
  compileTransactionMessage,
  getCompiledTransactionMessageEncoder,
  type Address,
  type Signature,
} from "@solana/kit";
import { getCreateAccountInstruction, getTransferSolInstruction } from "@solana-program/system";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import {
  TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getCreateAssociatedTokenInstructionAsync,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  getTransferInstruction,
} from "@solana-program/token";
import { stringifyJson } from "../src/rpc/json.ts";
import bs58 from "bs58";
import {
  balanceOf,
  fundedSigner,
  signedTransaction,
  startTestLocalnet,
  waitFor,
  type TestLocalnet,
} from "./helpers.ts";

let net: TestLocalnet;
beforeAll(async () => {
  net = await startTestLocalnet();
});
afterAll(async () => {
  await net?.stop();
});

const processedBlockhash = async () => (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;

async function landed(signature: string, level: "processed" | "confirmed" | "finalized" = "confirmed") {
  const order = ["processed", "confirmed", "finalized"];
  return waitFor(`${signature} ${level}`, async () => {
    const s = (await net.call("getSignatureStatuses", [[signature]])).result.value[0];
    return s && order.indexOf(s.confirmationStatus) >= order.indexOf(level) ? s : null;
  });
}

/** Waits for `n` more slots at processed commitment. */
async function slotsPass(n: number) {
  const start = (await net.call("getSlot", [{ commitment: "processed" }])).result as number;
  await waitFor(
    `${n} slots`,
    async () => ((await net.call("getSlot", [{ commitment: "processed" }])).result as number) >= start + n,
  );
}

describe("localnet with kit clients", () => {
  it("airdrops and transfers SOL, confirmed by sendAndConfirmTransactionFactory over PubSub", async () => {
    const alice = await fundedSigner(net, 2_000_000_000n);
    const bob = await generateKeyPairSigner();
    expect(await balanceOf(net, alice.address)).toBe(2_000_000_000n);
    const blockhash = (await net.rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value;
    const tx = await signTransactionMessageWithSigners(
      pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(alice, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
        (m) =>
          appendTransactionMessageInstructions(
            [getTransferSolInstruction({ source: alice, destination: bob.address, amount: 123_456_789n })],
            m,
          ),
      ),
    );
    assertIsTransactionWithBlockhashLifetime(tx);
    await sendAndConfirmTransactionFactory({ rpc: net.rpc, rpcSubscriptions: net.subscriptions })(tx, {
      commitment: "confirmed",
    });
    expect(await balanceOf(net, bob.address)).toBe(123_456_789n);
    expect(await balanceOf(net, alice.address)).toBe(2_000_000_000n - 123_456_789n - 5000n);
    const status = (await net.rpc.getSignatureStatuses([getSignatureFromTransaction(tx)]).send()).value[0];
    expect(status?.err).toBeNull();
    expect(["confirmed", "finalized"]).toContain(status?.confirmationStatus);
  });

  it("creates a mint and token accounts with @solana-program/token and records token balances", async () => {
    const payer = await fundedSigner(net);
    const mint = await generateKeyPairSigner();
    const holder = await generateKeyPairSigner();
    const rent = await net.rpc.getMinimumBalanceForRentExemption(BigInt(getMintSize())).send();
    const [payerAta] = await findAssociatedTokenPda({
      mint: mint.address,
      owner: payer.address,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const [holderAta] = await findAssociatedTokenPda({
      mint: mint.address,
      owner: holder.address,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const send = sendAndConfirmTransactionFactory({ rpc: net.rpc, rpcSubscriptions: net.subscriptions });
    const run = async (instructions: Parameters<typeof appendTransactionMessageInstructions>[0]) => {
      const blockhash = (await net.rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value;
      const tx = await signTransactionMessageWithSigners(
        pipe(
          createTransactionMessage({ version: 0 }),
          (m) => setTransactionMessageFeePayerSigner(payer, m),
          (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
          (m) => appendTransactionMessageInstructions(instructions, m),
        ),
      );
      assertIsTransactionWithBlockhashLifetime(tx);
      await send(tx, { commitment: "confirmed" });
      return getSignatureFromTransaction(tx);
    };
    await run([
      getCreateAccountInstruction({
        payer,
        newAccount: mint,
        lamports: rent,
        space: getMintSize(),
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: payer.address }),
      await getCreateAssociatedTokenInstructionAsync({ payer, mint: mint.address, owner: payer.address }),
      await getCreateAssociatedTokenInstructionAsync({ payer, mint: mint.address, owner: holder.address }),
      getMintToInstruction({ mint: mint.address, token: payerAta, mintAuthority: payer, amount: 5_000_000n }),
    ]);
    const signature = await run([
      getTransferInstruction({ source: payerAta, destination: holderAta, authority: payer, amount: 1_250_000n }),
    ]);
    const tx = await net.rpc
      .getTransaction(signature, { commitment: "confirmed", encoding: "json", maxSupportedTransactionVersion: 0 })
      .send();
    expect(tx?.meta?.err).toBeNull();
    const post = tx!.meta!.postTokenBalances!;
    const byOwner = Object.fromEntries(post.map((b) => [b.owner, b.uiTokenAmount]));
    expect(byOwner[payer.address]).toEqual({ amount: "3750000", decimals: 6, uiAmount: 3.75, uiAmountString: "3.75" });
    expect(byOwner[holder.address]).toEqual({ amount: "1250000", decimals: 6, uiAmount: 1.25, uiAmountString: "1.25" });
    expect(tx!.meta!.preTokenBalances!.find((b) => b.owner === holder.address)?.uiTokenAmount.amount).toBe("0");
    expect(post.every((b) => b.mint === mint.address && b.programId === TOKEN_PROGRAM_ADDRESS)).toBe(true);
  });

  it("charges 5000 * signatures + ceil(price * limit / 1e6), also on failed transactions", async () => {
    const payer = await fundedSigner(net, 1_000_000_000n);
    const cosigner = await fundedSigner(net, 1_000_000_000n);
    const recipient = await generateKeyPairSigner();
    const bh = await processedBlockhash();
    // Fails (InstructionError Custom 1): skipPreflight so it lands and pays.
    const failing = await signedTransaction(
      payer,
      [
        getSetComputeUnitLimitInstruction({ units: 30_001 }),
        getSetComputeUnitPriceInstruction({ microLamports: 333_333n }),
        getTransferSolInstruction({ source: payer, destination: recipient.address, amount: 10n ** 15n }),
      ],
      bh,
    );
    const before = await balanceOf(net, payer.address);
    const sent = await net.call("sendTransaction", [failing.base64, { encoding: "base64", skipPreflight: true }]);
    expect(sent.result).toBe(failing.signature);
    const status = await landed(failing.signature, "confirmed");
    expect(status.err).toEqual({ InstructionError: [2, { Custom: 1 }] });
    const expectedFee = 5000n + (333_333n * 30_001n + 999_999n) / 1_000_000n;
    expect(before - (await balanceOf(net, payer.address))).toBe(expectedFee);
    const record = await net.rpc
      .getTransaction(failing.signature as Signature, {
        commitment: "confirmed",
        encoding: "json",
        maxSupportedTransactionVersion: 0,
      })
      .send();
    expect(record?.meta?.fee).toBe(expectedFee);
    expect(record?.meta?.status).toEqual({ Err: { InstructionError: [2n, { Custom: 1n }] } });

    // Two signatures, default limit (three builtin instructions: 3 * 3,000 CU) and a price.
    const bh2 = await processedBlockhash();
    const twoSigners = await signedTransaction(
      payer,
      [
        getSetComputeUnitPriceInstruction({ microLamports: 1_000_000n }),
        getTransferSolInstruction({ source: cosigner, destination: recipient.address, amount: 1_000_000n }),
        getTransferSolInstruction({ source: payer, destination: recipient.address, amount: 1_000_000n }),
      ],
      bh2,
    );
    const payerBefore = await balanceOf(net, payer.address);
    await net.call("sendTransaction", [twoSigners.base64, { encoding: "base64", preflightCommitment: "processed" }]);
    await landed(twoSigners.signature);
    const fee = 2n * 5000n + 9_000n;
    expect(payerBefore - (await balanceOf(net, payer.address))).toBe(fee + 1_000_000n);
    const meta = (
      await net.call("getTransaction", [
        twoSigners.signature,
        { commitment: "confirmed", maxSupportedTransactionVersion: 0 },
      ])
    ).result.meta;
    expect(BigInt(meta.fee)).toBe(fee);
    expect(BigInt(meta.preBalances[0]) - BigInt(meta.postBalances[0])).toBe(fee + 1_000_000n);
  });

  it("never executes a transaction twice (AlreadyProcessed in preflight, silent with skipPreflight)", async () => {
    const payer = await fundedSigner(net, 1_000_000_000n);
    const recipient = await generateKeyPairSigner();
    const tx = await signedTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: recipient.address, amount: 5_000_000n })],
      await processedBlockhash(),
    );
    // Twice before the next slot: one execution.
    // Default preflight commitment is finalized, like agave: a processed blockhash is not known there yet.
    const early = await net.call("sendTransaction", [tx.base64, { encoding: "base64" }]);
    expect(early.error.data.err).toBe("BlockhashNotFound");
    const [a, b] = await Promise.all([
      net.call("sendTransaction", [tx.base64, { encoding: "base64", preflightCommitment: "processed" }]),
      net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]),
    ]);
    expect(a.result).toBe(tx.signature);
    expect(b.result).toBe(tx.signature);
    await landed(tx.signature, "processed");
    const again = await net.call("sendTransaction", [
      tx.base64,
      { encoding: "base64", preflightCommitment: "processed" },
    ]);
    expect(again.error.code).toBe(-32002);
    expect(again.error.message).toBe("Transaction simulation failed: This transaction has already been processed");
    expect(again.error.data.err).toBe("AlreadyProcessed");
    const skipped = await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
    expect(skipped.result).toBe(tx.signature);
    const sim = await net.call("simulateTransaction", [tx.base64, { encoding: "base64", commitment: "processed" }]);
    expect(sim.result.value.err).toBe("AlreadyProcessed");
    await slotsPass(3);
    expect(await balanceOf(net, recipient.address)).toBe(5_000_000n);
  });

  it("keeps a 151-block blockhash window and answers BlockhashNotFound after it", async () => {
    const payer = await fundedSigner(net, 1_000_000_000n);
    const { value } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
    const { value: height } = { value: await net.rpc.getBlockHeight({ commitment: "processed" }).send() };
    expect(value.lastValidBlockHeight - height).toBeLessThanOrEqual(150n);
    expect(value.lastValidBlockHeight - height).toBeGreaterThanOrEqual(145n);
    const tx = await signedTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: payer.address, amount: 1n })],
      value,
    );
    expect((await net.rpc.isBlockhashValid(value.blockhash, { commitment: "processed" }).send()).value).toBe(true);
    await waitFor(
      "expiry",
      async () => (await net.rpc.getBlockHeight({ commitment: "processed" }).send()) > value.lastValidBlockHeight,
      20_000,
    );
    expect((await net.rpc.isBlockhashValid(value.blockhash, { commitment: "processed" }).send()).value).toBe(false);
    const sent = await net.call("sendTransaction", [
      tx.base64,
      { encoding: "base64", preflightCommitment: "processed" },
    ]);
    expect(sent.error).toMatchObject({ code: -32002, message: "Transaction simulation failed: Blockhash not found" });
    expect(sent.error.data).toMatchObject({ err: "BlockhashNotFound", logs: [], unitsConsumed: 0, accounts: null });
    // Skipping preflight: accepted, never lands.
    expect((await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }])).result).toBe(
      tx.signature,
    );
    await slotsPass(3);
    expect(
      (await net.call("getSignatureStatuses", [[tx.signature], { searchTransactionHistory: true }])).result.value,
    ).toEqual([null]);
  }, 30_000);

  it("reports prioritization fees per slot as agave computes them", async () => {
    const payer = await fundedSigner(net, 1_000_000_000n);
    const hot = await generateKeyPairSigner();
    const other = await generateKeyPairSigner();
    const bh = await processedBlockhash();
    const priced = (price: bigint, to: Address, amount: bigint) =>
      signedTransaction(
        payer,
        [
          getSetComputeUnitPriceInstruction({ microLamports: price }),
          getTransferSolInstruction({ source: payer, destination: to, amount }),
        ],
        bh,
      );
    const txs = await Promise.all([
      priced(300n, hot.address, 1_000_000n),
      priced(100n, hot.address, 1_000_001n),
      priced(50n, other.address, 1_000_002n),
    ]);
    await net.handle.control({ freeze: true });
    for (const tx of txs) await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
    await net.handle.control({ freeze: false });
    // agave's cache takes a block once it is optimistically confirmed.
    const status = await landed(txs[0]!.signature, "confirmed");
    const slot = BigInt(status.slot);
    const at = async (accounts: string[]) =>
      (await net.rpc.getRecentPrioritizationFees(accounts as Address[]).send()).find((f) => f.slot === slot)
        ?.prioritizationFee;
    expect(await at([hot.address])).toBe(100n); // max(block min 50, hot's min 100)
    expect(await at([])).toBe(50n);
    expect(await at([payer.address])).toBe(50n);
    expect(await at([(await generateKeyPairSigner()).address])).toBe(50n);
    const fees = await net.rpc.getRecentPrioritizationFees().send();
    expect(fees.length).toBeLessThanOrEqual(150);
    expect(fees.every((f, i) => i === 0 || f.slot > fees[i - 1]!.slot)).toBe(true);
  });

  it("serves getBlock in every encoding and detail level, with agave's version rule", async () => {
    const payer = await fundedSigner(net, 1_000_000_000n);
    const tx = await signedTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: payer.address, amount: 1n })],
      await processedBlockhash(),
    );
    await net.call("sendTransaction", [tx.base64, { encoding: "base64", preflightCommitment: "processed" }]);
    const slot = BigInt((await landed(tx.signature, "confirmed")).slot);
    const noVersion = await net.call("getBlock", [slot, { commitment: "confirmed" }]);
    expect(noVersion.error.code).toBe(-32015);
    const block = await net.rpc.getBlock(slot, { commitment: "confirmed", maxSupportedTransactionVersion: 0 }).send();
    expect(block?.transactions.map((t) => t.transaction.signatures[0])).toContain(tx.signature);
    expect(block?.blockHeight).toBe(slot);
    const parent = await net.rpc
      .getBlock(slot - 1n, { commitment: "confirmed", maxSupportedTransactionVersion: 0, transactionDetails: "none" })
      .send();
    expect(block?.previousBlockhash).toBe(parent?.blockhash);
    const signatures = await net.rpc
      .getBlock(slot, { commitment: "confirmed", transactionDetails: "signatures" })
      .send();
    expect(signatures?.signatures).toContain(tx.signature);
    for (const encoding of ["base64", "base58", "jsonParsed"] as const) {
      const b = await net.call("getBlock", [
        slot,
        { commitment: "confirmed", encoding, maxSupportedTransactionVersion: 0 },
      ]);
      // The test's own transaction: by signature, or by its wire bytes in that encoding (which must round-trip).
      const wire = Buffer.from(tx.base64, "base64");
      const own = encoding === "base64" ? tx.base64 : encoding === "base58" ? bs58.encode(wire) : undefined;
      const entry = b.result.transactions.find((t: any) =>
        encoding === "jsonParsed"
          ? t.transaction.signatures[0] === tx.signature
          : t.transaction[1] === encoding && t.transaction[0] === own,
      );
      expect(entry, `${encoding}: our transaction is not in the block as sent`).toBeDefined();
      expect(entry.version).toBe(0);
    }
    const accounts = await net.call("getBlock", [
      slot,
      { commitment: "confirmed", transactionDetails: "accounts", maxSupportedTransactionVersion: 0, rewards: false },
    ]);
    expect(accounts.result.rewards).toBeUndefined();
    expect(accounts.result.transactions[0].transaction.accountKeys[0]).toMatchObject({
      signer: true,
      writable: true,
      source: "transaction",
    });
    const future = await net.call("getBlock", [slot + 100_000n]);
    expect(future.error).toEqual({ code: -32004, message: `Block not available for slot ${slot + 100_000n}` });
    const processed = await net.call("getBlock", [slot, { commitment: "processed" }]);
    expect(processed.error).toEqual({ code: -32602, message: "Method does not support commitment below `confirmed`" });
    const blocks = await net.rpc.getBlocks(slot - 2n, slot, { commitment: "confirmed" }).send();
    expect(blocks).toEqual([slot - 2n, slot - 1n, slot]);
  });

  it("computes getFeeForMessage like the charged fee, null for an unknown blockhash", async () => {
    const payer = await generateKeyPairSigner();
    const message = (blockhash: { blockhash: string; lastValidBlockHeight: bigint }) =>
      Buffer.from(
        getCompiledTransactionMessageEncoder().encode(
          compileTransactionMessage(
            pipe(
              createTransactionMessage({ version: 0 }),
              (m) => setTransactionMessageFeePayerSigner(payer, m),
              (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash as never, m),
              (m) =>
                appendTransactionMessageInstructions(
                  [
                    getSetComputeUnitLimitInstruction({ units: 10_000 }),
                    getSetComputeUnitPriceInstruction({ microLamports: 2_500_000n }),
                    getTransferSolInstruction({ source: payer, destination: payer.address, amount: 1n }),
                  ],
                  m,
                ),
            ),
          ),
        ),
      ).toString("base64");
    const fee = await net.call("getFeeForMessage", [message(await processedBlockhash()), { commitment: "processed" }]);
    expect(BigInt(fee.result.value)).toBe(5000n + 25_000n);
    const unknown = await net.call("getFeeForMessage", [
      message({ blockhash: "11111111111111111111111111111111", lastValidBlockHeight: 0n }),
      { commitment: "processed" },
    ]);
    expect(unknown.result.value).toBeNull();
  });

  it("simulates with accounts, replaced blockhash, inner instructions and signature checks", async () => {
    const payer = await fundedSigner(net, 1_000_000_000n);
    const to = await generateKeyPairSigner();
    const stale = { blockhash: "11111111111111111111111111111111", lastValidBlockHeight: 0n };
    const tx = await signedTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: to.address, amount: 7_000_000n })],
      stale,
    );
    const plain = await net.call("simulateTransaction", [tx.base64, { encoding: "base64", commitment: "processed" }]);
    expect(plain.result.value.err).toBe("BlockhashNotFound");
    const replaced = await net.call("simulateTransaction", [
      tx.base64,
      {
        encoding: "base64",
        commitment: "processed",
        replaceRecentBlockhash: true,
        innerInstructions: true,
        accounts: { addresses: [to.address], encoding: "base64" },
      },
    ]);
    const value = replaced.result.value;
    expect(value.err, stringifyJson(value)).toBeNull();
    expect(value.replacementBlockhash.blockhash).not.toBe(stale.blockhash);
    expect(BigInt(value.accounts[0].lamports)).toBe(7_000_000n);
    expect(BigInt(value.fee)).toBe(5000n);
    expect(value.logs).toContain("Program 11111111111111111111111111111111 success");
    expect(BigInt(value.unitsConsumed)).toBe(150n);
    expect(value.innerInstructions).toEqual([]);
    expect(
      (
        await net.call("simulateTransaction", [
          tx.base64,
          { encoding: "base64", replaceRecentBlockhash: true, sigVerify: true },
        ])
      ).error,
    ).toEqual({
      code: -32602,
      message: "sigVerify may not be used with replaceRecentBlockhash",
    });
    const good = await signedTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: to.address, amount: 1_000_000n })],
      await processedBlockhash(),
    );
    const bytes = Buffer.from(good.base64, "base64");
    bytes[10]! ^= 0xff; // corrupt the signature
    const forged = bytes.toString("base64");
    const verified = await net.call("simulateTransaction", [
      forged,
      { encoding: "base64", sigVerify: true, commitment: "processed" },
    ]);
    // agave 4.4: the simulation's error, not -32003 (shapes in test/rpc/transaction-methods.test.ts).
    expect(verified.result.value.err).toBe("SignatureFailure");
    const sent = await net.call("sendTransaction", [forged, { encoding: "base64", preflightCommitment: "processed" }]);
    expect(sent.error.code).toBe(-32002);
    expect(sent.error.data.err).toBe("SignatureFailure");
    expect(
      (await net.call("simulateTransaction", [forged, { encoding: "base64", commitment: "processed" }])).result.value
        .err,
    ).toBeNull();
  });

  it("answers minContextSlot beyond the context with -32016", async () => {
    const res = await net.call("getSlot", [{ commitment: "processed", minContextSlot: 10_000_000 }]);
    expect(res.error.code).toBe(-32016);
    expect(res.error.message).toBe("Minimum context slot has not been reached");
    expect(typeof res.error.data.contextSlot).toBe("number");
    const ok = await net.rpc.getLatestBlockhash({ commitment: "processed", minContextSlot: 0n }).send();
    expect(ok.value.blockhash.length).toBeGreaterThan(30);
  });

  it("answers the smaller chain methods through kit", async () => {
    expect(await net.rpc.getHealth().send()).toBe("ok");
    const version = await net.rpc.getVersion().send();
    expect(typeof version["solana-core"]).toBe("string");
    const epoch = await net.rpc.getEpochInfo({ commitment: "processed" }).send();
    expect(epoch.absoluteSlot).toBeGreaterThan(0n);
    expect(epoch.slotIndex).toBeLessThan(epoch.slotsInEpoch);
    await waitFor("40 slots", async () => (await net.rpc.getSlot({ commitment: "processed" }).send()) > 40n);
    // kit's default commitment is confirmed; the node's default (finalized) needs a raw call.
    const finalized = BigInt((await net.call("getSlot")).result);
    const processed = await net.rpc.getSlot({ commitment: "processed" }).send();
    expect(processed - finalized).toBeGreaterThanOrEqual(30n);
    const confirmed = await net.rpc.getSlot({ commitment: "confirmed" }).send();
    expect(confirmed).toBeLessThanOrEqual(processed);
    expect(confirmed).toBeGreaterThan(finalized);
    const samples = await net.rpc.getRecentPerformanceSamples(3).send();
    expect(samples.length).toBeGreaterThan(0);
    expect(samples[0]!.numSlots).toBeGreaterThan(0n);
    expect(samples.every((s) => s.numNonVoteTransactions === s.numTransactions)).toBe(true); // no votes here
    expect(samples.reduce((n, s) => n + s.numTransactions, 0n)).toBeGreaterThan(0n);
    const sig = await net.rpc.requestAirdrop((await generateKeyPairSigner()).address, lamports(1n)).send();
    expect(typeof sig).toBe("string");
  });
});
