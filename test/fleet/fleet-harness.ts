/**
 * A fleet for tests, of real processes: gateways (`node src/main.ts`) over one standalone localnet,
 * sharing a real Redis, behind a real HAProxy running the repository's own deploy/haproxy.cfg.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { freePort } from "../store/redis-server.ts";

const NODE = path.resolve("node_modules/.bin/node");

/** The API key every gateway of a test fleet accepts. */
export const FLEET_KEY = "fleet-test-key-0123456789";

/** One gateway process. */
export interface GatewayProcess {
  readonly port: number;
  /** Its Prometheus port (`/metrics`). */
  readonly metricsPort: number;
  readonly url: string;
  readonly child: ChildProcess;
  /** Its log lines so far (stdout, the most recent 64 KiB). */
  logs(): string;
  /** SIGKILL: no drain, no goodbye. */
  kill(): Promise<void>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
}

/** Everything a gateway of a test fleet needs: a localnet served as chain `chain`, and Redis (or none). */
export interface GatewayEnv {
  rpcUrl: string;
  wsUrl: string;
  chain: string;
  redisUrl?: string;
  /** On a fixed port (a restart of the same replica), else a free one. */
  port?: number;
  extra?: Record<string, string>;
}

/** Starts a gateway process; resolves once it listens. */
export async function startGatewayProcess(env: GatewayEnv): Promise<GatewayProcess> {
  const port = env.port ?? (await freePort());
  const child = spawn(NODE, ["src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      PORT: String(port),
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      SOLGATE_RPC_URL: env.rpcUrl,
      SOLGATE_WS_URL: env.wsUrl,
      SOLGATE_CHAIN: env.chain,
      SOLGATE_API_KEYS: FLEET_KEY,
      SOLGATE_TX_REBROADCAST_MS: "500",
      ...(env.redisUrl === undefined ? {} : { SOLGATE_REDIS_URL: env.redisUrl }),
      ...env.extra,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stderr?.on("data", (b: Buffer) => (stderr += b.toString()).slice(-8192));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const metricsPort = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start in time: ${stderr}`)), 60_000);
    createInterface({ input: child.stdout! }).on("line", (line) => {
      stdout = `${stdout}${line}\n`.slice(-65_536);
      if (line.includes('"solgate listening"')) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { metricsPort: number }).metricsPort);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited (${code}) before listening: ${stderr}`));
    });
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    port,
    metricsPort,
    url: `http://127.0.0.1:${port}`,
    child,
    logs: () => stdout,
    kill: () => end("SIGKILL"),
    stop: () => end("SIGTERM"),
  };
}

/** HAProxy in front of gateways, with deploy/haproxy.cfg. */
export interface Proxy {
  readonly url: string;
  /** What HAProxy printed (server state changes), for failure messages. */
  output(): string;
  /** Its front port (to start another on the same one). */
  readonly port: number;
  /** SIGKILL. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts HAProxy with the repository's configuration on a free front port over `gatewayPorts` (three). */
export async function startHaproxy(gatewayPorts: readonly number[], port?: number): Promise<Proxy> {
  const front = port ?? (await freePort());
  const child = spawn("haproxy", ["-f", "deploy/haproxy.cfg", "-db"], {
    env: {
      PATH: process.env.PATH ?? "",
      SOLGATE_FRONT: `127.0.0.1:${front}`,
      ...Object.fromEntries(gatewayPorts.map((p, i) => [`SOLGATE_GATEWAY_${i + 1}`, `127.0.0.1:${p}`])),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (b: Buffer) => (output += b.toString()));
  child.stderr?.on("data", (b: Buffer) => (output += b.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${front}`;
  // Ready once a request through it reaches a gateway that is ready.
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited: ${output}`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`haproxy did not become ready: ${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    port: front,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** What the REST status call answered: the record, or the error's HTTP status and code. */
export type StatusAnswer =
  | { ok: true; status: string; slot?: number }
  | { ok: false; httpStatus: number; code: string };

/** `GET /v1/{chain}/transactions/{signature}/status` on `baseUrl`. */
export async function restStatus(baseUrl: string, chain: string, signature: string): Promise<StatusAnswer> {
  const res = await fetch(`${baseUrl}/v1/${chain}/transactions/${signature}/status`, {
    headers: { authorization: `Bearer ${FLEET_KEY}` },
  });
  const body = (await json(res)) as { status?: string; slot?: number; code?: string };
  if (res.ok) return { ok: true, status: String(body.status), ...(body.slot === undefined ? {} : { slot: body.slot }) };
  return { ok: false, httpStatus: res.status, code: String(body.code) };
}

/** `POST /v1/{chain}/transactions/send` with `confirm: false`; resolves to the HTTP status and body. */
export async function restSend(
  baseUrl: string,
  chain: string,
  wire: Uint8Array,
): Promise<{ httpStatus: number; body: Record<string, unknown> }> {
  const res = await fetch(`${baseUrl}/v1/${chain}/transactions/send`, {
    method: "POST",
    headers: { authorization: `Bearer ${FLEET_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ transaction: Buffer.from(wire).toString("base64"), confirm: false }),
  });
  return { httpStatus: res.status, body: (await json(res)) as Record<string, unknown> };
}

async function json(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${res.url} answered ${res.status} with a body that is not JSON: ${text.slice(0, 300)}`);
  }
}
