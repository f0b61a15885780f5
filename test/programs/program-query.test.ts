import { describe, expect, it } from "vitest";
import { getBase58Decoder } from "@solana/kit";
import { readFileSync } from "node:fs";
import { MAX_FILTERS, normalizeQuery, toRpcFilters } from "../../src/programs/program-query.ts";
import type { ProgramAccountsQuery } from "../../src/programs/program-query.ts";
import { programCursors } from "../../src/programs/program-accounts.ts";
import { SolgateError } from "../../src/errors.ts";

const { encode: encodeCursor, decode: decodeCursor } = programCursors;
const TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const OWNER = "vines1vzrYbzLMRdu58ou5XTby4qAqVRLmqo36NKPTg";

function rejection(query: Partial<ProgramAccountsQuery>): SolgateError {
  try {
    normalizeQuery({ programId: TOKEN, ...query });
  } catch (e) {
    expect(e).toBeInstanceOf(SolgateError);
    return e as SolgateError;
  }
  throw new Error(`accepted ${JSON.stringify(query, (_k, v) => (typeof v === "bigint" ? `${v}` : v))}`);
}

describe("query validation", () => {
  it("accepts a seed-style query and builds the node's filters", () => {
    const q = normalizeQuery({ programId: TOKEN, size: 165n, match: [`0:${USDC}`, `32:${OWNER}`], limit: 0 });
    expect(q.limit).toBe(100);
    expect(toRpcFilters(q)).toEqual([
      { dataSize: 165n },
      { memcmp: { offset: 0n, bytes: USDC, encoding: "base58" } },
      { memcmp: { offset: 32n, bytes: OWNER, encoding: "base58" } },
    ]);
  });

  it("rejects a bad programId as INVALID_ADDRESS", () => {
    for (const programId of ["", "not-base58!", "3yZe7d", `${TOKEN}A`, "0OIl".repeat(11)]) {
      const e = rejection({ programId });
      expect(e.reason).toBe("INVALID_ADDRESS");
      expect(e.details.field).toBe("programId");
    }
  });

  it.each([
    ["missing colon", `0${USDC}`],
    ["negative offset", `-1:${USDC}`],
    ["fractional offset", `1.5:${USDC}`],
    ["offset beyond the largest account", `10485761:${USDC}`],
    ["bad base58", "0:0OIl"],
    ["empty bytes", "0:"],
    ["over 128 bytes", `0:${"z".repeat(176)}`],
  ])("rejects a match with %s as INVALID_PARAMETER", (_name, match) => {
    const e = rejection({ match: [match] });
    expect(e.reason).toBe("INVALID_PARAMETER");
    expect(e.details.field).toBe("match");
  });

  it("accepts 128 bytes of match and refuses 129", () => {
    const base58 = getBase58Decoder();
    const of = (n: number) => `0:${base58.decode(new Uint8Array(n).fill(255))}`;
    expect(normalizeQuery({ programId: TOKEN, match: [of(128)] }).matches[0].bytes).toBe(of(128).slice(2));
    expect(rejection({ match: [of(129)] }).details.field).toBe("match");
  });

  it("rejects size out of range", () => {
    expect(rejection({ size: -1n }).details.field).toBe("size");
    expect(rejection({ size: 10_485_761n }).details.field).toBe("size");
    expect(normalizeQuery({ programId: TOKEN, size: 10_485_760n }).size).toBe(10_485_760n);
    expect(normalizeQuery({ programId: TOKEN, size: 0n }).size).toBe(0n);
  });

  it("rejects more than 4 filters in total", () => {
    const four = [`0:${USDC}`, `32:${OWNER}`, "64:2", "72:3"];
    expect(normalizeQuery({ programId: TOKEN, match: four }).matches).toHaveLength(4);
    expect(rejection({ match: four, size: 165n }).details.field).toBe("match");
    expect(rejection({ match: [...four, "100:4"] }).details.field).toBe("match");
  });

  it("is documented with the bound it enforces: the contract, the OpenAPI document and calls.md", () => {
    const proto = readFileSync("proto/solgate/v1/program_service.proto", "utf8");
    expect(proto).toContain(`(at most ${MAX_FILTERS} filters in all, \`size\` and \`match\` together`);
    expect(proto).not.toMatch(/at most \d+\)/); // an older, per-match bound
    expect(readFileSync("gen/openapi/solgate.openapi.json", "utf8")).toContain(`at most ${MAX_FILTERS} filters in all`);
    expect(readFileSync("docs/calls.md", "utf8")).toContain(
      `Up to ${MAX_FILTERS} filters in all, \`size\` and \`match\` entries together`,
    );
  });

  it("rejects limits outside 1-500", () => {
    for (const limit of [-1, 501, 1.5, Number.NaN]) expect(rejection({ limit }).details.field).toBe("limit");
    expect(normalizeQuery({ programId: TOKEN, limit: 500 }).limit).toBe(500);
    expect(normalizeQuery({ programId: TOKEN, limit: 1 }).limit).toBe(1);
  });

  it("hashes the selected account set, not its spelling or the page size", () => {
    const a = normalizeQuery({ programId: TOKEN, match: [`32:${OWNER}`, `0:${USDC}`], limit: 10 });
    const b = normalizeQuery({ programId: TOKEN, match: [`0:${USDC}`, `32:${OWNER}`, `0:${USDC}`], limit: 200 });
    const c = normalizeQuery({ programId: TOKEN, match: [`0:${USDC}`], size: 165n });
    expect(a.hash.equals(b.hash)).toBe(true);
    expect(a.hash.equals(c.hash)).toBe(false);
  });
});

describe("page cursors", () => {
  const query = normalizeQuery({ programId: TOKEN, match: [`0:${USDC}`] });
  const other = normalizeQuery({ programId: TOKEN, match: [`32:${OWNER}`] });

  it("round-trips the last address of a page, in base64url", () => {
    const cursor = encodeCursor(query.hash, OWNER);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, query.hash)).toBe(OWNER);
  });

  it("refuses a cursor of another query", () => {
    const cursor = encodeCursor(other.hash, OWNER);
    expect(() => decodeCursor(cursor, query.hash)).toThrow(/another query/);
  });

  it("refuses tampered and malformed cursors with field cursor", () => {
    const cursor = encodeCursor(query.hash, OWNER);
    const bytes = Buffer.from(cursor, "base64url");
    bytes[30] ^= 1;
    for (const bad of [bytes.toString("base64url"), cursor.slice(0, -2), "!!!", `${cursor}AAAA`, "a".repeat(72)]) {
      try {
        decodeCursor(bad, query.hash);
        throw new Error(`accepted ${bad}`);
      } catch (e) {
        expect((e as SolgateError).reason).toBe("INVALID_PARAMETER");
        expect((e as SolgateError).details.field).toBe("cursor");
      }
    }
  });
});
