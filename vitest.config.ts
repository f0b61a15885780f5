import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/interop/**", "test/bench/**", "node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // LiteSVM children and servers are heavy on a 2-core machine: keep files from piling up.
    maxWorkers: 2,
  },
});
