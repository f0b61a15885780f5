/**
 * World seeding benchmark, at the issue's sizes (10,000 NFTs, 100,000 token holders) unless told:
 *  1. in-process, step by step: build the world, write it into a real LiteSVM through the account
 *     index's bulk API, build the DAS index, page the collection once with cursors;
 *  2. end to end: launch a localnet process with LOCALNET_WORLD=1 and time it until ready (it answers) and
 *     until loaded (every account written: the world is loaded after the first answer, see the README), with
 *     an empty world cache of its own (LOCALNET_WORLD_CACHE, a fresh folder) so that it builds and seeds; then
 *     once more on that now-warm cache, printed apart: that second figure is a cache read, not seeding, and
 *     is not held to the budget.
 * Budget: seeding must take under 60 s. Run: npx node packages/localnet/test/bench/world-bench.ts [nfts] [holders]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LiteSVM } from "litesvm";
import { createAccountIndex, type SeedAccount } from "../../src/accounts/index.ts";
import { createAssetIndex } from "../../src/das/asset-index.ts";
import { createDasMethods } from "../../src/das/das-methods.ts";
import { startLocalnet } from "../../src/launcher.ts";
import { buildWorld } from "../../src/world/world-builder.ts";
import { DEFAULT_WORLD_OPTIONS } from "../../src/world/world-options.ts";

const nfts = Number(process.argv[2] ?? DEFAULT_WORLD_OPTIONS.collectionSize);
const holders = Number(process.argv[3] ?? DEFAULT_WORLD_OPTIONS.tokenHolders);
const BUDGET_MS = 60_000;

function lap(label: string, since: number): number {
  const now = performance.now();
  console.log(`${label.padEnd(38)} ${((now - since) / 1000).toFixed(2).padStart(7)} s`);
  return now;
}

console.log(
  `world: ${nfts} collection members, ${holders} holders of the big mint (machine load ${(await import("node:os")).loadavg()[0].toFixed(1)})`,
);
const start = performance.now();
let t = start;
const world = buildWorld({ ...DEFAULT_WORLD_OPTIONS, collectionSize: nfts, tokenHolders: holders });
t = lap(`build (${world.accounts.length} accounts)`, t);
const index = createAccountIndex(new LiteSVM());
index.seedAccounts(world.accounts as unknown as SeedAccount[]);
t = lap("write to LiteSVM + account index", t);
const assets = createAssetIndex({ offchainJson: world.offchainJson });
assets.applyAccounts(world.accounts.map((a) => [a.address, a]));
for (const c of world.compressedAssets) assets.addCompressed(c);
t = lap(`DAS index (${assets.size} assets)`, t);
const inProcess = performance.now() - start;
console.log(`${"seeded in-process".padEnd(38)} ${(inProcess / 1000).toFixed(2).padStart(7)} s`);

const das = createDasMethods(assets);
let cursor: string | undefined;
let served = 0;
for (;;) {
  const page = (await das.getAssetsByGroup(
    [{ groupKey: "collection", groupValue: world.manifest.collections[0].mint, limit: 1000, cursor }],
    { slotAt: () => 0n },
  )) as {
    items: unknown[];
    cursor?: string;
  };
  served += page.items.length;
  if (page.items.length < 1000) break;
  cursor = page.cursor;
}
t = lap(`page ${served} members (limit 1000)`, t);

const dir = mkdtempSync(join(tmpdir(), "solgate-world-bench-"));
// The child inherits this process's environment: a cache folder of its own, empty at the first launch, so the
// machine's shared world cache (a hit would be a file read) is never what is timed as seeding.
process.env.LOCALNET_WORLD_CACHE = join(dir, "cache");
async function launch(what: string): Promise<number> {
  const launched = performance.now();
  const localnet = await startLocalnet({
    startTimeoutMs: 180_000,
    world: { collectionSize: nfts, tokenHolders: holders, dir: join(dir, what) },
    traffic: false,
  });
  console.log(
    `${`launch to ready (${what})`.padEnd(38)} ${((performance.now() - launched) / 1000).toFixed(2).padStart(7)} s`,
  );
  await localnet.loaded;
  const took = performance.now() - launched;
  console.log(`${`launch to loaded (${what})`.padEnd(38)} ${(took / 1000).toFixed(2).padStart(7)} s`);
  await localnet.stop();
  return took;
}
const endToEnd = await launch("cold: build, seed");
const warm = await launch("warm: cache read");
console.log(`${"cold / warm".padEnd(38)} ${(endToEnd / warm).toFixed(2).padStart(7)}`);
rmSync(dir, { recursive: true, force: true });

const worst = Math.max(inProcess, endToEnd);
console.log(worst < BUDGET_MS ? `OK: under the ${BUDGET_MS / 1000} s budget` : `OVER the ${BUDGET_MS / 1000} s budget`);
process.exitCode = worst < BUDGET_MS ? 0 : 1;
