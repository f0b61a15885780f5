/** The syntax of LOCALNET_ACCOUNTS_DIR, LOCALNET_ACCOUNTS and LOCALNET_PROGRAMS, and its inverse for the launcher. */
import { expect, it } from "vitest";
import { loadingEnv, parseLoadingConfig } from "../../src/loading/loading-options.ts";

const A = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const B = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

it("parses directories, address=file pairs and programs with an optional authority", () => {
  const config = parseLoadingConfig({
    LOCALNET_ACCOUNTS_DIR: "/a, /b",
    LOCALNET_ACCOUNTS: `${A}=/x/a.json,-=/x/own.json`,
    LOCALNET_PROGRAMS: `${A}=/p/one.so, ${B}=/p/two@v2.so@${A},${B}=/p/three.so@none`,
  });
  expect(config).toEqual({
    accountDirs: ["/a", "/b"],
    accounts: [{ address: A, file: "/x/a.json" }, { file: "/x/own.json" }],
    programs: [
      { address: A, file: "/p/one.so" },
      { address: B, file: "/p/two@v2.so", upgradeAuthority: A },
      { address: B, file: "/p/three.so" },
    ],
  });
  // The launcher writes what the parser reads.
  expect(parseLoadingConfig(loadingEnv(config))).toEqual(config);
  expect(parseLoadingConfig({})).toEqual({ accountDirs: [], accounts: [], programs: [] });
});

it("names the variable and the entry when the syntax is wrong", () => {
  expect(() => parseLoadingConfig({ LOCALNET_ACCOUNTS: "/x/a.json" })).toThrow(
    'LOCALNET_ACCOUNTS entries must be ADDRESS=FILE.json (ADDRESS - for the file\'s own pubkey), got "/x/a.json"',
  );
  expect(() => parseLoadingConfig({ LOCALNET_PROGRAMS: `${A}=` })).toThrow(
    `LOCALNET_PROGRAMS entries must be ADDRESS=PROGRAM.so[@AUTHORITY], got "${A}="`,
  );
  expect(() => parseLoadingConfig({ LOCALNET_PROGRAMS: `${A}=/p.so@` })).toThrow("LOCALNET_PROGRAMS entries must be");
  expect(() => loadingEnv({ accounts: [{ file: "/a,b.json" }] })).toThrow(
    'LOCALNET_ACCOUNTS: a path with a comma cannot be passed: "-=/a,b.json"',
  );
});
