import { describe, expect, it } from "vitest";
import { collectionCursors } from "../../src/collections/collections.ts";
import { SolgateError } from "../../src/errors.ts";

const { encode: encodePageCursor, decode: decodePageCursor } = collectionCursors;

const A = "8Rt3Ayqth4DAiPnW9MDFi63TiQJHmohfTWLMQFHi4KZH";
const B = "J1S9H3QjnRtBbbuD4HjPV6RpRhwuk4zKbxsnCHuTgh9w";
const ID = "CMVuYDS9nTeujfTPJb8ik7CRhAqZv4DfjfdamFLkJgxE";

function refusal(fn: () => unknown): SolgateError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SolgateError);
    return e as SolgateError;
  }
  throw new Error("expected a refusal");
}

describe("collection page cursors", () => {
  it("round-trip the last id of a page, in a URL-safe string", () => {
    const cursor = encodePageCursor(A, ID);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/u);
    expect(decodePageCursor(cursor, A)).toBe(ID);
    expect(decodePageCursor(encodePageCursor(A, "11111111111111111111111111111111"), A)).toBe(
      "11111111111111111111111111111111",
    );
  });

  it("refuse another collection's cursor, altered ones and garbage as INVALID_PARAMETER on `cursor`", () => {
    const cursor = encodePageCursor(A, ID);
    const flipped = Buffer.from(cursor, "base64url");
    flipped[20] ^= 1;
    for (const bad of [
      flipped.toString("base64url"),
      "garbage",
      "",
      "%%%",
      `${cursor}A`,
      cursor.slice(0, -2),
      "A".repeat(10_000),
    ]) {
      const e = refusal(() => decodePageCursor(bad, A));
      expect([e.reason, e.details.field]).toEqual(["INVALID_PARAMETER", "cursor"]);
    }
    const foreign = refusal(() => decodePageCursor(cursor, B));
    expect(foreign.message).toMatch(/another collection/u);
  });
});
