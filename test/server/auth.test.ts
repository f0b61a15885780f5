import { describe, expect, it } from "vitest";
import { createApiKeyChecker, defaultKeyName } from "../../src/server/auth.ts";

describe("the API key checker", () => {
  const checker = createApiKeyChecker([{ name: "alice", key: "alice-key" }, "bob-key"]);

  it("names the key a header value carries, however often it is asked", () => {
    for (let i = 0; i < 3; i++) {
      expect(checker.nameOf("Bearer alice-key")).toBe("alice");
      expect(checker.nameOf("bearer   bob-key ")).toBe(defaultKeyName("bob-key"));
      expect(checker.assertAuthorized("Bearer alice-key")).toBe("alice");
    }
  });

  it("refuses a wrong key after a right one was seen, and a right key after wrong ones", () => {
    expect(checker.nameOf("Bearer alice-key")).toBe("alice");
    for (const wrong of ["Bearer alice-ke", "Bearer alice-key2", "Bearer alice-key x", "alice-key", "Basic alice-key"])
      expect(checker.nameOf(wrong)).toBeUndefined();
    expect(() => checker.assertAuthorized("Bearer nope")).toThrow(/invalid API key/);
    expect(() => checker.assertAuthorized(undefined)).toThrow(/missing Authorization/);
    expect(checker.isAuthorized("Bearer bob-key")).toBe(true);
  });

  it("keeps each checker's keys to itself", () => {
    const other = createApiKeyChecker(["carol-key"]);
    expect(checker.nameOf("Bearer alice-key")).toBe("alice");
    expect(other.nameOf("Bearer alice-key")).toBeUndefined();
    expect(other.nameOf("Bearer carol-key")).toBe(defaultKeyName("carol-key"));
    expect(checker.nameOf("Bearer carol-key")).toBeUndefined();
  });

  it("with no keys authorizes nothing", () => {
    const none = createApiKeyChecker([]);
    expect(none.nameOf("Bearer ")).toBeUndefined();
    expect(none.nameOf("Bearer anything")).toBeUndefined();
  });
});
