import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeTransactionError, isTransactionErrorNamed } from "../../src/transactions/transaction-error.ts";
import { observeStatus } from "../../src/transactions/transaction-status.ts";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/solana/rpc/${name}`, import.meta.url), "utf8"));

describe("describeTransactionError (real node output)", () => {
  it("reads a Custom instruction error from a mainnet getSignatureStatuses", () => {
    const status = fixture("getSignatureStatuses_InstructionError_Custom3012.json").result.value[0];
    const error = describeTransactionError(status.err);
    expect(error).toEqual({
      code: "InstructionError",
      message: "instruction 2 failed: custom program error: 0xbc4",
      instructionIndex: 2,
      customCode: 3012,
      raw: { InstructionError: [2, { Custom: 3012 }] },
    });
  });

  it("reads a named instruction error from a failed mainnet getTransaction", () => {
    const { err } = fixture("getTransaction_failed_IncorrectProgramId_slot303576101.json").result.meta;
    const error = describeTransactionError(err);
    expect(error.code).toBe("InstructionError");
    expect(error.instructionIndex).toBe(0);
    expect(error.customCode).toBeUndefined();
    expect(error.message).toBe("instruction 0 failed: incorrect program id");
  });

  it("reads the preflight error of a real insufficient-lamports transfer", () => {
    const { err } = fixture("sendTransaction_-32002_preflight_Custom1_insufficient_lamports.json").error.data;
    expect(describeTransactionError(err)).toMatchObject({ instructionIndex: 0, customCode: 1 });
  });

  it("handles bare names, account-index payloads and bigints as kit parses them", () => {
    expect(describeTransactionError("BlockhashNotFound").code).toBe("BlockhashNotFound");
    expect(describeTransactionError("SomeFutureError").message).toBe("some future error");
    expect(describeTransactionError({ InsufficientFundsForRent: { account_index: 2n } })).toEqual({
      code: "InsufficientFundsForRent",
      message: "insufficient funds for rent (account 2)",
      raw: { InsufficientFundsForRent: { account_index: 2 } },
    });
    expect(describeTransactionError({ InstructionError: [1n, { Custom: 6001n }] })).toMatchObject({
      instructionIndex: 1,
      customCode: 6001,
      raw: { InstructionError: [1, { Custom: 6001 }] },
    });
    expect(isTransactionErrorNamed("AlreadyProcessed", "AlreadyProcessed")).toBe(true);
    expect(isTransactionErrorNamed({ InstructionError: [0, "X"] }, "AlreadyProcessed")).toBe(false);
  });
});

describe("observeStatus (real node output)", () => {
  it("maps a finalized success and a finalized failure", () => {
    const ok = fixture("getSignatureStatuses_finalized_ok.json").result.value[0];
    expect(observeStatus({ ...ok, slot: BigInt(ok.slot) })).toEqual({
      state: "finalized",
      slot: 361781236n,
      landed: true,
    });
    const failed = fixture("getSignatureStatuses_InstructionError_Custom3012.json").result.value[0];
    const observed = observeStatus({ ...failed, slot: BigInt(failed.slot) });
    expect(observed.state).toBe("failed");
    expect(observed.error?.customCode).toBe(3012);
  });

  it("keeps a processed transaction submitted, whatever its error", () => {
    expect(observeStatus({ slot: 5n, err: null, confirmationStatus: "processed" }).state).toBe("submitted");
    expect(observeStatus({ slot: 5n, err: "X", confirmationStatus: "processed" }).state).toBe("submitted");
    expect(observeStatus({ slot: 5n, err: null, confirmationStatus: "confirmed" }).state).toBe("confirmed");
  });
});
