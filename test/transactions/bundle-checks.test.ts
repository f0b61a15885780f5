/**
 * The pure bundle checks on real signed transactions (kit's encodings): sizes, duplicates, and what counts as
 * a tip. The checks with their reads, against the localnet's block engine, are in bundles.test.ts.
 */
import { describe, expect, it } from "vitest";
import { address, generateKeyPairSigner } from "@solana/kit";
import type { Blockhash } from "@solana/kit";
import { getTransferSolWithSeedInstruction } from "@solana-program/system";
import { isSolgateError } from "../../src/errors.ts";
import { assertTipped, decodeBundle } from "../../src/transactions/bundle-checks.ts";
import { transferTransaction } from "./chain-fixture.ts";

const blockhash = { blockhash: "11111111111111111111111111111111" as Blockhash, lastValidBlockHeight: 1n };
const tip = address("HFqU5x63VTqvQss8hp11i4wVV8bD44PvwucfZ2bU7gRe");
const tips = new Set<string>([tip]);

function reasonOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return isSolgateError(error) ? error.reason : String(error);
  }
}

describe("bundle checks", () => {
  it("takes 1 to 5 transactions and no duplicate", async () => {
    const payer = await generateKeyPairSigner();
    const one = await transferTransaction({ payer, blockhash });
    expect(reasonOf(() => decodeBundle([]))).toBe("BUNDLE_TOO_LARGE");
    expect(reasonOf(() => decodeBundle(Array(6).fill(one.wire)))).toBe("BUNDLE_TOO_LARGE");
    expect(reasonOf(() => decodeBundle([one.wire, one.wire]))).toBe("BUNDLE_DUPLICATE_TRANSACTION");
    expect(decodeBundle([one.wire]).map((tx) => tx.signature)).toEqual([one.signature]);
  });

  it("counts a Transfer and a TransferWithSeed to a tip account of at least 1,000 lamports, as the localnet does", async () => {
    const payer = await generateKeyPairSigner();
    const small = decodeBundle([(await transferTransaction({ payer, blockhash, to: tip, lamports: 999n })).wire]);
    expect(reasonOf(() => assertTipped(small, tips, [[]]))).toBe("BUNDLE_NO_TIP");
    const transfer = decodeBundle([(await transferTransaction({ payer, blockhash, to: tip, lamports: 1_000n })).wire]);
    expect(reasonOf(() => assertTipped(transfer, tips, [[]]))).toBeUndefined();
    const withSeed = getTransferSolWithSeedInstruction({
      source: (await generateKeyPairSigner()).address,
      baseAccount: payer,
      destination: tip,
      amount: 5_000n,
      fromSeed: "tips",
      fromOwner: address("11111111111111111111111111111111"),
    });
    const seeded = decodeBundle([
      (await transferTransaction({ payer, blockhash, lamports: 1n, extra: [withSeed] })).wire,
    ]);
    expect(reasonOf(() => assertTipped(seeded, tips, [[]]))).toBeUndefined();
    expect(reasonOf(() => assertTipped(transfer, tips, [[tip]]))).toBe("BUNDLE_TIP_IN_LOOKUP_TABLE");
  });
});
