import { describe, expect, it } from "vitest";
import { SolgateError } from "../../src/errors.ts";
import { parsePriorityFee, priceOfChoice } from "../../src/transactions/priority-fee.ts";
import { assertIsTransactionSignature } from "../../src/transactions/transactions.ts";

function reason(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SolgateError);
    return (error as SolgateError).reason;
  }
  return "no error";
}

describe("parsePriorityFee", () => {
  it("defaults to auto and accepts every named level and exact prices", () => {
    expect(parsePriorityFee(undefined)).toEqual({ kind: "level", level: "auto" });
    expect(parsePriorityFee({ level: "" })).toEqual({ kind: "level", level: "auto" });
    for (const level of ["auto", "low", "medium", "high"]) {
      expect(parsePriorityFee({ level })).toEqual({ kind: "level", level });
    }
    expect(parsePriorityFee({ microLamports: 0n })).toEqual({ kind: "microLamports", microLamports: 0n });
    expect(parsePriorityFee({ microLamports: 2n ** 64n - 1n }).kind).toBe("microLamports");
  });

  it("refuses unknown levels, both choices at once and out-of-range prices", () => {
    expect(reason(() => parsePriorityFee({ level: "veryHigh" }))).toBe("INVALID_PARAMETER");
    expect(reason(() => parsePriorityFee({ level: "7" }))).toBe("INVALID_PARAMETER");
    expect(reason(() => parsePriorityFee({ level: "low", microLamports: 1n }))).toBe("INVALID_PARAMETER");
    expect(reason(() => parsePriorityFee({ microLamports: -1n }))).toBe("INVALID_PARAMETER");
    expect(reason(() => parsePriorityFee({ microLamports: 2n ** 64n }))).toBe("INVALID_PARAMETER");
  });

  it("prices a level through the fee market and an exact price as itself", () => {
    const asked: unknown[] = [];
    const pricer = {
      priceFor(level: string, writable: readonly string[]) {
        asked.push([level, writable]);
        return level === "high" ? 900n : undefined;
      },
    };
    expect(priceOfChoice({ kind: "level", level: "high" }, pricer, ["A"])).toBe(900n);
    expect(priceOfChoice({ kind: "level", level: "low" }, pricer, ["A"])).toBeUndefined();
    expect(priceOfChoice({ kind: "level", level: "low" }, undefined, ["A"])).toBeUndefined();
    expect(priceOfChoice({ kind: "microLamports", microLamports: 5n }, pricer, [])).toBe(5n);
    expect(asked).toEqual([
      ["high", ["A"]],
      ["low", ["A"]],
    ]);
  });
});

describe("assertIsTransactionSignature", () => {
  it("accepts a 64-byte base58 signature and refuses everything else", () => {
    const good = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";
    expect(() => assertIsTransactionSignature(good)).not.toThrow();
    for (const bad of ["", "0OIl", good.slice(0, 40), `${good}1`, "x".repeat(200), `${good.slice(0, -1)}!`]) {
      expect(reason(() => assertIsTransactionSignature(bad))).toBe("INVALID_PARAMETER");
    }
  });
});
