/**
 * ListCollectionNfts on the 10,000-member generated collection, through the real server and a
 * gRPC client: latency of page 1 and page 10 at limit 100 and at limit 1,000 (the last page), and
 * their ratio. Keyset cursors (DAS `after` the last id) should make the ratio about 1.
 * Run: npx node test/bench/collections-bench.ts [collectionSize] [rounds]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { CollectionService } from "../../gen/solgate/v1/collection_service_pb.js";
import { createChainRegistry } from "../../src/chains.ts";
import type { ChainContext } from "../../src/chains.ts";
import { createCollections } from "../../src/collections/collections.ts";
import { startLocalnet } from "@solgate/localnet";
import type { WorldManifest } from "@solgate/localnet";
import { createApiKeyChecker } from "../../src/server/auth.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createServer } from "../../src/server/server.ts";
import { createCollectionServiceImpl } from "../../src/services/collection-service.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";

const size = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 30);
const KEY = "bench";

const dir = mkdtempSync(join(tmpdir(), "solgate-collections-bench-"));
const seeded = performance.now();
const localnet = await startLocalnet({
  startTimeoutMs: 300_000,
  world: { collectionSize: size, tokenHolders: 50, smallMintHolders: [5, 5], dir },
  traffic: false,
});
console.log(
  `localnet seeded with a ${size}-member collection in ${((performance.now() - seeded) / 1000).toFixed(1)} s`,
);
const manifest = JSON.parse(readFileSync(join(dir, "world-manifest.json"), "utf8")) as WorldManifest;
const address = manifest.collections[0].mint;

const upstream = createUpstream({ chain: "localnet", rpcUrls: [localnet.rpcUrl], timeoutMs: 60_000 });
const collections = createCollections({ upstream });
const chains = createChainRegistry(
  [{ name: "localnet", upstream, collections } as unknown as ChainContext],
  "localnet",
);
const server = createServer({
  routes: (router) => router.service(CollectionService, createCollectionServiceImpl({ chains })),
  auth: createApiKeyChecker([KEY]),
  logger: createLogger({ level: "silent" }),
});
const listening = await server.listen(0, "127.0.0.1");
const client = createClient(CollectionService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${listening.port}` }));
const headers = { Authorization: `Bearer ${KEY}` };

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const ms = (x: number) => `${x.toFixed(1)} ms`;

try {
  for (const limit of [100, 1000]) {
    // Walk to page 10 once to get its cursor.
    let cursor = "";
    for (let page = 1; page < 10; page++) {
      const res = await client.listCollectionNfts({ address, limit, cursor }, { headers });
      cursor = res.nextCursor ?? "";
    }
    const page10Cursor = cursor;
    const first: number[] = [];
    const tenth: number[] = [];
    let tenthItems = 0;
    // Warm-up, then interleave so both pages see the same machine load.
    await client.listCollectionNfts({ address, limit }, { headers });
    for (let r = 0; r < rounds; r++) {
      let t = performance.now();
      await client.listCollectionNfts({ address, limit }, { headers });
      first.push(performance.now() - t);
      t = performance.now();
      const res = await client.listCollectionNfts({ address, limit, cursor: page10Cursor }, { headers });
      tenth.push(performance.now() - t);
      tenthItems = res.items.length;
    }
    const p50a = quantile(first, 0.5);
    const p50b = quantile(tenth, 0.5);
    console.log(
      `limit ${limit}: page 1 p50 ${ms(p50a)} p90 ${ms(quantile(first, 0.9))} | page 10 (${tenthItems} items) p50 ${ms(p50b)} p90 ${ms(quantile(tenth, 0.9))} | ratio page10/page1 (p50) ${(p50b / p50a).toFixed(2)}`,
    );
  }
} finally {
  await listening.close({ timeoutMs: 1000 });
  await upstream.close();
  await localnet.stop();
  rmSync(dir, { recursive: true, force: true });
}
