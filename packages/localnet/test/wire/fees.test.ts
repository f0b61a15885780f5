/**
 * The fee computed from the message must equal what LiteSVM charges: checked against the fee
 * payer's balance change for builtin and non-builtin programs, priced and unpriced, successful
 * and failing transactions.
 */
import { expect, it } from "vitest";
import bs58 from "bs58";
import { LiteSVM } from "litesvm";
import { nativeSvm } from "../../src/chain/litesvm-native.ts";
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Instruction,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { decodeTransaction } from "../../src/wire/decode-transaction.ts";
import { transactionFee } from "../../src/wire/fees.ts";

const programs = [
  "11111111111111111111111111111111",
  "Stake11111111111111111111111111111111111111",
  "AddressLookupTab1e1111111111111111111111111",
  "Ed25519SigVerify111111111111111111111111111",
  "KeccakSecp256k11111111111111111111111111111",
  "Vote111111111111111111111111111111111111111",
  "BPFLoaderUpgradeab1e11111111111111111111111",
  "ZkE1Gama1Proof11111111111111111111111111111",
  "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL",
  "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
  "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
];

it("matches LiteSVM's charge for every instruction mix tried", async () => {
  const svm = nativeSvm(new LiteSVM());
  svm.setBlockhashCheck(false);
  svm.setTransactionHistory(0n);
  const payer = await generateKeyPairSigner();
  const other = await generateKeyPairSigner();
  const payerKey = bs58.decode(payer.address);
  svm.airdrop(payerKey, 1_000_000_000_000n);
  svm.airdrop(bs58.decode(other.address), 1_000_000_000n);
  const blockhash = { blockhash: svm.latestBlockhash(), lastValidBlockHeight: 0n } as never;
  const charge = async (instructions: Instruction[]) => {
    const tx = await signTransactionMessageWithSigners(
      pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
        (m) => appendTransactionMessageInstructions(instructions, m),
      ),
    );
    const bytes = new Uint8Array(getTransactionEncoder().encode(tx));
    const before = svm.getBalance(payerKey)!;
    svm.sendVersionedTransaction(bytes);
    const spent = before - svm.getBalance(payerKey)!;
    return { spent, computed: transactionFee(decodeTransaction(bytes).message) };
  };
  const cases: Instruction[][] = [];
  let n = 0;
  for (const program of programs) {
    const probe = { programAddress: program as never, accounts: [], data: new Uint8Array([0]) };
    cases.push([getSetComputeUnitPriceInstruction({ microLamports: 1_000_003n + BigInt(n++) }), probe]);
    cases.push([probe, getSetComputeUnitPriceInstruction({ microLamports: 77n + BigInt(n++) })]);
  }
  cases.push([getTransferSolInstruction({ source: other, destination: other.address, amount: 1n + BigInt(n++) })]); // two signatures
  cases.push([
    getSetComputeUnitLimitInstruction({ units: 12_345 }),
    getSetComputeUnitPriceInstruction({ microLamports: 999_999n }),
    getTransferSolInstruction({ source: other, destination: payer.address, amount: 10n ** 18n }), // fails, still charged
  ]);
  cases.push([
    getSetComputeUnitLimitInstruction({ units: 5_000_000 }),
    getSetComputeUnitPriceInstruction({ microLamports: 3n }),
  ]);
  cases.push([
    {
      programAddress: "Ed25519SigVerify111111111111111111111111111" as never,
      accounts: [],
      data: new Uint8Array([3, 0]),
    },
  ]);
  let charged = 0;
  for (const instructions of cases) {
    const { spent, computed } = await charge(instructions);
    if (spent === 0n) continue; // not committed (e.g. a program that cannot execute): nothing to compare
    charged++;
    expect(computed, JSON.stringify(instructions.map((i) => i.programAddress))).toBe(spent);
  }
  expect(charged).toBeGreaterThan(cases.length - 4);
});
