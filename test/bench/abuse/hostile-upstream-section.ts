/**
 * abuse-bench's hostile-upstream section: a gateway process (`node src/main.ts`) whose SOLGATE_RPC_URL is
 * a hostile node (test/upstream/hostile-upstream.ts) in front of the bench's localnet; every RPC against
 * every mode, a fresh gateway per mode (started while the node is honest), answers counted by HTTP status
 * and code. In the `huge` mode (2 GB answers streamed without Content-Length) the gateway's RSS is read from
 * outside (/proc/<pid>/status) every 50 ms, against its idle RSS. Targets: 0 INTERNAL, 0 HTTP 500, no hang,
 * every answer the honest value or UNAVAILABLE / 503 with a reason; peak RSS under 2x idle.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { freePort } from "../../store/redis-server.ts";
import { HOSTILE_MODES, startHostileUpstream } from "../../upstream/hostile-upstream.ts";
import { callOnce, judge, requestsOfEveryRpc } from "../../upstream/hostile-calls.ts";
import type { CallOutcome, HostileWorld } from "../../upstream/hostile-calls.ts";

const NODE = path.resolve("node_modules/.bin/node");
const KEY = "hostile-section-key-0123456789";
const CHAIN = "hostile";

/** What the section needs of the bench: its localnet and the world's manifest. */
export interface HostileSectionInput {
  rpcUrl: string;
  wsUrl: string;
  manifest: Omit<HostileWorld, "chain">;
}

/**
 * Runs the section and prints its table. Returns the targets it missed: `failures` (wrong answers, a dead
 * gateway) and `soft` (the memory target, which like abuse-bench's other timing and memory targets fails the
 * run only with `--strict`).
 */
export async function runHostileUpstreamSection(
  input: HostileSectionInput,
): Promise<{ failures: string[]; soft: string[] }> {
  const failures: string[] = [];
  const soft: string[] = [];
  const hostile = await startHostileUpstream(input.rpcUrl, input.wsUrl);
  const requests = await requestsOfEveryRpc({ ...input.manifest, chain: CHAIN }, input.rpcUrl);
  const honest = new Map<string, CallOutcome>();
  console.log(`\nhostile upstream: ${requests.size} RPCs x ${HOSTILE_MODES.length} modes, a fresh gateway per mode`);
  try {
    for (const mode of HOSTILE_MODES) {
      // A 3 s budget cuts the trickle sooner than the default 10 s (the bench runs in CI under a time limit);
      // the 2 GB answers keep the default, so that even a loaded machine reads to the size limit.
      const gateway = await startGatewayProcess(hostile.url, hostile.wsUrl, mode === "huge" ? 10_000 : 3000);
      try {
        await sleep(1000);
        const cold = rssOf(gateway.pid);
        // For the RSS target (the `huge` mode), idle is the gateway at rest once it has served each RPC (its
        // code loaded, its caches made), as a gateway in service is; cold is before any call. The other modes
        // skip the warm-up so that every RPC reaches the node rather than a cache.
        if (mode === "huge") {
          await Promise.all([...requests].map(([rpc, request]) => callOnce(gateway.origin, KEY, rpc, request, 60_000)));
          await sleep(2000);
        }
        const idle = rssOf(gateway.pid);
        hostile.mode = mode;
        let peak = idle;
        const sampler = setInterval(() => {
          peak = Math.max(peak, rssOf(gateway.pid));
        }, 50);
        const started = performance.now();
        const outcomes = await Promise.all(
          [...requests].map(([rpc, request]) => callOnce(gateway.origin, KEY, rpc, request, 60_000)),
        );
        const seconds = (performance.now() - started) / 1000;
        hostile.mode = "honest";
        await sleep(2000);
        clearInterval(sampler);
        const after = rssOf(gateway.pid);
        if (mode === "honest") for (const o of outcomes) honest.set(o.rpc, o);
        const counts = new Map<string, number>();
        for (const o of outcomes) {
          const key = `${o.httpStatus} ${o.code}${o.reason === undefined ? "" : ` ${o.reason}`}${o.failure === undefined ? "" : `/${o.failure}`}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
        const table = [...counts].map(([k, n]) => `${n} x ${k}`).join(", ");
        console.log(`  ${mode.padEnd(14)} ${seconds.toFixed(1).padStart(5)} s  ${table}`);
        if (mode === "huge") {
          const rss = `RSS cold ${mib(cold)}, idle ${mib(idle)}, peak ${mib(peak)} (${(peak / idle).toFixed(2)}x idle, ${(peak / cold).toFixed(2)}x cold), after ${mib(after)} (${(after / idle).toFixed(2)}x idle)`;
          console.log(`  ${"".padEnd(14)} ${rss}`);
          console.log(
            `  ${"".padEnd(14)} ${mib(hostile.hugeBytesSent())} of 2 GB answers written before the gateway hung up`,
          );
          if (peak >= 2 * idle)
            soft.push(`hostile upstream (huge): peak RSS ${(peak / idle).toFixed(2)}x idle (target < 2x)`);
          if (after >= 2 * idle)
            soft.push(`hostile upstream (huge): RSS after ${(after / idle).toFixed(2)}x idle (target < 2x)`);
        }
        if (!gateway.alive()) failures.push(`hostile upstream (${mode}): the gateway died`);
        for (const o of outcomes) {
          if (o.httpStatus === 500 || o.code === "internal" || o.code === "hang")
            failures.push(`hostile upstream (${mode}): ${o.rpc} answered HTTP ${o.httpStatus} ${o.code}`);
          else if (mode === "honest" && o.code === "unavailable")
            failures.push(`hostile upstream (honest): ${o.rpc} unavailable behind an honest node`);
          else if (mode !== "honest") {
            const wrong = judge(o, honest.get(o.rpc));
            if (wrong !== undefined) failures.push(`hostile upstream (${mode}): ${wrong}`);
          }
        }
      } finally {
        hostile.mode = "honest";
        await gateway.stop();
      }
    }
  } finally {
    await hostile.close();
  }
  return { failures, soft };
}

interface GatewayProcess {
  origin: string;
  pid: number;
  alive(): boolean;
  stop(): Promise<void>;
}

async function startGatewayProcess(rpcUrl: string, wsUrl: string, budgetMs: number): Promise<GatewayProcess> {
  const port = await freePort();
  const child = spawn(NODE, ["src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      PORT: String(port),
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      LOG_LEVEL: "error",
      SOLGATE_RPC_URL: rpcUrl,
      SOLGATE_WS_URL: wsUrl,
      SOLGATE_CHAIN: CHAIN,
      SOLGATE_API_KEYS: KEY,
      SOLGATE_UPSTREAM_BUDGET_MS: String(budgetMs),
      // Every call reaches the node: an open breaker would answer before the checks (and the reads) under test.
      SOLGATE_UPSTREAM_BREAKER_FAILURES: "1000",
      SOLGATE_UPSTREAM_BREAKER_FAILURE_PERCENT: "100",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the gateway exited (${child.exitCode})`);
    const ready = await fetch(`${origin}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error("the gateway was not ready in time");
    await sleep(200);
  }
  return {
    origin,
    pid: child.pid!,
    alive: () => child.exitCode === null,
    async stop() {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resident set size of a process, in bytes, read from outside it. */
function rssOf(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? 0 : Number(kb) * 1024;
  } catch {
    return 0;
  }
}

const mib = (n: number) => `${(n / 1048576).toFixed(0)} MiB`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
