/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, or hot-path-bench.ts --profile <dir>): the functions
 * with the most self time, with their share of all samples, and the share of whole files and packages.
 *
 * With --inclusive, also the functions of Solgate's own code (src/) with the most time spent in them and in
 * what they call (a function on the stack twice counts once).
 *
 * With --windows <windows.json> (hot-path-bench.ts --profile writes it beside the profile), only the samples
 * taken while the bench measured the gateway count (its start-up and the baselines' turns left out); --row
 * narrows them to one row's. The profile's timestamps and the bench's are the same monotonic clock. With
 * windows, each line also says how many microseconds of the process's time that is per request (the samples'
 * intervals summed over the requests h2load completed in those windows).
 *
 *   npx node test/bench/cpu-profile-summary.ts <file.cpuprofile> [--top 25] [--inclusive] [--windows <file> [--row grpc]]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface Window {
  row: string;
  fromUs: number;
  toUs: number;
  requests: number;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: "string", default: "25" },
    inclusive: { type: "boolean", default: false },
    windows: { type: "string" },
    row: { type: "string" },
  },
});
if (positionals.length === 0) throw new Error("usage: cpu-profile-summary.ts <file.cpuprofile> [--top 25]");
const profile = JSON.parse(readFileSync(positionals[0], "utf8")) as {
  nodes: ProfileNode[];
  samples: number[];
  startTime: number;
  timeDeltas: number[];
};
const windows =
  values.windows === undefined
    ? undefined
    : (JSON.parse(readFileSync(values.windows, "utf8")) as Window[]).filter(
        (w) => values.row === undefined || w.row === values.row,
      );
if (windows?.length === 0) throw new Error(`no window for row ${values.row} in ${values.windows}`);
// Microseconds per node: each sample stands for the interval since the one before it (shares are of time).
const hits = new Map<number, number>();
let samples = 0;
let total = 0;
let at = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i];
  if (windows !== undefined && !windows.some((w) => at >= w.fromUs && at <= w.toUs)) continue;
  const id = profile.samples[i];
  hits.set(id, (hits.get(id) ?? 0) + profile.timeDeltas[i]);
  total += profile.timeDeltas[i];
  samples++;
}
const requests = windows?.reduce((s, w) => s + (w.requests ?? 0), 0) ?? 0;
const idle = new Set(["(idle)", "(program)"]);

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const node of profile.nodes) {
  const n = hits.get(node.id) ?? 0;
  if (n === 0) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^.*\/node_modules\//, "").replace(/^file:\/\/.*?\/(src|packages|test)\//, "$1/");
  const key = `${functionName || "(anonymous)"} ${where === "" ? "" : `${where}:${lineNumber + 1}`}`.trim();
  byFunction.set(key, (byFunction.get(key) ?? 0) + n);
  const pkg =
    idle.has(functionName) || functionName === "(garbage collector)"
      ? functionName
      : url === ""
        ? "(native)"
        : url.startsWith("node:")
          ? "node: internals"
          : (/node_modules\/(@[^/]+\/[^/]+|[^/]+)/.exec(url)?.[1] ?? where.split("/").slice(0, 2).join("/"));
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + n);
}
const busy = total - [...idle].reduce((s, k) => s + (byPackage.get(k) ?? 0), 0);
const pct = (n: number) =>
  `${((100 * n) / busy).toFixed(1).padStart(5)}%${requests > 0 ? ` ${(n / requests).toFixed(2).padStart(6)} us/req` : ""}`;
console.log(
  `${samples} samples, ${(total / 1e6).toFixed(2)} s, ${(busy / 1e6).toFixed(2)} s busy (shares below are of busy time)${requests > 0 ? `; ${requests} requests, ${(busy / requests).toFixed(1)} us busy per request` : ""}`,
);
console.log("\ntop self time by function:");
for (const [k, n] of [...byFunction]
  .filter(([k]) => !idle.has(k.split(" ")[0]))
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(values.top))) {
  console.log(`  ${pct(n)}  ${k}`);
}
console.log("\nself time by package or folder:");
for (const [k, n] of [...byPackage]
  .filter(([k]) => !idle.has(k))
  .sort((a, b) => b[1] - a[1])
  .slice(0, 15))
  console.log(`  ${pct(n)}  ${k}`);

if (values.inclusive) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const inclusive = new Map<string, number>();
  const nameOf = (n: ProfileNode) =>
    `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.replace(/^file:\/\/.*?\/(src|test)\//, "$1/")}:${n.callFrame.lineNumber + 1}`;
  const walk = (id: number, onStack: Set<string>): number => {
    const node = byId.get(id)!;
    let sum = hits.get(id) ?? 0;
    const name = nameOf(node);
    const mine = /\/(src)\//.test(node.callFrame.url) && !onStack.has(name);
    if (mine) onStack.add(name);
    for (const child of node.children ?? []) sum += walk(child, onStack);
    if (mine) {
      onStack.delete(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + sum);
    }
    return sum;
  };
  walk(profile.nodes[0].id, new Set());
  console.log("\ninclusive time of Solgate's own functions:");
  for (const [k, n] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
    console.log(`  ${pct(n)}  ${k}`);
}
