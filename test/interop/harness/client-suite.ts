/**
 * The part of the Go and Rust tests that is the same: run the built client against the shared
 * gateway with a draft of its own, and check its report — every check passed, the tally agrees,
 * and every RPC of the contract was exercised.
 */
import { expect, inject } from "vitest";
import { buildBundleDraft, buildDraft } from "./chain-fixture.ts";
import { describeFailures, parseReport, run } from "./processes.ts";
import type { ClientReport } from "./processes.ts";
import { uncovered } from "./rpcs.ts";

/** Runs `binary` and asserts its report. `draftIndex` keeps each client's transaction distinct. */
export async function expectClientPasses(binary: string, draftIndex: number): Promise<ClientReport> {
  const ctx = inject("interop");
  const draft = await buildDraft(ctx.localnetUrl, ctx.chain.payerSeed, draftIndex);
  const result = await run(binary, [], {
    env: {
      ...ctx.env,
      INTEROP_DRAFT_TX: Buffer.from(draft).toString("hex"),
      INTEROP_BUNDLE_TX: Buffer.from(await buildBundleDraft(ctx.localnetUrl, ctx.chain.payerSeed, draftIndex)).toString(
        "hex",
      ),
    },
    timeoutMs: 240_000,
  });
  const report = parseReport(result.stdout);
  console.log(`${binary}: ${report.passed} passed, ${report.failed} failed in ${result.ms} ms\n${result.stdout}`);
  expect(report.failed, describeFailures(report, result)).toBe(0);
  expect(report.complete, `no closing tally:\n${result.stdout}\n${result.stderr}`).toBe(true);
  expect(result.code, describeFailures(report, result)).toBe(0);
  expect(uncovered(report.checks.map((c) => c.name))).toEqual([]);
  return report;
}
