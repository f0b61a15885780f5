import { defineConfig } from "vitest/config";

/** `npm run test:interop`: real clients in Go, Rust, a browser, buf curl and grpcurl against one gateway. */
export default defineConfig({
  test: {
    include: ["test/interop/**/*.test.ts"],
    globalSetup: ["test/interop/global-setup.ts"],
    // Builds (go, cargo) and streams that run to finalization take minutes, not seconds.
    testTimeout: 300_000,
    hookTimeout: 900_000,
    // One file at a time: the machine has 2 cores and the builds want both.
    fileParallelism: false,
  },
});
