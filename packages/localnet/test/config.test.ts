/**
 * The block engine's and send paths' settings in the localnet's configuration: LOCALNET_SEND_PORTS and
 * LOCALNET_BUNDLE_DROP_RATE, read and refused as the other variables are.
 */
import { describe, expect, it } from "vitest";
import { loadLocalnetConfig, parseSendPorts } from "../src/config.ts";

describe("LOCALNET_SEND_PORTS", () => {
  it("reads port:dropRate pairs (a bare port drops nothing)", () => {
    expect(parseSendPorts("0:0.9,0:0.5")).toEqual([
      { port: 0, dropRate: 0.9 },
      { port: 0, dropRate: 0.5 },
    ]);
    expect(parseSendPorts("9001")).toEqual([{ port: 9001, dropRate: 0 }]);
    expect(parseSendPorts("")).toEqual([]);
    expect(loadLocalnetConfig({ LOCALNET_SEND_PORTS: "0:1" }).sendPorts).toEqual([{ port: 0, dropRate: 1 }]);
  });

  it("refuses a rate above 1, a port above 65535 and anything else, naming the variable", () => {
    for (const bad of ["0:1.5", "70000:0.1", "x", "0:0.5,", "0:-1"]) {
      expect(() => parseSendPorts(bad)).toThrow(/LOCALNET_SEND_PORTS/);
    }
  });
});

describe("LOCALNET_BUNDLE_DROP_RATE", () => {
  it("sets the block engine's drop rate, within [0, 1]", () => {
    expect(loadLocalnetConfig({ LOCALNET_BUNDLE_DROP_RATE: "0.25" }).faults.bundleDropRate).toBe(0.25);
    expect(loadLocalnetConfig({}).faults.bundleDropRate).toBe(0);
    expect(() => loadLocalnetConfig({ LOCALNET_BUNDLE_DROP_RATE: "2" })).toThrow(/LOCALNET_BUNDLE_DROP_RATE/);
  });
});
