/**
 * How soon `solgate-localnet` serves after it is started (no world, a fresh ledger directory), measured
 * from outside: spawn the command, poll `getHealth` on its RPC port every 2 ms, stop at the first "ok".
 * The baseline, measured in the same run and the same way, is a bare Node process that starts an HTTP
 * server answering "ok" on that port (`node -e`): what any Node server costs before its own code runs.
 * A third arm runs the command with V8's compile cache off (NODE_DISABLE_COMPILE_CACHE=1), what every
 * start cost before the command enabled it. Runs alternate (command, uncached command, baseline) so load
 * on the machine hits all alike; medians are printed with their ratios. Target: the command ready <= 1 s.
 *
 *   npx node packages/localnet/test/bench/command-start-bench.ts [--runs 9]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const BIN = fileURLToPath(new URL("../../bin/solgate-localnet.js", import.meta.url));
const { values } = parseArgs({ options: { runs: { type: "string", default: "9" } } });
const runs = Number(values.runs);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function healthy(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"jsonrpc":"2.0","id":1,"method":"getHealth"}',
    });
    const text = await response.text();
    return text === "ok" || text.includes('"result":"ok"');
  } catch {
    return false;
  }
}

/**
 * Milliseconds from spawn to the first healthy answer; the process is then killed. A free port can be
 * taken between the probe and the start (or the command's PubSub port, the next one, can be busy: this
 * machine's other work holds many local ports), so a start that exits before answering is tried again
 * on new ports, at most three times.
 */
async function timeToHealthy(args: (port: number) => string[], env: Record<string, string> = {}): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await timeOneStart(args, env);
    } catch (error) {
      if (attempt >= 3 || !(error instanceof ExitedEarly)) throw error;
    }
  }
}

class ExitedEarly extends Error {}

async function timeOneStart(args: (port: number) => string[], env: Record<string, string>): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, args(port), {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, ...env },
  });
  let exited = false;
  child.once("exit", () => (exited = true));
  try {
    for (;;) {
      if (await healthy(port)) return performance.now() - started;
      if (exited) throw new ExitedEarly("the process exited before it answered");
      if (performance.now() - started > 30_000) throw new Error("not healthy within 30 s");
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    child.kill("SIGTERM");
    if (!exited) await new Promise((r) => child.once("exit", r));
  }
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

const BASELINE = `require("node:http").createServer((q, s) => s.end("ok")).listen(Number(process.argv[1]), "127.0.0.1")`;
const command: number[] = [];
const uncached: number[] = [];
const baseline: number[] = [];
const load = loadavg()[0]!;
// One warm-up of each (file system cache), not counted.
const ledgers = mkdtempSync(path.join(tmpdir(), "command-start-bench-"));
const commandArgs = (i: number) => (port: number) => [
  BIN,
  "--reset",
  "--ledger",
  path.join(ledgers, String(i)),
  "--rpc-port",
  String(port),
  "--quiet",
];
await timeToHealthy(commandArgs(-1));
await timeToHealthy((port) => ["-e", BASELINE, String(port)]);
for (let i = 0; i < runs; i++) {
  command.push(await timeToHealthy(commandArgs(i)));
  uncached.push(await timeToHealthy(commandArgs(runs + i), { NODE_DISABLE_COMPILE_CACHE: "1" }));
  baseline.push(await timeToHealthy((port) => ["-e", BASELINE, String(port)]));
}
rmSync(ledgers, { recursive: true, force: true });
const c = median(command);
const b = median(baseline);
const u = median(uncached);
const summary = (xs: number[]) => ({
  median: Math.round(median(xs)),
  min: Math.round(Math.min(...xs)),
  max: Math.round(Math.max(...xs)),
});
console.log(
  JSON.stringify({
    runs,
    loadAverageAtStart: Number(load.toFixed(2)),
    loadAverageAtEnd: Number(loadavg()[0]!.toFixed(2)),
    commandMs: summary(command),
    uncachedCommandMs: summary(uncached),
    bareNodeMs: summary(baseline),
    ratioUncached: Number((u / b).toFixed(2)),
    ratio: Number((c / b).toFixed(2)),
    targetMs: 1000,
    met: c <= 1000,
  }),
);
