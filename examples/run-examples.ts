/**
 * `npm run examples`: starts a gateway on its embedded localnet (free port, a small seeded world), builds
 * and runs the TypeScript, Go and Rust examples against it as a user would, and prints one line each:
 *
 *   typescript: finalized <signature> in 13.2 s, 5 collection items
 *
 * TypeScript: @solgate/client is packed (`npm pack`) and installed with the example into a fresh
 * project in the system's temp folder, where the repository's node_modules cannot be seen; the example
 * is type-checked there against the packed declarations, then run. Go: `go build` (the module reaches
 * clients/go through a `replace`). Rust: `cargo build --locked` (solgate-proto by path), in the interop
 * driver's target folder so the two share their dependencies' builds. Each example's signature is then
 * looked up on the localnet itself: it must be finalized there, not only say so; so must the rung its fee
 * ladder landed (each example also prepares, signs, sends and watches a ladder). Exits 1 if any fails.
 *
 *   --only typescript,go   run some   --verbose   echo each example's output
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startInteropGateway } from "../test/interop/harness/gateway.ts";
import { run } from "../test/interop/harness/processes.ts";
import type { ProcessResult } from "../test/interop/harness/processes.ts";
import { INTEROP_WORLD_ENV } from "../test/interop/harness/world-fixture.ts";

const root = join(import.meta.dirname, "..");
const LANGUAGES = ["typescript", "go", "rust"] as const;
type Language = (typeof LANGUAGES)[number];

const { values: args } = parseArgs({
  options: { only: { type: "string" }, verbose: { type: "boolean", default: false } },
});
const chosen = (args.only?.split(",") ?? LANGUAGES).filter((l): l is Language =>
  (LANGUAGES as readonly string[]).includes(l),
);

/** The temporary TypeScript projects made, removed at the end. */
const projects: string[] = [];

/** A failed step: its command's output is shown. */
class StepError extends Error {}

function check(result: ProcessResult, what: string): ProcessResult {
  if (result.code !== 0)
    throw new StepError(`${what} exited ${result.code ?? result.signal}\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** Builds the example and returns how to run it. */
async function build(language: Language, scratch: string): Promise<{ command: string; args: string[]; cwd: string }> {
  switch (language) {
    case "typescript": {
      const packed = check(
        await run("npm", ["pack", "--silent", "--pack-destination", scratch], { cwd: join(root, "packages/client") }),
        "npm pack",
      );
      const tarball = join(scratch, packed.stdout.trim().split("\n").at(-1)!);
      const project = mkdtempSync(join(tmpdir(), "solgate-example-ts-"));
      projects.push(project);
      for (const file of ["package.json", "tsconfig.json", "main.ts"])
        cpSync(join(root, "examples/typescript", file), join(project, file));
      check(
        await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", tarball], {
          cwd: project,
          timeoutMs: 300_000,
        }),
        "npm install",
      );
      check(
        await run("npx", ["tsc", "--noEmit"], { cwd: project }),
        "tsc (the example against the packed declarations)",
      );
      // The Node running this script (24, the repository's pinned one) runs main.ts by stripping its types.
      return { command: process.execPath, args: ["main.ts"], cwd: project };
    }
    case "go": {
      const binary = join(scratch, "solgate-example-go");
      check(
        await run("go", ["build", "-o", binary, "."], { cwd: join(root, "examples/go"), timeoutMs: 600_000 }),
        "go build",
      );
      return { command: binary, args: [], cwd: scratch };
    }
    case "rust": {
      const target = join(root, "test/interop/rust/target");
      const jobs = process.env.CI === "true" ? "2" : "1";
      const manifest = join(root, "examples/rust/Cargo.toml");
      check(
        await run("cargo", ["build", "--locked", "-j", jobs, "--manifest-path", manifest, "--target-dir", target], {
          timeoutMs: 900_000,
        }),
        "cargo build",
      );
      return { command: join(target, "debug/solgate-example"), args: [], cwd: scratch };
    }
  }
}

/** Asks the localnet itself whether `signature` is finalized. */
async function finalizedOnChain(rpcUrl: string, signature: string): Promise<boolean> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "getSignatureStatuses",
      params: [[signature], { searchTransactionHistory: true }],
    }),
  });
  const body = (await response.json()) as {
    result?: { value: ({ confirmationStatus: string; err: unknown } | null)[] };
  };
  const status = body.result?.value[0];
  return status?.confirmationStatus === "finalized" && status.err === null;
}

async function main(): Promise<number> {
  const worldDir = mkdtempSync(join(tmpdir(), "solgate-examples-world-"));
  const scratch = mkdtempSync(join(tmpdir(), "solgate-examples-"));
  // The localnet child inherits this environment: a small world, written where we can read it.
  for (const [name, value] of Object.entries({ ...INTEROP_WORLD_ENV, LOCALNET_WORLD_DIR: worldDir }))
    process.env[name] ??= value;
  const gateway = await startInteropGateway();
  let failures = 0;
  try {
    const manifest = JSON.parse(readFileSync(join(process.env.LOCALNET_WORLD_DIR!, "world-manifest.json"), "utf8")) as {
      collections: { mint: string; seeded: boolean }[];
      demoWallet: { keypairFile: string };
    };
    const env = {
      SOLGATE_URL: gateway.url,
      SOLGATE_API_KEY: gateway.apiKey,
      SOLGATE_KEYPAIR: manifest.demoWallet.keypairFile,
      SOLGATE_COLLECTION: manifest.collections.find((c) => c.seeded)!.mint,
    };
    for (const language of chosen) {
      const started = performance.now();
      try {
        const how = await build(language, scratch);
        const built = ((performance.now() - started) / 1000).toFixed(0);
        const result = check(
          await run(how.command, how.args, { cwd: how.cwd, env, timeoutMs: 180_000, echo: args.verbose }),
          language,
        );
        const done = result.stdout.split("\n").find((line) => line.startsWith("done: "));
        const signature = done?.match(/finalized (\w+)/)?.[1];
        if (done === undefined || signature === undefined)
          throw new StepError(`no "done: finalized" line\n${result.stdout}\n${result.stderr}`);
        if (!(await finalizedOnChain(gateway.localnetUrl, signature)))
          throw new StepError(`the localnet does not have ${signature} finalized`);
        // The fee ladder: the rung that landed, as the example read it from WatchLadder, must be finalized too.
        const ladder = result.stdout.split("\n").find((line) => line.startsWith("ladder: finalized "));
        const rung = ladder?.match(/^ladder: finalized rung \d+ (\w+)/)?.[1];
        if (ladder === undefined || rung === undefined)
          throw new StepError(`no "ladder: finalized" line\n${result.stdout}\n${result.stderr}`);
        if (!(await finalizedOnChain(gateway.localnetUrl, rung)))
          throw new StepError(`the localnet does not have the ladder's rung ${rung} finalized`);
        console.log(
          `${language}: ${done.slice("done: ".length)}; ${ladder.slice("ladder: ".length)} (built in ${built} s)`,
        );
      } catch (error) {
        failures++;
        console.log(`${language}: FAILED ${error instanceof StepError ? error.message : String(error)}`);
      }
    }
  } finally {
    await gateway.close();
    for (const dir of [worldDir, scratch, ...projects]) rmSync(dir, { recursive: true, force: true });
  }
  return failures === 0 ? 0 : 1;
}

process.exitCode = await main();
