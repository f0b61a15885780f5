/**
 * What tracing costs (`npx node test/bench/tracing-bench.ts`): GetFees over REST (h2c, answered from
 * memory, so the per-request overhead shows most) driven by h2load, an outside load generator, against
 * real gateway processes on one localnet:
 *   - tracing off (no OTLP endpoint: the default);
 *   - tracing on, every request sampled, exporting over OTLP/HTTP to a sink in this process that reads
 *     and drops the bodies (two spans per REST call: the HTTP span and the RPC span);
 *   - tracing on with nothing sampled (`OTEL_TRACES_SAMPLER_ARG=0`): the instrumentation without recording;
 *   - with `BENCH_BASE_DIR=<a checkout without tracing>` (e.g. `git archive <commit> | tar -x -C dir`, with
 *     node_modules linked), that code too, for the cost of tracing being off;
 *   - the baseline of the same run: a bare Node HTTP/2 server answering a fixed JSON body after the same Bearer
 *     check the gateway makes (its own key checker) and with a fresh `x-request-id`, as hot-path-bench's bare
 *     server does.
 * Rounds alternate between the variants (the machine is shared); medians are printed with their ratios.
 */
import { execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import type { ChildProcess } from "node:child_process";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { readFileSync } from "node:fs";
import { startLocalnet } from "@solgate/localnet";
import { createApiKeyChecker } from "../../src/server/auth.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const KEY = "bench-key";

const localnet = await startLocalnet({ world: false, traffic: false });
const route = "/v1/localnet-bench/network/fees";
const children: ChildProcess[] = [];

// The OTLP sink: reads every body, counts the bytes, answers 200 with an empty protobuf response.
let exportedBytes = 0;
let exports = 0;
const sink = http.createServer((req, res) => {
  req.on("data", (chunk: Buffer) => (exportedBytes += chunk.length));
  req.on("end", () => {
    exports++;
    res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
  });
});
await new Promise<void>((r) => sink.listen(0, "127.0.0.1", r));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

// The baseline: a bare HTTP/2 server with a body of the same size class as GetFees'.
const bareBody = JSON.stringify({
  low: 0,
  medium: 1000,
  high: 5000,
  veryHigh: 20000,
  recommended: 1000,
  slot: 123456,
  updatedAt: new Date().toISOString(),
});
const bareKeys = createApiKeyChecker([KEY]);
const bare = http2.createServer((req, res) => {
  if (!bareKeys.isAuthorized(req.headers.authorization)) {
    res.writeHead(401, { "content-type": "application/json" }).end('{"code":"unauthenticated"}');
    return;
  }
  res.writeHead(200, { "content-type": "application/json", "x-request-id": randomUUID() }).end(bareBody);
});
await new Promise<void>((r) => bare.listen(0, "127.0.0.1", r));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;

/** CPU seconds (user + system) a process has used, from /proc (Linux). */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  // Fields 14 and 15 of stat (utime, stime), in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const pids = new Map<string, number | undefined>();

async function gateway(cwd: string, extra: Record<string, string>): Promise<string> {
  const child = spawn(path.join(cwd, "node_modules/.bin/node"), ["src/main.ts"], {
    cwd,
    env: {
      PATH: process.env.PATH ?? "",
      PORT: "0",
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      SOLGATE_RPC_URL: localnet.rpcUrl,
      SOLGATE_CHAIN: "localnet-bench",
      SOLGATE_API_KEYS: KEY,
      ...extra,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (!line.includes('"solgate listening"')) return;
      const url = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
      pids.set(url + route, child.pid);
      resolve(url);
    });
    child.once("exit", (code) => reject(new Error(`gateway exited (${code})`)));
  });
}

// Never execFileSync: the bare server and the sink live in this process and must keep answering.
const run = promisify(execFile);

/** Requests per second from h2load on `url`, and the gateway's CPU microseconds per request served. */
async function rate(url: string): Promise<{ rate: number; cpuUs: number }> {
  const cpuBefore = cpuSeconds(pids.get(url));
  const { stdout: out } = await run("h2load", [
    "-c",
    "16",
    "-m",
    "4",
    "-D",
    String(SECONDS),
    "-H",
    `authorization: Bearer ${KEY}`,
    url,
  ]);
  const match = /finished in [\d.]+s, ([\d.]+) req\/s/.exec(out);
  const failed = /requests: .* (\d+) failed/.exec(out);
  if (match === null || (failed !== null && Number(failed[1]) > 0)) throw new Error(`h2load:\n${out}`);
  const done = /requests: \d+ total, \d+ started, (\d+) done/.exec(out);
  // Every answer a 2xx (a 401 from a failed Bearer check would count as done, and cost less).
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  if (codes === null || Number(codes[1]) === 0 || codes.slice(2).some((n) => n !== "0"))
    throw new Error(`h2load: answers that are not 2xx:\n${out}`);
  return {
    rate: Number(match[1]),
    cpuUs: ((cpuSeconds(pids.get(url)) - cpuBefore) * 1e6) / Number(done?.[1] ?? Number.NaN),
  };
}

const variants: { name: string; url: string }[] = [
  { name: "bare node", url: bareUrl },
  { name: "tracing off", url: (await gateway(process.cwd(), {})) + route },
  { name: "tracing on", url: (await gateway(process.cwd(), { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl })) + route },
  {
    name: "tracing on, nothing sampled",
    url: (await gateway(process.cwd(), { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_TRACES_SAMPLER_ARG: "0" })) + route,
  },
];
const baseDir = process.env.BENCH_BASE_DIR;
if (baseDir !== undefined)
  variants.push({ name: "base (no tracing code)", url: (await gateway(path.resolve(baseDir), {})) + route });
// Warm-up: the fee window's first fill and JIT.
await new Promise((r) => setTimeout(r, 2000));
for (const v of variants) await run("h2load", ["-c", "4", "-n", "2000", "-H", `authorization: Bearer ${KEY}`, v.url]);

const results = new Map<string, { rate: number; cpuUs: number }[]>(variants.map((v) => [v.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const v of variants) results.get(v.name)!.push(await rate(v.url));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const m = Object.fromEntries([...results].map(([name, xs]) => [name, median(xs.map((x) => x.rate))]));
const cpu = Object.fromEntries([...results].map(([name, xs]) => [name, median(xs.map((x) => x.cpuUs))]));
for (const [name, xs] of results) {
  const rates = xs.map((x) => x.rate.toFixed(0)).join(", ");
  const cpus = xs.map((x) => x.cpuUs.toFixed(0)).join(", ");
  console.log(
    `${name}: median ${m[name].toFixed(0)} req/s (rounds: ${rates}); gateway CPU per request: median ${cpu[name].toFixed(0)} us (rounds: ${cpus})`,
  );
}
// CPU per request is the steadier figure on a shared machine: throughput swings with the neighbours' load.
const pair = (a: string, b: string) =>
  `${(m[a] / m[b]).toFixed(3)} (req/s), ${(cpu[a] / cpu[b]).toFixed(3)} (CPU per request)`;
console.log(`tracing on / tracing off: ${pair("tracing on", "tracing off")}`);
console.log(`tracing on, nothing sampled / tracing off: ${pair("tracing on, nothing sampled", "tracing off")}`);
if (baseDir !== undefined)
  console.log(`tracing off / base (no tracing code): ${pair("tracing off", "base (no tracing code)")}`);
console.log(`tracing off / bare node: ${(m["tracing off"] / m["bare node"]).toFixed(3)} (req/s)`);
console.log(`OTLP exports received: ${exports} requests, ${(exportedBytes / 1e6).toFixed(1)} MB`);

for (const c of children) c.kill("SIGTERM");
await Promise.all(children.map((c) => new Promise((r) => (c.exitCode === null ? c.once("exit", r) : r(null)))));
sink.close();
bare.close();
await localnet.stop();
