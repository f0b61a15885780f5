/**
 * What an open server stream costs on this stack, without Solgate: the floor under the WatchStatus
 * memory target. Opens 1,000 then 10,000 gRPC server streams (20 HTTP/2 connections) against
 *   raw:     node:http2 answering each stream with headers and one message, kept open;
 *   connect: connect-node (the adapter Solgate uses) with a WatchStatus handler that yields once, then waits;
 * each server in its own process, and prints its RSS and V8 heap, and the per-stream cost as a ratio.
 * (transactions-bench.ts measures the same for the whole gateway.)
 *
 *   npx node test/bench/stream-memory-bench.ts [--streams 10000]
 */
import { fork } from "node:child_process";
import http2 from "node:http2";
import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { TransactionStatus } from "../../gen/solgate/v1/transaction_pb.js";

type Memory = { rss: number; heap: number };

if (process.env.STREAM_BENCH_SERVER !== undefined) {
  serve(process.env.STREAM_BENCH_SERVER);
} else {
  await main();
}

function serve(kind: string): void {
  const server =
    kind === "raw"
      ? http2.createServer().on("stream", (stream) => {
          stream.respond({ ":status": 200, "content-type": "application/grpc+proto" });
          stream.write(Buffer.from([0, 0, 0, 0, 0]));
          stream.on("error", () => {});
        })
      : http2.createServer(
          connectNodeAdapter({
            routes: (router) =>
              router.service(TransactionService, {
                async *watchStatus(req, ctx) {
                  yield {
                    event: { case: "record", value: { signature: req.signature, status: TransactionStatus.SUBMITTED } },
                  };
                  await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
                },
              }),
          }),
        );
  server.listen(0, "127.0.0.1", () => process.send!({ port: (server.address() as { port: number }).port }));
  process.on("message", () => {
    const m = process.memoryUsage();
    process.send!({ rss: m.rss / 1e6, heap: m.heapUsed / 1e6 });
  });
}

async function measure(kind: string, totals: number[]): Promise<Memory[]> {
  const child = fork(new URL(import.meta.url).pathname, [], { env: { ...process.env, STREAM_BENCH_SERVER: kind } });
  const port = await new Promise<number>((resolve) => child.once("message", (m: { port: number }) => resolve(m.port)));
  const memory = () =>
    new Promise<Memory>((resolve) => {
      child.once("message", resolve);
      child.send("memory");
    });
  const clients = Array.from({ length: 20 }, () =>
    createClient(TransactionService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` })),
  );
  const abort = new AbortController();
  const readings = [await memory()];
  let opened = 0;
  for (const total of totals) {
    const need = total - opened;
    await new Promise<void>((allOpen) => {
      let got = 0;
      for (let i = 0; i < need; i++) {
        void (async () => {
          try {
            for await (const _ of clients[i % clients.length].watchStatus(
              { signature: "x" },
              { signal: abort.signal },
            )) {
              if (++got === need) allOpen();
            }
          } catch {
            // aborted at the end
          }
        })();
      }
    });
    opened = total;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    readings.push(await memory());
  }
  abort.abort();
  child.kill();
  return readings;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { streams: { type: "string", default: "10000" } } });
  const totals = [1000, Number(values.streams)];
  const results: Record<string, Memory[]> = {};
  for (const kind of ["raw", "connect"]) {
    results[kind] = await measure(kind, totals);
    const [before, ...after] = results[kind];
    for (const [i, m] of after.entries()) {
      console.log(
        `${kind.padEnd(8)} ${String(totals[i]).padStart(6)} streams: RSS ${m.rss.toFixed(0)} MB, heap ${m.heap.toFixed(0)} MB ` +
          `(${(((m.heap - before.heap) * 1e3) / totals[i]).toFixed(1)} KB heap per stream)`,
      );
    }
  }
  const perStream = (kind: string) => (results[kind].at(-1)!.heap - results[kind][0].heap) / totals.at(-1)!;
  console.log(
    `heap per open stream, connect-node / raw http2: ${(perStream("connect") / perStream("raw")).toFixed(1)}`,
  );
  process.exit(0);
}
