/**
 * jsonParsed of stake, vote, config and sysvar accounts against agave 4.4.0's own account decoder
 * (`solana-account-decoder`, run by test/decoder-oracle/generate.ts; its answers are committed in
 * expected.json): the localnet's live cluster accounts and sysvars, and crafted variants of every
 * layout (other versions, other states, truncated data, bad JSON). Where agave cannot parse, the
 * localnet must not either (null: the caller falls back to base64). The same oracle answers agave
 * 4.4.0's feature-set identifier (getVersion) and the BLS key solana-test-validator 4.4.0 derives
 * for the localnet's default vote keypair (its vote account's `blsPubkeyCompressed`).
 */
import { createHash, createPrivateKey } from "node:crypto";
import bs58 from "bs58";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseProgramData } from "../../src/accounts/parse-program-data.ts";
import { parseTokenData } from "../../src/accounts/token-parse.ts";
import { deriveBlsPubkey } from "../../src/cluster/bls-key.ts";
import { FEATURE_SET } from "../../src/rpc/params.ts";
import { parseJson, stringifyJson } from "../../src/rpc/json.ts";

const TOKEN_2022 = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";

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
  featureSet: number;
  defaultVoteAccountBls: { seed: string; blsPubkey: string };
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

/** Our parser's answer as agave's would read on the wire (`{program, parsed, space}` or null). */
function ours(c: OracleCase): unknown {
  const data = new Uint8Array(Buffer.from(c.data, "base64"));
  if (c.owner === TOKEN_2022) {
    // Mints only (a token account would need its mint's decimals).
    const token = parseTokenData(data, null);
    return token === null
      ? null
      : parseJson(stringifyJson({ program: "spl-token-2022", parsed: token, space: data.length }));
  }
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
        expect(mine).toEqual(c.expected);
      }
    });
  }
});

describe(`agave 4.4.0's other answers (${oracle.agave}'s oracle)`, () => {
  it("getVersion's feature-set is agave-feature-set 4.4.0's identifier", () => {
    expect(FEATURE_SET).toBe(oracle.featureSet);
  });

  it("the vote account's BLS key is the one solana-test-validator derives from the vote keypair", () => {
    // PKCS#8 wrapper of a raw Ed25519 seed (RFC 8410), as the cluster builds its keys.
    const der = Buffer.concat([
      Buffer.from("302e020100300506032b657004220420", "hex"),
      Buffer.from(oracle.defaultVoteAccountBls.seed, "hex"),
    ]);
    const key = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
    expect(bs58.encode(deriveBlsPubkey(key))).toBe(oracle.defaultVoteAccountBls.blsPubkey);
  });
});
