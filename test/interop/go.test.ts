/**
 * Go: a client on the repository's Go module (clients/go: protoc-gen-go messages and grpc-go stubs
 * generated from proto/ and committed), built from scratch, calling every RPC over grpc-go (h2c)
 * against the gateway.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { expectClientPasses } from "./harness/client-suite.ts";
import { run } from "./harness/processes.ts";
import type { ProcessResult } from "./harness/processes.ts";

const BINARY = "test/interop/.bin/solgate-interop-go";

describe("Go client (grpc-go, h2c)", () => {
  let build: ProcessResult;
  beforeAll(async () => {
    build = await run("bash", ["test/interop/build-go.sh"], { timeoutMs: 600_000 });
    console.log(`go: build took ${build.ms} ms`);
  });

  it("builds on clients/go", () => {
    expect(build.code, `${build.stdout}\n${build.stderr}`).toBe(0);
  });

  it("passes every check against the gateway", async () => {
    expect(build.code, "the build failed").toBe(0);
    await expectClientPasses(BINARY, 1);
  });
});
