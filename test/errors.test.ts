/** The error catalogue: its table in docs/errors.md, and the one mapping to the wire. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema, RetryInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { ERROR_REASONS, SolgateError, httpStatusOf, reasonOf, toConnectError } from "../src/errors.ts";
import type { ErrorReason } from "../src/errors.ts";
import { codeName } from "../src/server/interceptors.ts";

/** The rows of docs/errors.md's table under "# Errors": reason, code, status, meaning. */
function readmeErrorRows(): string[][] {
  const readme = readFileSync(new URL("../docs/errors.md", import.meta.url), "utf8");
  const section = readme.split(/^# /m).find((s) => s.startsWith("Errors\n"));
  if (section === undefined) throw new Error("docs/errors.md has no # Errors section");
  return section
    .split("\n")
    .filter((l) => l.startsWith("|"))
    .slice(2) // header and separator
    .map((l) =>
      l
        .slice(1, -1)
        .split("|")
        .map((c) => c.trim()),
    );
}

describe("docs/errors.md error table", () => {
  const rows = readmeErrorRows();
  const unquote = (s: string) => s.replace(/^`|`$/g, "");

  it("lists every catalogue reason, with its code, HTTP status and meaning", () => {
    for (const [reason, spec] of Object.entries(ERROR_REASONS)) {
      const row = rows.find((r) => unquote(r[0]) === reason);
      expect(row, `docs/errors.md row for ${reason}`).toBeDefined();
      expect(unquote(row![1])).toBe(codeName(spec.code).toUpperCase());
      expect(Number(row![2])).toBe(spec.httpStatus);
      expect(row![3]).toBe(spec.description);
    }
  });

  it("lists nothing that is not in the catalogue, and each reason once", () => {
    const reasons = rows.map((r) => unquote(r[0]));
    expect(new Set(reasons).size).toBe(reasons.length);
    expect(reasons.sort()).toEqual(Object.keys(ERROR_REASONS).sort());
  });
});

describe("toConnectError", () => {
  it("maps a SolgateError to its code with ErrorInfo metadata flattened to strings", () => {
    const err = toConnectError(
      new SolgateError("SIMULATION_FAILED", "transaction failed in simulation", {
        logs: ["Program 111 invoke [1]", "Program 111 failed"],
        unitsConsumed: 150n,
        error: { InstructionError: [0, { Custom: 1 }] },
        note: "plain",
        digits: "123",
        skipped: undefined,
      }),
    );
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.rawMessage).toBe("transaction failed in simulation");
    const info = err.findDetails(ErrorInfoSchema)[0];
    expect(info.reason).toBe("SIMULATION_FAILED");
    expect(info.domain).toBe("solgate");
    expect(info.metadata).toEqual({
      logs: '["Program 111 invoke [1]","Program 111 failed"]',
      unitsConsumed: "150",
      error: '{"InstructionError":[0,{"Custom":1}]}',
      note: "plain",
      // A string that would read as JSON is encoded, so that it comes back a string, not a number.
      digits: '"123"',
    });
    expect(err.findDetails(RetryInfoSchema)).toEqual([]);
    expect(reasonOf(err)).toBe("SIMULATION_FAILED");
    expect(httpStatusOf(err)).toBe(422);
  });

  it("adds RetryInfo to retryable reasons, with a default delay", () => {
    for (const reason of ["UPSTREAM_UNAVAILABLE", "RATE_LIMITED"] as ErrorReason[]) {
      const err = toConnectError(new SolgateError(reason, "later"));
      expect(err.findDetails(RetryInfoSchema)[0].retryDelay?.seconds).toBe(1n);
    }
    expect(toConnectError(new SolgateError("UPSTREAM_UNAVAILABLE", "x")).code).toBe(Code.Unavailable);
    expect(toConnectError(new SolgateError("RATE_LIMITED", "x")).code).toBe(Code.ResourceExhausted);
  });

  it("passes a ConnectError through unchanged", () => {
    const original = new ConnectError("deadline", Code.DeadlineExceeded);
    expect(toConnectError(original)).toBe(original);
    expect(httpStatusOf(original)).toBe(504);
  });

  it("turns anything else into a generic INTERNAL and reports the original", () => {
    const seen: unknown[] = [];
    const bug = new RangeError("index 7 out of range in secret table");
    const err = toConnectError(bug, (e) => seen.push(e));
    expect(err.code).toBe(Code.Internal);
    expect(err.rawMessage).toBe("internal error");
    expect(err.message).not.toContain("secret");
    expect(reasonOf(err)).toBe("INTERNAL");
    expect(seen).toEqual([bug]);
    expect(toConnectError("a string").code).toBe(Code.Internal);
  });

  it("gives every reason an HTTP status in the REST set", () => {
    for (const reason of Object.keys(ERROR_REASONS) as ErrorReason[]) {
      expect([400, 401, 404, 405, 409, 413, 415, 422, 429, 500, 503]).toContain(
        httpStatusOf(toConnectError(new SolgateError(reason, "m"))),
      );
    }
  });
});
