/**
 * Program-account paging on a 100,000-account result: latency of page 1 and page 1,000 (100 per
 * page), cold (key scan included) and warm (key list cached), and process RSS while paging.
 * Run: npx node test/bench/program-accounts-bench.ts [holders]
 */
import { createUpstream } from "../../src/upstream/upstream.ts";
import { createProgramAccounts } from "../../src/programs/program-accounts.ts";
import { TOKEN_PROGRAM as TOKEN_PROGRAM_ID } from "../../src/solana/program-ids.ts";
import { startSeededLocalnet } from "../programs/localnet-world.ts";

const holders = Number(process.argv[2] ?? 100_000);
const LIMIT = 100;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const ms = (x: number) => `${x.toFixed(1)} ms`;

const seedStarted = performance.now();
const world = await startSeededLocalnet({ tokenHolders: holders, smallHolders: 10, startTimeoutMs: 300_000 });
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

  // Page 1,000 on a replica that has never seen the query: a fresh core, so the key scan is paid again.
  let page1000Cold = Number.NaN;
  if (cursorBefore1000 !== null) {
    const replica = createProgramAccounts({ upstream });
    t = performance.now();
    await replica.list({ ...query, cursor: cursorBefore1000 });
    page1000Cold = performance.now() - t;
  }

  latencies.sort((a, b) => a - b);
  const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  console.log(`accounts listed: ${seen} in ${latencies.length + 1} pages of ${LIMIT}`);
  console.log(`page 1:     cold ${ms(page1Cold)} (key scan + page), warm ${ms(page1Warm)}`);
  console.log(`page 1000:  warm ${ms(page1000Warm)}, cold on a fresh replica ${ms(page1000Cold)}`);
  console.log(
    `ratio page 1000 / page 1: warm ${(page1000Warm / page1Warm).toFixed(2)}, cold ${(page1000Cold / page1Cold).toFixed(2)}`,
  );
  console.log(`all warm pages: p50 ${ms(p(0.5))}, p99 ${ms(p(0.99))}, max ${ms(latencies.at(-1)!)}`);
  console.log(
    `RSS: before ${mb(rssBefore)}, peak while paging ${mb(rssPeak)}, after ${mb(process.memoryUsage().rss)}; heap used after ${mb(process.memoryUsage().heapUsed)}`,
  );
} finally {
  await upstream.close();
  await world.stop();
}
