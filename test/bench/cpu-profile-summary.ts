/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, or hot-path-bench.ts --profile <dir>): the functions
 * with the most self time, with their share of all samples, and the share of whole files and packages.
 *
 * With --inclusive, also the functions of Solgate's own code (src/) with the most time spent in them and in
 * what they call (a function on the stack twice counts once).
 *
 *   npx node test/bench/cpu-profile-summary.ts <file.cpuprofile> [--top 25] [--inclusive]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string", default: "25" }, inclusive: { type: "boolean", default: false } },
});
if (positionals.length === 0) throw new Error("usage: cpu-profile-summary.ts <file.cpuprofile> [--top 25]");
const profile = JSON.parse(readFileSync(positionals[0], "utf8")) as { nodes: ProfileNode[]; samples: number[] };
const hits = new Map<number, number>();
for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
const total = profile.samples.length;
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
const pct = (n: number) => `${((100 * n) / busy).toFixed(1).padStart(5)}%`;
console.log(`${total} samples, ${busy} busy (shares below are of busy samples)`);
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
