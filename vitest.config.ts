import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // The gateway's tests and the workspace packages' (packages/localnet) in one run.
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    exclude: ["test/interop/**", "test/bench/**", "node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // LiteSVM children and servers are heavy on a 2-core machine: keep files from piling up.
    maxWorkers: 2,
  },
});
