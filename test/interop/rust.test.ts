/**
 * Rust: a client on the solgate-proto crate (clients/rust: generated from its copy of proto/ by
 * tonic-prost-build in build.rs, protoc from the protoc-bin-vendored crate), built from scratch with
 * cargo, calling every RPC over tonic (h2c).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { expectClientPasses } from "./harness/client-suite.ts";
import { run } from "./harness/processes.ts";
import type { ProcessResult } from "./harness/processes.ts";

const BINARY = "test/interop/rust/target/debug/solgate-interop";

describe("Rust client (tonic + prost, h2c)", () => {
  let build: ProcessResult;
  beforeAll(async () => {
    build = await run("bash", ["test/interop/build-rust.sh"], { timeoutMs: 840_000 });
    console.log(`rust: build took ${build.ms} ms`);
  });

  it("is generated from clients/rust/proto and builds", () => {
    expect(build.code, `${build.stdout}\n${build.stderr}`).toBe(0);
  });

  it("passes every check against the gateway", async () => {
    expect(build.code, "the build failed").toBe(0);
    await expectClientPasses(BINARY, 2);
  });
});
