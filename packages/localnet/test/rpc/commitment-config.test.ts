/**
 * Methods whose config agave types as `Option<CommitmentConfig>` directly (not a context config):
 * its one field has no serde default, so `{}` is refused with "missing field `commitment`", while
 * null, absent and `{commitment}` are accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestLocalnet, type TestLocalnet } from "../helpers.ts";

const WSOL = "So11111111111111111111111111111111111111112";
let net: TestLocalnet;
beforeAll(async () => {
  net = await startTestLocalnet();
}, 30_000);
afterAll(async () => {
  await net?.stop();
});

const CALLS: Array<[string, unknown[]]> = [
  ["getTokenSupply", [WSOL]],
  ["getTokenLargestAccounts", [WSOL]],
  ["getTokenAccountBalance", [WSOL]],
  ["getMinimumBalanceForRentExemption", [0]],
  ["getInflationGovernor", []],
];

describe("Option<CommitmentConfig> params", () => {
  for (const [method, params] of CALLS) {
    it(`${method} refuses {} and takes {commitment}`, async () => {
      expect((await net.call(method, [...params, {}])).error).toEqual({
        code: -32602,
        message: "Invalid params: missing field `commitment`.",
      });
      const ok = await net.call(method, [...params, { commitment: "confirmed" }]);
      expect(ok.error?.message ?? "").not.toMatch(/missing field/);
      const bare = await net.call(method, [...params, null]);
      expect(bare.error?.message ?? "").not.toMatch(/missing field/);
    });
  }
});
