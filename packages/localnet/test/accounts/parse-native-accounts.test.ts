/**
 * jsonParsed of stake, vote, config and sysvar accounts against agave 3.0.6's own account decoder
 * (`solana-account-decoder`, run by test/decoder-oracle/generate.ts; its answers are committed in
 * expected.json): the localnet's live cluster accounts and sysvars, and crafted variants of every
 * layout (other versions, other states, truncated data, bad JSON). Where agave cannot parse, the
 * localnet must not either (null: the caller falls back to base64).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseProgramData } from "../../src/accounts/parse-program-data.ts";
import { parseJson, stringifyJson } from "../../src/rpc/json.ts";

interface OracleCase {
  name: string;
  pubkey: string;
  owner: string;
  data: string;
  expected?: unknown;
  expectedSha256?: string;
}

const oracle = parseJson(readFileSync(new URL("../decoder-oracle/expected.json", import.meta.url), "utf8")) as {
  agave: string;
  cases: OracleCase[];
};

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/**
 * Where agave 4.4.0's decoder answers differently from the 3.0.6 oracle, its answer derived from the
 * oracle's by 4.4.0's `parse_sysvar.rs` (read in the crate's source; the oracle itself is not yet
 * rebuilt on 4.4, see the README): Rent shows only `lamportsPerByte`, the same first u64 the 3.0
 * decoder named `lamportsPerByteYear` (SIMD-0194); the stake config account no longer parses (4.4's
 * `parse_config` parses validator info only), so it falls back to base64 (null here).
 */
function as44(c: OracleCase): unknown {
  const e = c.expected as { program: string; space: number; parsed: { type: string; info: Record<string, unknown> } };
  if (c.pubkey === "SysvarRent111111111111111111111111111111111" && e !== null && e !== undefined) {
    return { ...e, parsed: { type: "rent", info: { lamportsPerByte: e.parsed.info.lamportsPerByteYear } } };
  }
  if (
    c.pubkey === "StakeConfig11111111111111111111111111111111" &&
    c.owner === "Config1111111111111111111111111111111111111"
  ) {
    return null;
  }
  return c.expected;
}

/** Our parser's answer as agave's would read on the wire (`{program, parsed, space}` or null). */
function ours(c: OracleCase): unknown {
  const data = new Uint8Array(Buffer.from(c.data, "base64"));
  const parsed = parseProgramData(c.owner, data, c.pubkey);
  return parsed === null
    ? null
    : parseJson(stringifyJson({ program: parsed.program, parsed: parsed.parsed, space: data.length }));
}

describe(`jsonParsed against ${oracle.agave}`, () => {
  it("covers the cluster's accounts, every sysvar and the crafted layouts", () => {
    const owners = new Set(oracle.cases.map((c) => c.owner));
    for (const owner of [
      "Vote111111111111111111111111111111111111111",
      "Stake11111111111111111111111111111111111111",
      "Config1111111111111111111111111111111111111",
      "Sysvar1111111111111111111111111111111111111",
    ]) {
      expect(owners).toContain(owner);
    }
    expect(oracle.cases.length).toBeGreaterThan(20);
  });

  for (const c of oracle.cases) {
    it(c.name, () => {
      const mine = ours(c);
      if (c.expectedSha256 !== undefined) {
        expect(
          createHash("sha256")
            .update(stringifyJson(sortKeys(mine)))
            .digest("hex"),
        ).toBe(c.expectedSha256);
      } else {
        expect(mine).toEqual(as44(c));
      }
    });
  }
});
