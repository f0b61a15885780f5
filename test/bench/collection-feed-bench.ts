/**
 * The collection feed's core with many watchers, against the localnet world (1,000 members): what 10,000
 * open watches cost in memory, whether upstream calls stay flat as watchers grow (1 watcher vs 10,000, the
 * same seconds of following), and how long one block's event takes to reach every watcher (the fan-out,
 * from the block's application to each watcher's receipt). In process, without a transport: the gRPC
 * stream's own cost is stream-memory-bench.ts's.
 *
 *   npx node --expose-gc test/bench/collection-feed-bench.ts [--watchers 10000] [--seconds 5]
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from "@solana/kit";
import type { Address, Blockhash } from "@solana/kit";
import bs58 from "bs58";
import { createCollections } from "../../src/collections/collections.ts";
import { createCollectionFeed } from "../../src/collections/feed/collection-feed.ts";
import type { FeedUpstream } from "../../src/collections/feed/collection-feed.ts";
import { createMemoryEventLog } from "../../src/collections/feed/event-log.ts";
import { feedBlockOf } from "../../src/collections/feed/feed-block.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import { startCollectionWorld } from "../collections/collection-world.ts";

const { values } = parseArgs({ options: { watchers: { type: "string" }, seconds: { type: "string" } } });
const WATCHERS = Number(values.watchers ?? 10_000);
const SECONDS = Number(values.seconds ?? 5);

const world = await startCollectionWorld(1000);
const upstream = createUpstream({ chain: "localnet", rpcUrls: [world.localnet.rpcUrl], maxRetries: 0 });
let calls = 0;
// Every JSON-RPC call the feed makes, counted as it is made.
const rpc = new Proxy(upstream.rpc, {
  get(target, name, receiver) {
    const method = Reflect.get(target, name, receiver) as (...args: unknown[]) => unknown;
    return (...args: unknown[]) => {
      calls++;
      return method.apply(target, args);
    };
  },
}) as FeedUpstream["rpc"];
const feed = createCollectionFeed({
  upstream: { rpc, das: upstream.das },
  collections: createCollections({ upstream }),
  log: createMemoryEventLog({ retentionMs: 3_600_000, maxEventsPerCollection: 100_000 }),
  heartbeatMs: 60_000,
});
const collection = world.generated.mint;
const stop = new AbortController();
const gc = (globalThis as { gc?: () => void }).gc;
const memory = () => {
  gc?.();
  return { rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed };
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

/** Opens `n` watches, each consuming its stream and noting when each event arrived. */
async function openWatches(n: number, arrivals: number[][]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const stream = await feed.watch(collection, "", [], stop.signal);
    const mine: number[] = [];
    arrivals.push(mine);
    void (async () => {
      for await (const message of stream) if ("event" in message) mine.push(performance.now());
    })();
  }
}

// Phase 1: one watcher, following blocks for SECONDS.
const arrivals: number[][] = [];
await openWatches(1, arrivals);
await sleep(1000);
let from = calls;
await sleep(SECONDS * 1000);
const oneWatcherCalls = calls - from;

// Phase 2: WATCHERS watchers: their memory, then the same seconds of following.
const before = memory();
await openWatches(WATCHERS - 1, arrivals);
await sleep(500);
const after = memory();
from = calls;
await sleep(SECONDS * 1000);
const manyWatcherCalls = calls - from;

// Phase 3: one block's event to every watcher.
const spoof = world.metadata.get(world.manifest.spoofs.unverifiedMembers[0]!)!;
const payer = bs58.encode(randomBytes(32)) as Address;
const message = pipe(
  createTransactionMessage({ version: 0 }),
  (m) => setTransactionMessageFeePayer(payer, m),
  (m) =>
    setTransactionMessageLifetimeUsingBlockhash(
      { blockhash: bs58.encode(randomBytes(32)) as Blockhash, lastValidBlockHeight: 1n },
      m,
    ),
  (m) =>
    appendTransactionMessageInstructions(
      [
        {
          programAddress: "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s" as Address,
          accounts: [spoof.address, payer, payer, collection, payer, payer].map((address) => ({
            address: address as Address,
            role: AccountRole.WRITABLE,
          })),
          data: Uint8Array.of(30),
        },
      ],
      m,
    ),
);
const wire = Buffer.from(getTransactionEncoder().encode(compileTransaction(message)));
const entry = {
  transaction: [wire.toString("base64"), "base64"],
  meta: { err: null, innerInstructions: [], preTokenBalances: [], postTokenBalances: [] },
};
const applied = performance.now();
await feed.applyBlock(feedBlockOf(1n << 40n, { transactions: [entry] }));
for (let waited = 0; arrivals.some((a) => a.length === 0) && waited < 30_000; waited += 10) await sleep(10);
const delays = arrivals
  .map((a) => a[0])
  .filter((t) => t !== undefined)
  .map((t) => t - applied)
  .sort((a, b) => a - b);
const pct = (p: number) => delays[Math.min(delays.length - 1, Math.floor((p / 100) * delays.length))]!;

console.log(`collection feed core, ${WATCHERS} watchers of one collection (localnet world, 1,000 members)`);
console.log(
  `memory: ${WATCHERS - 1} more watches: RSS ${mb(before.rss)} -> ${mb(after.rss)} MB (+${mb(after.rss - before.rss)} MB), ` +
    `heap +${((after.heap - before.heap) / (WATCHERS - 1)).toFixed(0)} B per watch${gc === undefined ? " (no --expose-gc)" : ""}`,
);
console.log(
  `upstream calls in ${SECONDS} s: 1 watcher ${oneWatcherCalls}, ${WATCHERS} watchers ${manyWatcherCalls}; ratio ${(manyWatcherCalls / Math.max(1, oneWatcherCalls)).toFixed(2)}`,
);
console.log(
  `one event to every watcher: ${delays.length}/${WATCHERS} received; p50 ${pct(50).toFixed(1)} ms, p99 ${pct(99).toFixed(1)} ms, max ${delays[delays.length - 1]!.toFixed(1)} ms (from the block's application)`,
);
stop.abort();
await feed.stop();
await upstream.close();
await world.stop();
process.exit(0);
