/**
 * Program-account paging on a 100,000-account result: latency of page 1 and page 1,000 (100 per
 * page), cold (key scan included) and warm (key list cached), and process RSS while paging. One walk of every
 * page gives the cursor of page 1,000, the warm pages' spread and the RSS; then `rounds` rounds (default 5)
 * each time page 1 and page 1,000 cold (a fresh core each: the key scan paid again) and warm (that core again),
 * and the ratios page 1,000 / page 1 are of the medians over the rounds, not of one call each.
 * Run: npx node test/bench/program-accounts-bench.ts [holders] [rounds]
 */
import { createUpstream } from "../../src/upstream/upstream.ts";
import { createProgramAccounts } from "../../src/programs/program-accounts.ts";
import { TOKEN_PROGRAM as TOKEN_PROGRAM_ID } from "../../src/solana/program-ids.ts";
import { startSeededLocalnet } from "../programs/localnet-world.ts";

const holders = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const LIMIT = 100;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const ms = (x: number) => `${x.toFixed(1)} ms`;
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const list = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(", ");

const seedStarted = performance.now();
const world = await startSeededLocalnet({ tokenHolders: holders, smallHolders: 10, startTimeoutMs: 300_000 });
// The world is written after the localnet's first answer: the figures start once it is all there.
await world.localnet.loaded;
console.log(`localnet seeded with ${holders} holders in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
const upstream = createUpstream({ chain: "localnet", rpcUrls: [world.localnet.rpcUrl], timeoutMs: 60_000 });
const mint = world.manifest.fungibleMints[0].mint;
const query = { programId: TOKEN_PROGRAM_ID, match: [`0:${mint}`], limit: LIMIT };

try {
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sample = () => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss));
  const timer = setInterval(sample, 5);

  const programs = createProgramAccounts({ upstream });
  let t = performance.now();
  const first = await programs.list(query);
  const page1Cold = performance.now() - t;
  t = performance.now();
  await programs.list(query);
  const page1Warm = performance.now() - t;

  const latencies: number[] = [];
  let cursor = first.nextCursor;
  let seen = first.items.length;
  let cursorBefore1000: string | null = null;
  let page1000Warm = Number.NaN;
  for (let page = 2; cursor !== null; page++) {
    if (page === 1000) cursorBefore1000 = cursor;
    t = performance.now();
    const next = await programs.list({ ...query, cursor });
    const elapsed = performance.now() - t;
    latencies.push(elapsed);
    if (page === 1000) page1000Warm = elapsed;
    seen += next.items.length;
    cursor = next.nextCursor;
    sample();
  }
  clearInterval(timer);

  if (cursorBefore1000 === null) throw new Error(`fewer than 1,000 pages of ${LIMIT}: give more holders`);
  // Rounds: page 1 and page 1,000, each on a replica that has never seen the query (a fresh core, so the key
  // scan is paid again), then warm on that same core.
  const samples = {
    page1Cold: [page1Cold],
    page1Warm: [page1Warm],
    page1000Cold: [] as number[],
    page1000Warm: [page1000Warm],
  };
  const timed = async (call: () => Promise<unknown>) => {
    const at = performance.now();
    await call();
    return performance.now() - at;
  };
  for (let round = 0; round < ROUNDS; round++) {
    const forPage1 = createProgramAccounts({ upstream });
    if (round > 0) samples.page1Cold.push(await timed(() => forPage1.list(query)));
    else await forPage1.list(query);
    if (round > 0) samples.page1Warm.push(await timed(() => forPage1.list(query)));
    const forPage1000 = createProgramAccounts({ upstream });
    samples.page1000Cold.push(await timed(() => forPage1000.list({ ...query, cursor: cursorBefore1000! })));
    if (round > 0)
      samples.page1000Warm.push(await timed(() => forPage1000.list({ ...query, cursor: cursorBefore1000! })));
  }

  latencies.sort((a, b) => a - b);
  const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  console.log(`accounts listed: ${seen} in ${latencies.length + 1} pages of ${LIMIT}`);
  const m = {
    page1Cold: median(samples.page1Cold),
    page1Warm: median(samples.page1Warm),
    page1000Cold: median(samples.page1000Cold),
    page1000Warm: median(samples.page1000Warm),
  };
  console.log(`page 1:     cold median ${ms(m.page1Cold)} (key scan + page; ${list(samples.page1Cold)})`);
  console.log(`            warm median ${ms(m.page1Warm)} (${list(samples.page1Warm)})`);
  console.log(`page 1000:  cold on a fresh replica, median ${ms(m.page1000Cold)} (${list(samples.page1000Cold)})`);
  console.log(`            warm median ${ms(m.page1000Warm)} (${list(samples.page1000Warm)})`);
  console.log(
    `ratio page 1000 / page 1 (medians of ${ROUNDS} each): warm ${(m.page1000Warm / m.page1Warm).toFixed(2)}, cold ${(m.page1000Cold / m.page1Cold).toFixed(2)}`,
  );
  console.log(`all warm pages: p50 ${ms(p(0.5))}, p99 ${ms(p(0.99))}, max ${ms(latencies.at(-1)!)}`);
  console.log(
    `RSS: before ${mb(rssBefore)}, peak while paging ${mb(rssPeak)}, after ${mb(process.memoryUsage().rss)}; heap used after ${mb(process.memoryUsage().heapUsed)}`,
  );
} finally {
  await upstream.close();
  await world.stop();
}
