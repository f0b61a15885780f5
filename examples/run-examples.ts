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
 * ladder landed (each example also prepares, signs, sends and watches a ladder).
 *
 * Then each language's collection-feed example (TypeScript watch-collection.ts, Go and Rust `feed`) runs twice on
 * one cursor file: it handles 2 events and stops; while it is stopped the feed moves on; started again, it must
 * resume right after the last event it handled (the first event's sequence is the saved one + 1) and handle 3 more.
 * The events are FLOOR_CHANGED: the localnet has no Token Metadata or Bubblegum program and no marketplace yet, so
 * the seeded collection's floor comes from a stand-in of Magic Eden's stats API that moves at every read
 * (test/interop/harness/market-fixture.ts). Last, the TypeScript webhook receiver (webhook-receiver.ts) registers a
 * webhook, verifies 3 deliveries with the `standardwebhooks` library and must reject a tampered body. Exits 1 if
 * any fails.
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
import { marketEnv, seededCollectionMint, startMarketFixture } from "../test/interop/harness/market-fixture.ts";
import type { MarketFixture } from "../test/interop/harness/market-fixture.ts";
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

/** How to run one language's examples: the transfer and ladder (`args`), and the collection feed (`feedArgs`). */
interface Built {
  command: string;
  args: string[];
  feedArgs: string[];
  cwd: string;
}

/** Builds the example and returns how to run it. */
async function build(language: Language, scratch: string): Promise<Built> {
  switch (language) {
    case "typescript": {
      const packed = check(
        await run("npm", ["pack", "--silent", "--pack-destination", scratch], { cwd: join(root, "packages/client") }),
        "npm pack",
      );
      const tarball = join(scratch, packed.stdout.trim().split("\n").at(-1)!);
      const project = mkdtempSync(join(tmpdir(), "solgate-example-ts-"));
      projects.push(project);
      for (const file of ["package.json", "tsconfig.json", "main.ts", "watch-collection.ts", "webhook-receiver.ts"])
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
      return { command: process.execPath, args: ["main.ts"], feedArgs: ["watch-collection.ts"], cwd: project };
    }
    case "go": {
      const binary = join(scratch, "solgate-example-go");
      check(
        await run("go", ["build", "-o", binary, "."], { cwd: join(root, "examples/go"), timeoutMs: 600_000 }),
        "go build",
      );
      return { command: binary, args: [], feedArgs: ["feed"], cwd: scratch };
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
      return { command: join(target, "debug/solgate-example"), args: [], feedArgs: ["feed"], cwd: scratch };
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

/** The lines of `result` that start with `prefix`, without it. */
function lines(result: ProcessResult, prefix: string): string[] {
  return result.stdout
    .split("\n")
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length));
}

/**
 * Runs the collection-feed example twice on one cursor file: 2 events, a pause while the feed moves on, then 3 more,
 * which must start right after the last event of the first run. Returns what to print.
 */
async function resumeFeed(
  language: Language,
  how: Built,
  env: Record<string, string>,
  market: MarketFixture,
): Promise<string> {
  const feed = async (events: number) =>
    check(
      await run(how.command, how.feedArgs, {
        cwd: how.cwd,
        env: { ...env, SOLGATE_EVENTS: String(events) },
        timeoutMs: 60_000,
        echo: args.verbose,
      }),
      `${language} feed`,
    );
  rmSync(env.SOLGATE_CURSOR_FILE!, { force: true });
  const first = await feed(2);
  const stopped = lines(first, "feed: handled 2 events, last sequence ")[0]?.match(/^(\d+)/)?.[1];
  if (stopped === undefined) throw new StepError(`no "feed: handled 2 events" line\n${first.stdout}\n${first.stderr}`);
  // Events the example must not miss: the floor moves at every read, so three more reads are at least two events.
  const reads = market.reads();
  const deadline = Date.now() + 20_000;
  while (market.reads() < reads + 3) {
    if (Date.now() > deadline) throw new StepError("the marketplace was not read while the example was stopped");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const second = await feed(3);
  const resumed = lines(second, "feed: resumed at sequence ")[0];
  const ended = lines(second, "feed: handled 3 events, last sequence ")[0]?.match(/^(\d+)/)?.[1];
  if (resumed === undefined || ended === undefined)
    throw new StepError(`the second run did not resume and handle 3 events\n${second.stdout}\n${second.stderr}`);
  if (BigInt(resumed) !== BigInt(stopped) + 1n || BigInt(ended) !== BigInt(stopped) + 3n)
    throw new StepError(
      `stopped after sequence ${stopped}, resumed at ${resumed}, ended at ${ended}\n${second.stdout}`,
    );
  return `feed: stopped after event ${stopped}, resumed at ${resumed}`;
}

/** Runs the TypeScript webhook receiver: 3 deliveries verified, a tampered body rejected. Returns what to print. */
async function receiveWebhooks(how: Built, env: Record<string, string>): Promise<string> {
  const result = check(
    await run(how.command, ["webhook-receiver.ts"], {
      cwd: how.cwd,
      env: { ...env, SOLGATE_EVENTS: "3" },
      timeoutMs: 60_000,
      echo: args.verbose,
    }),
    "webhook receiver",
  );
  const verified = lines(result, "webhook: verified ")[0];
  const rejected = lines(result, "webhook: a tampered body is rejected: ")[0];
  const listed = lines(result, "webhook: the gateway lists ")[0]?.match(/^(\d+)/)?.[1];
  if (verified !== "3 deliveries" || rejected === undefined || listed === undefined || Number(listed) < 3)
    throw new StepError(
      `the receiver did not verify 3 deliveries and reject a tampered one\n${result.stdout}\n${result.stderr}`,
    );
  return `verified 3 deliveries (standardwebhooks); a tampered body rejected (${rejected})`;
}

async function main(): Promise<number> {
  const worldDir = mkdtempSync(join(tmpdir(), "solgate-examples-world-"));
  const scratch = mkdtempSync(join(tmpdir(), "solgate-examples-"));
  // The localnet child inherits this environment: a small world, written where we can read it.
  for (const [name, value] of Object.entries({ ...INTEROP_WORLD_ENV, LOCALNET_WORLD_DIR: worldDir }))
    process.env[name] ??= value;
  // The seeded collection's floor moves at every read of this marketplace, so its change feed has events; the
  // webhook receiver listens on loopback, which the gateway takes only with private URLs allowed (tests only).
  const market = await startMarketFixture();
  const gateway = await startInteropGateway({ ...marketEnv(market), SOLGATE_WEBHOOK_ALLOW_PRIVATE_URLS: "1" });
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
    if (env.SOLGATE_COLLECTION !== seededCollectionMint())
      throw new Error(`the market lists ${seededCollectionMint()}, the world seeded ${env.SOLGATE_COLLECTION}`);
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
        const feed = await resumeFeed(
          language,
          how,
          { ...env, SOLGATE_CURSOR_FILE: join(scratch, `${language}-cursor`) },
          market,
        );
        console.log(
          `${language}: ${done.slice("done: ".length)}; ${ladder.slice("ladder: ".length)}; ${feed} (built in ${built} s)`,
        );
        if (language === "typescript") console.log(`typescript webhook receiver: ${await receiveWebhooks(how, env)}`);
      } catch (error) {
        failures++;
        console.log(`${language}: FAILED ${error instanceof StepError ? error.message : String(error)}`);
      }
    }
  } finally {
    await gateway.close();
    await market.close();
    for (const dir of [worldDir, scratch, ...projects]) rmSync(dir, { recursive: true, force: true });
  }
  return failures === 0 ? 0 : 1;
}

process.exitCode = await main();
