/**
 * When the localnet seeds its world and runs traffic by default: on its own yes; launched as a
 * child or under tests no, unless the environment asks. (The switches live in the localnet's
 * config; their parsers in world/ and traffic/.)
 */
import { describe, expect, it } from "vitest";
import { loadLocalnetConfig } from "../../src/config.ts";

describe("localnet config: world and traffic switches", () => {
  it("seeds and sends traffic when run on its own", () => {
    const c = loadLocalnetConfig({});
    expect(c.world.enabled).toBe(true);
    expect(c.traffic.enabled).toBe(true);
    expect(c.world.options.collectionSize).toBe(10_000);
  });

  it("starts empty and quiet under tests and when launched as a child", () => {
    for (const env of [{ NODE_ENV: "test" }, { LOCALNET_EXIT_WITH_STDIN: "1" }]) {
      const c = loadLocalnetConfig(env);
      expect([c.world.enabled, c.traffic.enabled]).toEqual([false, false]);
    }
  });

  it("does what the environment says", () => {
    const c = loadLocalnetConfig({
      NODE_ENV: "test",
      LOCALNET_WORLD: "1",
      LOCALNET_TRAFFIC: "1",
      LOCALNET_COLLECTION_SIZE: "42",
      LOCALNET_TRAFFIC_RATE: "2",
    });
    expect([c.world.enabled, c.traffic.enabled]).toEqual([true, true]);
    expect(c.world.options.collectionSize).toBe(42);
    expect(c.traffic.options.ratePerSlot).toBe(2);
    expect(loadLocalnetConfig({ LOCALNET_WORLD: "0", LOCALNET_TRAFFIC: "0" }).world.enabled).toBe(false);
    expect(() => loadLocalnetConfig({ LOCALNET_TOKEN_HOLDERS: "-5" })).toThrow(/LOCALNET_TOKEN_HOLDERS/u);
  });
});
