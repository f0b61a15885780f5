/**
 * The compute burner (src/programs/compute-burner-program.ts) deployed as `LOCALNET_PROGRAMS` deploys a program and
 * run by real transactions: the units it spends grow by exactly two a turn, a call spends at least what
 * `computeBurnerUnits` says, and a limit under that fails the transaction as the compute meter would.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateKeyPairSigner, type Address } from "@solana/kit";
import { getSetComputeUnitLimitInstruction } from "@solana-program/compute-budget";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { computeBurnerElf, computeBurnerUnits } from "../../src/programs/compute-burner-program.ts";
import { fundedSigner, signedTransaction, startTestLocalnet, type TestLocalnet } from "../helpers.ts";

const SMALL = 1_000;
const LARGE = 90_000;

describe("the compute burner", () => {
  let net: TestLocalnet;
  let small: Address;
  let large: Address;
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "localnet-burner-"));
    const file = (turns: number) => {
      const at = path.join(dir, `burner-${turns}.so`);
      writeFileSync(at, computeBurnerElf(turns));
      return at;
    };
    small = (await generateKeyPairSigner()).address;
    large = (await generateKeyPairSigner()).address;
    net = await startTestLocalnet({
      programs: [
        { address: small, file: file(SMALL) },
        { address: large, file: file(LARGE) },
      ],
    });
  });
  afterAll(async () => {
    await net?.stop();
  });

  const simulate = async (program: Address, limit?: number) => {
    const payer = await fundedSigner(net);
    const { value: bh } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
    const tx = await signedTransaction(
      payer,
      [
        ...(limit === undefined ? [] : [getSetComputeUnitLimitInstruction({ units: limit })]),
        { programAddress: program, accounts: [], data: new Uint8Array() },
      ],
      bh,
    );
    return (await net.call("simulateTransaction", [tx.base64, { encoding: "base64", commitment: "processed" }])).result
      .value as { err: unknown; unitsConsumed: number; logs: string[] };
  };

  it("spends two units a turn, and at least what computeBurnerUnits says", async () => {
    const [a, b] = await Promise.all([simulate(small, 1_400_000), simulate(large, 1_400_000)]);
    expect(a.err).toBeNull();
    expect(b.err).toBeNull();
    expect(b.unitsConsumed - a.unitsConsumed).toBe(2 * (LARGE - SMALL));
    expect(b.unitsConsumed).toBeGreaterThanOrEqual(computeBurnerUnits(LARGE));
    // Only the loader's fixed cost beside the loop (and the compute-budget instruction).
    expect(b.unitsConsumed).toBeLessThan(computeBurnerUnits(LARGE) + 2_000);
    expect(b.logs).toContain(`Program ${large} success`);
  });

  it("fails under a limit below its burn, as the compute meter would", async () => {
    const result = await simulate(large, computeBurnerUnits(LARGE) - 1_000);
    // agave's answer to a program that runs out of meter: ProgramFailedToComplete, the log naming the meter.
    expect(result.err).toEqual({ InstructionError: [1, "ProgramFailedToComplete"] });
    expect(result.logs.join("\n")).toMatch(/exceeded CUs meter/);
  });

  it("refuses turns that do not fit the instruction", () => {
    expect(() => computeBurnerElf(0)).toThrow(/whole number/);
    expect(() => computeBurnerElf(2 ** 31)).toThrow(/whole number/);
  });
});
