/**
 * REST `GET /v1/localnet/network/fees` against Connect JSON `FeeService/GetFees` on the same
 * gateway in the same run: requests per second and latency of each, and their ratio (target >= 0.9).
 * The gateway runs as `npm start` does (its own process, embedded localnet); the load comes from
 * plain keep-alive HTTP/1.1 clients in this process, the same concurrency for both, in alternating
 * rounds so that drift (the localnet, the fee window, the other core) hits both alike. The
 * gateway's own CPU time per request (from its `process_cpu_seconds_total`) is printed too: on a
 * shared 2-core machine it is the steadier measure of what the REST layer costs.
 *
 *   npx node test/bench/rest-bench.ts [--seconds 4] [--rounds 3] [--concurrency 32] [--log info]
 */
import { spawn } from "node:child_process";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
    concurrency: { type: "string", default: "32" },
    log: { type: "string", default: "warn" },
  },
});
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);
const KEY = "bench-key";

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

interface Target {
  name: string;
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface Result {
  cpuSeconds: number;
  requests: number;
  errors: number;
  seconds: number;
  latenciesMs: number[];
}

/** `CONCURRENCY` loops, each sending its next request when the previous answer is read. */
async function load(port: number, target: Target, seconds: number): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const deadline = performance.now() + seconds * 1000;
  const latenciesMs: number[] = [];
  let requests = 0;
  let errors = 0;
  const once = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const req = http.request(
        { host: "127.0.0.1", port, method: target.method, path: target.path, headers: target.headers, agent },
        (res) => {
          res.on("data", () => {});
          res.on("end", () => {
            if (res.statusCode === 200) {
              requests++;
              latenciesMs.push(performance.now() - started);
            } else errors++;
            resolve();
          });
        },
      );
      req.on("error", () => {
        errors++;
        resolve();
      });
      req.end(target.body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) await once();
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  return { cpuSeconds: 0, requests, errors, seconds: elapsed, latenciesMs };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main(): Promise<void> {
  const port = await freePort();
  const metricsPort = await freePort();
  const cpuSeconds = async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return Number(/^process_cpu_seconds_total (\S+)$/m.exec(text)?.[1] ?? NaN);
  };
  const root = path.resolve(import.meta.dirname, "../..");
  const child = spawn(process.execPath, [path.join(root, "src/main.ts")], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      NODE_ENV: "test", // no seeded world or background traffic: the fee window stays small and steady
      PORT: String(port),
      HOST: "127.0.0.1",
      METRICS_PORT: String(metricsPort),
      SOLGATE_API_KEYS: KEY,
      SOLGATE_DEMO: "0",
      LOG_LEVEL: args.log,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
  const stop = () => {
    if (child.exitCode === null) child.kill("SIGTERM");
  };
  process.on("exit", stop);
  try {
    const auth = { authorization: `Bearer ${KEY}` };
    const rest: Target = {
      name: "REST GET /v1/localnet/network/fees",
      method: "GET",
      path: "/v1/localnet/network/fees",
      headers: auth,
    };
    const connect: Target = {
      name: "Connect JSON FeeService/GetFees",
      method: "POST",
      path: "/solgate.v1.FeeService/GetFees",
      headers: { ...auth, "content-type": "application/json" },
      body: "{}",
    };
    for (let i = 0; ; i++) {
      const ok = await fetch(`http://127.0.0.1:${port}${rest.path}`, { headers: auth }).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (i > 600 || child.exitCode !== null) throw new Error(`gateway did not start:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // Warm-up: JIT, connection pools, the fee window's first conversion.
    await load(port, rest, 1);
    await load(port, connect, 1);

    const totals = new Map<Target, Result>([
      [rest, { cpuSeconds: 0, requests: 0, errors: 0, seconds: 0, latenciesMs: [] }],
      [connect, { cpuSeconds: 0, requests: 0, errors: 0, seconds: 0, latenciesMs: [] }],
    ]);
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so neither always runs on a warmer (or busier) machine.
      for (const target of round % 2 === 0 ? [rest, connect] : [connect, rest]) {
        const cpuBefore = await cpuSeconds();
        const r = await load(port, target, SECONDS);
        const cpu = (await cpuSeconds()) - cpuBefore;
        const total = totals.get(target)!;
        total.cpuSeconds += cpu;
        total.requests += r.requests;
        total.errors += r.errors;
        total.seconds += r.seconds;
        total.latenciesMs.push(...r.latenciesMs);
        console.log(
          `round ${round + 1}: ${target.name.padEnd(36)} ${Math.round(r.requests / r.seconds)} req/s, gateway CPU ${Math.round((cpu * 1e6) / r.requests)} us/request`,
        );
      }
    }
    console.log(
      `\n${ROUNDS} rounds x ${SECONDS} s each, concurrency ${CONCURRENCY}, HTTP/1.1 keep-alive, gateway LOG_LEVEL=${args.log}`,
    );
    const rate = (t: Target) => totals.get(t)!.requests / totals.get(t)!.seconds;
    for (const target of [rest, connect]) {
      const r = totals.get(target)!;
      const sorted = r.latenciesMs.sort((a, b) => a - b);
      console.log(
        `${target.name.padEnd(36)} ${Math.round(rate(target)).toString().padStart(6)} req/s  p50 ${percentile(sorted, 50).toFixed(2)} ms  p99 ${percentile(sorted, 99).toFixed(2)} ms  gateway CPU ${Math.round((r.cpuSeconds * 1e6) / r.requests)} us/request  errors ${r.errors}`,
      );
    }
    const ratio = rate(rest) / rate(connect);
    const cpuPer = (t: Target) => totals.get(t)!.cpuSeconds / totals.get(t)!.requests;
    console.log(
      `ratio REST / Connect JSON: ${ratio.toFixed(3)} (target >= 0.9) ${ratio >= 0.9 ? "OK" : "BELOW TARGET"}`,
    );
    console.log(
      `gateway CPU per request, Connect JSON / REST: ${(cpuPer(connect) / cpuPer(rest)).toFixed(3)} (the same ratio from CPU cost alone)`,
    );
  } finally {
    stop();
  }
}

await main();
