/** LOCALNET_GEYSER_* as config.ts reads them. */
import { expect, it } from "vitest";
import { loadLocalnetConfig } from "../../src/config.ts";

it("serves Geyser on 10000 by default, on another port, or not at all", () => {
  expect(loadLocalnetConfig({}).geyser).toEqual({
    port: 10000,
    token: null,
    queueLimit: 250_000,
    replaySlots: 150,
    pingMs: 10_000,
  });
  expect(loadLocalnetConfig({ LOCALNET_GEYSER_PORT: "0", LOCALNET_GEYSER_TOKEN: "t" }).geyser).toMatchObject({
    port: 0,
    token: "t",
  });
  expect(loadLocalnetConfig({ LOCALNET_GEYSER_PORT: "off" }).geyser).toBeNull();
});

it("names the variable it cannot read", () => {
  expect(() => loadLocalnetConfig({ LOCALNET_GEYSER_PORT: "70000" })).toThrow(
    'LOCALNET_GEYSER_PORT must be an integer between 0 and 65535, got "70000"',
  );
  expect(() => loadLocalnetConfig({ LOCALNET_GEYSER_QUEUE: "0" })).toThrow(/LOCALNET_GEYSER_QUEUE/);
});
