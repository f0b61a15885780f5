/**
 * A real `redis-server` (Debian's redis-server package; .ci/run installs it) on a free loopback
 * port, in a temporary directory of its own, for tests that need Redis: stopped, killed and started
 * again on the same port and data, as an operator's Redis would be.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A running (or stopped) Redis of a test. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Starts it again (same port, same directory: with `appendonly`, the same data). */
  start(): Promise<void>;
  /** SIGKILL: no goodbye, no final save. */
  kill(): Promise<void>;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts a Redis; `appendonly` turns on AOF (fsync every second), as docs/fleet.md recommends. */
export async function startRedisServer(options: { appendonly?: boolean } = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "solgate-redis-"));
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""];
    args.push("--appendonly", options.appendonly ? "yes" : "no", "--appendfsync", "everysec");
    const proc = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
    child = proc;
    await new Promise<void>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 10_000);
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("Ready to accept connections")) {
          clearTimeout(timer);
          resolve();
        }
      };
      proc.stdout?.on("data", onData);
      proc.stderr?.on("data", onData);
      proc.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      proc.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}):\n${out}`));
      });
    });
  }

  async function end(signal: NodeJS.Signals): Promise<void> {
    const proc = child;
    child = undefined;
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    proc.kill(signal);
    await exited;
  }

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    kill: () => end("SIGKILL"),
    async stop() {
      await end("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
