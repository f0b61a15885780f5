import { describe, expect, it } from "vitest";
import { createLruCache } from "../../src/collections/lru-cache.ts";

describe("createLruCache", () => {
  it("evicts the least recently used entry and expires each entry on its own TTL", () => {
    let t = 0;
    const cache = createLruCache<string>({ maxEntries: 2, now: () => t });
    cache.set("a", "A", 1000);
    cache.set("b", "B", 100);
    expect(cache.get("a")).toBe("A"); // a is now the most recent
    cache.set("c", "C", 1000);
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual(["A", undefined, "C"]);
    t = 500;
    cache.set("d", "D", 100);
    t = 700;
    expect([cache.get("a"), cache.get("d")]).toEqual([undefined, undefined]);
    expect(cache.peek("d")).toEqual({ value: "D", storedAt: 500 });
    cache.set("e", "E", 0);
    expect(cache.peek("e")).toBeUndefined();
  });

  it("shares one load between concurrent callers and keeps what the loader says for as long as it says", async () => {
    let t = 0;
    let loads = 0;
    const cache = createLruCache<number | null>({ maxEntries: 10, now: () => t });
    const load = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 10));
      return { value: null, ttlMs: 50 };
    };
    expect(await Promise.all([cache.getOrLoad("k", load), cache.getOrLoad("k", load)])).toEqual([null, null]);
    expect(await cache.getOrLoad("k", load)).toBeNull();
    expect(loads).toBe(1);
    t = 60;
    await cache.getOrLoad("k", load);
    expect(loads).toBe(2);
    await expect(cache.getOrLoad("x", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await cache.getOrLoad("x", async () => ({ value: 1, ttlMs: 10 }))).toBe(1);
  });
});
