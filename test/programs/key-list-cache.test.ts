import { describe, expect, it } from "vitest";
import { createKeyListCache } from "../../src/programs/key-list-cache.ts";

describe("key-list cache", () => {
  it("serves a list until its TTL passes unread, then loads it again", async () => {
    let t = 0;
    let loads = 0;
    const cache = createKeyListCache({ ttlMs: 1000, now: () => t });
    const load = async () => ["a", "b", `${++loads}`];
    expect(await cache.get("q", load)).toEqual(["a", "b", "1"]);
    t = 999;
    expect(await cache.get("q", load)).toEqual(["a", "b", "1"]);
    t = 1998;
    expect(await cache.get("q", load)).toEqual(["a", "b", "1"]);
    t = 2998;
    expect(await cache.get("q", load)).toEqual(["a", "b", "2"]);
    expect(cache.size).toBe(3);
  });

  it("keeps a steadily read list no longer than maxAgeMs", async () => {
    let t = 0;
    let loads = 0;
    const cache = createKeyListCache({ ttlMs: 1000, maxAgeMs: 3000, now: () => t });
    const load = async () => [`${++loads}`];
    for (t = 0; t < 3000; t += 500) expect(await cache.get("q", load)).toEqual(["1"]);
    t = 3000;
    expect(await cache.get("q", load)).toEqual(["2"]);
  });

  it("shares one load among concurrent misses, and does not keep failures", async () => {
    let loads = 0;
    const cache = createKeyListCache();
    const slow = () => new Promise<string[]>((r) => setTimeout(() => r([`${++loads}`]), 20));
    const results = await Promise.all([cache.get("q", slow), cache.get("q", slow), cache.get("q", slow)]);
    expect(results).toEqual([["1"], ["1"], ["1"]]);
    await expect(cache.get("bad", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await cache.get("bad", async () => ["ok"])).toEqual(["ok"]);
  });

  it("holds at most maxKeys, evicting the oldest lists, and skips lists larger than the cap", async () => {
    const cache = createKeyListCache({ maxKeys: 5 });
    const list = (n: number, tag: string) => async () => Array.from({ length: n }, (_, i) => `${tag}${i}`);
    await cache.get("one", list(2, "a"));
    await cache.get("two", list(2, "b"));
    await cache.get("three", list(2, "c"));
    expect(cache.size).toBe(4);
    let reloaded = false;
    await cache.get("one", async () => ((reloaded = true), ["a0", "a1"]));
    expect(reloaded).toBe(true);
    await cache.get("huge", list(6, "h"));
    expect(cache.size).toBeLessThanOrEqual(5);
  });
});
