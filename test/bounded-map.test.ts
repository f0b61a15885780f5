import { describe, expect, it } from "vitest";
import { BoundedMap } from "../src/bounded-map.ts";

describe("BoundedMap", () => {
  it("drops the oldest insertions past its size, telling onEvict, and keeps a re-set key in its place", () => {
    const evicted: [string, number][] = [];
    const map = new BoundedMap<string, number>(2, (key, value) => evicted.push([key, value]));
    map.set("a", 1).set("b", 2);
    map.set("a", 10); // already held: keeps its place, nothing dropped
    expect(evicted).toEqual([]);
    map.set("c", 3);
    expect([...map]).toEqual([
      ["b", 2],
      ["c", 3],
    ]);
    expect(evicted).toEqual([["a", 10]]);
    // Deleted then set: the newest, so the other one goes first.
    map.delete("b");
    map.set("b", 2);
    map.set("d", 4);
    expect([...map.keys()]).toEqual(["b", "d"]);
    expect(evicted).toEqual([
      ["a", 10],
      ["c", 3],
    ]);
  });

  it("refuses a size below 1", () => {
    expect(() => new BoundedMap(0)).toThrow(/maxSize must be at least 1, got 0/);
  });
});
