/**
 * Start-up time of `npm start` (the gateway with the embedded localnet, its default world and traffic):
 * from spawning the process to the first REST fees answer, to the first answer with fee levels (not
 * `"priority": null`), and to /readyz saying ready. Runs `--runs` times in a row (the first may build
 * the world cache, the next ones use it). With `--compare`, runs alternate between the world cache off
 * (LOCALNET_WORLD_CACHE=off: the world is built on every start, as before the cache) and on.
 * LOCALNET_WORLD_CACHE in the bench's own environment chooses the cache's folder. With `--baseline DIR`
 * (another checkout, e.g. the main branch's, with its own `npm ci`), runs alternate between that checkout's
 * `npm start` and this one's, both with the cache on (the baseline's in its own default folder, since its
 * world code differs), and the means are compared.
 *
 *   npx node test/bench/start-up-bench.ts [--runs 2] [--compare | --baseline DIR] [--timeout 120]
 */
import { spawn } from "node:child_process";
import net from "node:net";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "2" },
    compare: { type: "boolean", default: false },
    baseline: { type: "string" },
    timeout: { type: "string", default: "120" },
  },
});
const root = path.resolve(import.meta.dirname, "../..");
const KEY = "start-up-key";

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

async function once(run: number, cache: boolean, checkout = root): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(checkout, "src/main.ts")], {
    cwd: checkout,
    env: {
      PATH: process.env.PATH ?? "",
      PORT: String(port),
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      SOLGATE_API_KEYS: KEY,
      LOG_LEVEL: "warn",
      // The cache's folder may be chosen (another checkout's different world code would replace its file).
      ...(cache
        ? process.env.LOCALNET_WORLD_CACHE === undefined || checkout !== root
          ? {}
          : { LOCALNET_WORLD_CACHE: process.env.LOCALNET_WORLD_CACHE }
        : { LOCALNET_WORLD_CACHE: "off" }),
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  const seconds = () => ((performance.now() - started) / 1000).toFixed(2);
  let firstAnswer: string | undefined;
  let firstLevels: string | undefined;
  let ready: string | undefined;
  let firstPriority: unknown;
  const deadline = performance.now() + Number(args.timeout) * 1000;
  try {
    while (firstLevels === undefined || ready === undefined) {
      if (performance.now() > deadline || child.exitCode !== null)
        throw new Error(`no fee levels after ${seconds()} s:\n${stderr}`);
      const fees = await fetch(`http://127.0.0.1:${port}/v1/localnet/network/fees`, {
        headers: { authorization: `Bearer ${KEY}` },
      }).then(
        async (r) => (r.ok ? ((await r.json()) as { priority: unknown }) : undefined),
        () => undefined,
      );
      if (fees !== undefined && firstAnswer === undefined) {
        firstAnswer = seconds();
        firstPriority = fees.priority;
      }
      if (fees?.priority != null && firstLevels === undefined) firstLevels = seconds();
      if (
        ready === undefined &&
        (await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.ok,
          () => false,
        ))
      )
        ready = seconds();
      await new Promise((r) => setTimeout(r, 50));
    }
    console.log(
      `run ${run} (${checkout === root ? "" : `baseline ${checkout}, `}world cache ${cache ? "on" : "off"}): first fees answer ${firstAnswer} s (priority ${firstPriority === null ? "null" : "set"}), first levels ${firstLevels} s, /readyz ready ${ready} s  (load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")})`,
    );
    const banner = /Started in [\d.]+ s/.exec(stderr);
    if (banner !== null) console.log(`  banner: ${banner[0]}`);
    return Number(firstLevels);
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
if (args.baseline !== undefined) {
  const baseline = path.resolve(args.baseline);
  const times: Record<"baseline" | "this", number[]> = { baseline: [], this: [] };
  // One start of each first, to write (or read) each checkout's world cache; not counted.
  await once(0, true, baseline);
  await once(0, true);
  for (let run = 1; run <= Number(args.runs); run++) {
    const theirs = run % 2 === 1;
    times[theirs ? "baseline" : "this"].push(await once(run, true, theirs ? baseline : root));
  }
  if (times.baseline.length > 0 && times.this.length > 0) {
    console.log(
      `mean time to first fee levels: baseline ${mean(times.baseline).toFixed(2)} s, this checkout ${mean(times.this).toFixed(2)} s, ratio this/baseline ${(mean(times.this) / mean(times.baseline)).toFixed(2)}`,
    );
  }
  process.exit(0);
}
const times: Record<"on" | "off", number[]> = { on: [], off: [] };
for (let run = 1; run <= Number(args.runs); run++) {
  const cache = !args.compare || run % 2 === 0;
  times[cache ? "on" : "off"].push(await once(run, cache));
}
if (args.compare && times.on.length > 0 && times.off.length > 0) {
  console.log(
    `mean time to first fee levels: cache off ${mean(times.off).toFixed(1)} s, on ${mean(times.on).toFixed(1)} s, ratio on/off ${(mean(times.on) / mean(times.off)).toFixed(2)}`,
  );
}
