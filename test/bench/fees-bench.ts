/**
 * Fee benchmarks (`npx node test/bench/fees-bench.ts`), against the real localnet with background traffic:
 * 1. (Retired: GetFees against an empty unary handler, both driven by an in-process grpc-js client, measured
 *    mostly the client. What a cached read costs is measured by hot-path-bench.ts: the gateway against a bare
 *    node:http2 server answering the same bytes, driven by h2load from outside.)
 * 2. EstimateFees latency p50/p99 over gRPC on a warm lookup-table cache (a v0 draft loading a real ALT).
 * 3. Memory held by the fee window with 100,000 distinct write-locked accounts.
 * Bounded in time; talks only to 127.0.0.1.
 */
import { randomBytes } from "node:crypto";
import v8 from "node:v8";
import vm from "node:vm";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { Registry } from "prom-client";
import { createSolanaRpc, generateKeyPairSigner, lamports } from "@solana/kit";
import type { Address, Rpc, SolanaRpcApi } from "@solana/kit";
import {
  EstimateFeesRequestSchema,
  EstimateFeesResponseSchema,
  FeeService,
  GetFeesRequestSchema,
  GetFeesResponseSchema,
} from "../../gen/solgate/v1/fee_service_pb.js";
import { createChainRegistry } from "../../src/chains.ts";
import type { ChainContext } from "../../src/chains.ts";
import { createFeeMarket } from "../../src/fees/fee-market.ts";
import { createFeeWindow } from "../../src/fees/fee-window.ts";
import { base58OfKey } from "../../src/solana/base58-key.ts";
import { startLocalnet } from "@solgate/localnet";
import { planTraffic } from "@solgate/localnet/testing";
import { parseTrafficConfig } from "@solgate/localnet/testing";
import { createApiKeyChecker } from "../../src/server/auth.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createMetrics } from "../../src/server/metrics.ts";
import { createServer } from "../../src/server/server.ts";
import { createFeeServiceImpl } from "../../src/services/fee-service.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import { createLookupTable, draftTransfer } from "../fees/on-chain.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = 50;
const API_KEY = "bench-key";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

// --- the server: FeeService on a real market, plus an empty unary handler ---------------------------
const localnet = await startLocalnet({ traffic: true, world: false });
const upstream = createUpstream({ chain: "localnet", rpcUrls: [localnet.rpcUrl] });
const market = createFeeMarket({ upstream, backfillSlots: 150 });
market.start();
const chains = createChainRegistry(
  [{ name: "localnet", upstream, fees: market } as unknown as ChainContext],
  "localnet",
);
const server = createServer({
  routes(router) {
    router.service(FeeService, createFeeServiceImpl({ chains }));
  },
  auth: createApiKeyChecker([API_KEY]),
  logger: createLogger({ level: "silent" }),
  metrics: createMetrics(new Registry()),
});
const listening = await server.listen(0, "127.0.0.1");
const client = new grpc.Client(`127.0.0.1:${listening.port}`, grpc.credentials.createInsecure());
const metadata = new grpc.Metadata();
metadata.set("authorization", `Bearer ${API_KEY}`);

function unary<I extends DescMessage, O extends DescMessage>(
  path: string,
  input: I,
  output: O,
  request: MessageShape<I>,
) {
  return () =>
    new Promise<MessageShape<O>>((resolve, reject) =>
      client.makeUnaryRequest(
        path,
        (m: MessageShape<I>) => Buffer.from(toBinary(input, m)),
        (b: Buffer) => fromBinary(output, b),
        request,
        metadata,
        (error, value) => (error ? reject(error) : resolve(value!)),
      ),
    );
}

async function load(
  name: string,
  call: () => Promise<unknown>,
  concurrency = CONCURRENCY,
  seconds = SECONDS,
  quiet = false,
) {
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const started = performance.now();
        await call();
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const rate = latencies.length / seconds;
  if (!quiet)
    console.log(
      `${name.padEnd(34)} ${Math.round(rate).toString().padStart(6)} req/s  p50 ${percentile(latencies, 50).toFixed(2)} ms  p99 ${percentile(latencies, 99).toFixed(2)} ms`,
    );
  return { rate, latencies };
}

try {
  // Let the market read a window of traffic first.
  const deadline = Date.now() + 30_000;
  while (market.global().source !== "blocks" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const fees = await unary(
    "/solgate.v1.FeeService/GetFees",
    GetFeesRequestSchema,
    GetFeesResponseSchema,
    create(GetFeesRequestSchema),
  )();
  console.log(
    `market: source ${market.status().source}, ${fees.estimate?.sampleSize} prices, medium ${fees.estimate?.priority?.medium} uL/CU`,
  );

  // 2. EstimateFees on a warm cache: a v0 draft that loads a hot account from a real lookup table.
  const rpc = createSolanaRpc(localnet.rpcUrl) as Rpc<SolanaRpcApi>;
  const payer = await generateKeyPairSigner();
  await rpc.requestAirdrop(payer.address, lamports(1_000_000_000n)).send();
  while ((await rpc.getBalance(payer.address, { commitment: "confirmed" }).send()).value === 0n)
    await new Promise((r) => setTimeout(r, 50));
  const hot = planTraffic(parseTrafficConfig({ LOCALNET_TRAFFIC: "1" }).options).hot[0] as Address;
  const other = (await generateKeyPairSigner()).address;
  const table = await createLookupTable(rpc, payer, [other, hot]);
  const draft = draftTransfer(payer.address, [hot, other], { [table]: [other, hot] });
  const estimate = unary(
    "/solgate.v1.FeeService/EstimateFees",
    EstimateFeesRequestSchema,
    EstimateFeesResponseSchema,
    create(EstimateFeesRequestSchema, { transaction: draft }),
  );
  const first = await estimate();
  console.log(
    `EstimateFees draft: ${draft.length} bytes, write locks ${first.estimate?.writableAccounts.length} (via ALT), medium ${first.estimate?.priority?.medium} uL/CU`,
  );
  await load("EstimateFees, 1 in flight", estimate, 1);
  await load("EstimateFees, 50 in flight", estimate, CONCURRENCY);
  const inProcess: number[] = [];
  for (let i = 0; i < 5000; i++) {
    const started = performance.now();
    await market.forTransaction(draft);
    inProcess.push(performance.now() - started);
  }
  inProcess.sort((a, b) => a - b);
  console.log(
    `forTransaction in process: p50 ${(percentile(inProcess, 50) * 1000).toFixed(0)} us  p99 ${(percentile(inProcess, 99) * 1000).toFixed(0)} us`,
  );
} finally {
  client.close();
  await market.stop();
  await listening.close({ timeoutMs: 500 });
  await upstream.close();
  await localnet.stop();
}

// 3. Memory of the window with 100,000 distinct accounts (150 blocks of 1,000 transactions, 2 write locks each:
//    a hot pool in every block, plus accounts drawn from 100,000 real-looking base58 addresses).
gc();
const m0 = process.memoryUsage().heapUsed;
// Made as block ingestion makes them (base58OfKey: flat strings).
const accounts = Array.from({ length: 100_000 }, () => base58OfKey(randomBytes(32)));
gc();
const m1 = process.memoryUsage().heapUsed;
// The cap is set above 100,000 here so that all of them stay (the default cap is 100,000, which trims to 90%).
const window = createFeeWindow({ windowSlots: 150, maxAccounts: 120_000 });
let next = 0;
const started = performance.now();
for (let slot = 1; slot <= 150; slot++) {
  const transactions = Array.from({ length: 1000 }, (_, i) => ({
    price: BigInt((slot * 7919 + i * 104729) % 2_000_000),
    writable: [i % 10 === 0 ? "pool" : accounts[next++ % accounts.length], accounts[(next * 31) % accounts.length]],
  }));
  window.addBlock(BigInt(slot), transactions);
}
const ingestMs = (performance.now() - started) / 150;
window.global();
gc();
const held = process.memoryUsage().heapUsed - m1;
const stats = window.stats();
console.log(
  `window: ${stats.accounts} accounts, ${stats.samples} prices, ${stats.blocks} blocks: ${(held / 1024 / 1024).toFixed(1)} MiB held by the window ` +
    `(${Math.round(held / stats.accounts)} B per account, prices included) + ${((m1 - m0) / 1024 / 1024).toFixed(1)} MiB for the 100,000 address strings; ` +
    `${ingestMs.toFixed(1)} ms per 1,000-transaction block`,
);
const t0 = performance.now();
for (let i = 0; i < 1000; i++) window.account(accounts[i]);
console.log(
  `account levels, first read after a block: ${(performance.now() - t0).toFixed(2)} us each (1,000 accounts)`,
);
process.exit(0);
