/**
 * The process the abuse bench drives: a real gateway (`node src/main.ts`) in a child process over a
 * standalone localnet with a seeded world, logging at warn. Its error-level log lines and its stderr
 * are kept, its memory is read from its own Prometheus metrics, and its liveness from health.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import { freePort } from "../../store/redis-server.ts";

const NODE = path.resolve("node_modules/.bin/node");

/** The chain's name at the gateway ("localnet" is kept for the embedded chain). */
export const CHAIN = "abuse";

/** The seeded world, as its manifest writes it (the fields the bench uses). */
export interface Manifest {
  collections: { mint: string; seeded: boolean; sampleMembers: string[] }[];
  fungibleMints: { symbol: string; mint: string }[];
  demoWallet: { address: string; keypairFile: string };
}

/** The gateway and its chain. */
export interface GatewayUnderTest {
  origin: string;
  apiKey: string;
  localnet: LocalnetHandle;
  manifest: Manifest;
  child: ChildProcess;
  /** Error and fatal log lines, and anything written to stderr. */
  errors(): string[];
  /** Whether the process is still running. */
  alive(): boolean;
  /** A full garbage collection, through the inspector (needs `execArgv: ["--inspect=127.0.0.1:0"]`). */
  collectGarbage(): Promise<void>;
  /** `process_resident_memory_bytes` and `nodejs_heap_size_used_bytes`, from its /metrics. */
  memory(): Promise<{ rss: number; heap: number }>;
  stop(): Promise<void>;
}

/** Options: world sizes, slot time, and gateway environment beyond the defaults. */
export interface GatewayOptions {
  world: { collectionSize: number; tokenHolders: number };
  slotMs: number;
  env?: Record<string, string>;
  /** Node flags of the gateway process. */
  execArgv?: string[];
}

/** Starts the localnet (with its world and traffic) and the gateway on it; resolves once /readyz says ready. */
export async function startGatewayUnderTest(options: GatewayOptions): Promise<GatewayUnderTest> {
  const dir = mkdtempSync(path.join(tmpdir(), "abuse-bench-"));
  // The collection stays as seeded (the launcher passes its environment on to the localnet child): the hostile
  // upstream section compares each answer with the honest one, and traffic that mints and burns would move it.
  process.env.LOCALNET_COLLECTION_TRAFFIC ??= "0";
  const localnet = await startLocalnet({
    slotMs: options.slotMs,
    world: { ...options.world, dir },
    traffic: true,
    startTimeoutMs: 240_000,
  });
  const manifest = JSON.parse(readFileSync(path.join(dir, "world-manifest.json"), "utf8")) as Manifest;
  const port = await freePort();
  const metricsPort = await freePort();
  const apiKey = "abuse-bench-key-0123456789";
  const child = spawn(NODE, [...(options.execArgv ?? []), "src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      PORT: String(port),
      HOST: "127.0.0.1",
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: "warn",
      SOLGATE_RPC_URL: localnet.rpcUrl,
      SOLGATE_WS_URL: localnet.wsUrl,
      SOLGATE_CHAIN: CHAIN,
      // The localnet's block engine: SendBundle and its kin are fuzzed down to the engine.
      SOLGATE_JITO_URL: localnet.blockEngineUrl,
      SOLGATE_API_KEYS: apiKey,
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const errors: string[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (/"level":"(error|fatal)"/.test(line)) errors.push(line.slice(0, 2000));
  });
  let inspector: string | undefined;
  child.stderr!.on("data", (b: Buffer) => {
    const text = b.toString();
    const url = /Debugger listening on (ws:\/\/\S+)/.exec(text)?.[1];
    if (url !== undefined) inspector = url;
    // The inspector's own notices are not errors.
    const rest = text
      .split("\n")
      .filter(
        (l) => l.trim() !== "" && !/^(Debugger listening on|For help, see:|Debugger attached|Debugger ending)/.test(l),
      );
    if (rest.length > 0) errors.push(`stderr: ${rest.join("\n").slice(0, 2000)}`);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited (${child.exitCode}): ${errors.join("\n")}`);
    const ready = await fetch(`${origin}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`gateway not ready in time: ${errors.join("\n")}`);
    await new Promise((r) => setTimeout(r, 250));
  }

  return {
    origin,
    apiKey,
    localnet,
    manifest,
    child,
    errors: () => [...errors],
    alive: () => child.exitCode === null && child.signalCode === null,
    async collectGarbage() {
      if (inspector === undefined) throw new Error("the gateway runs without --inspect");
      const ws = new WebSocket(inspector);
      await new Promise<void>((resolve, reject) => {
        ws.onerror = () => reject(new Error("inspector unreachable"));
        ws.onopen = () => ws.send(JSON.stringify({ id: 1, method: "HeapProfiler.collectGarbage" }));
        ws.onmessage = (event) => {
          if ((JSON.parse(String(event.data)) as { id?: number }).id === 1) resolve();
        };
      });
      ws.close();
    },
    async memory() {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const read = (name: string) =>
        Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);
      return { rss: read("process_resident_memory_bytes"), heap: read("nodejs_heap_size_used_bytes") };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      await localnet.stop();
    },
  };
}
