/**
 * The real process (`node src/main.ts`): SIGTERM turns health NOT_SERVING, ends open streams with
 * UNAVAILABLE and exits 0; bad configuration exits 2 with every problem listed.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.js";

const NODE = path.resolve("node_modules/.bin/node");
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

function start(env: Record<string, string>) {
  const child = spawn(NODE, ["src/main.ts"], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const lines: Record<string, unknown>[] = [];
  let stderr = "";
  child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
  const listening = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      lines.push(entry);
      if (entry.msg === "solgate listening") resolve(entry.port as number);
    });
    child.once("exit", () => reject(new Error(`exited before listening: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, lines, listening, exited, stderr: () => stderr };
}

/** A gateway on an ephemeral port for a remote chain that never answers (nothing here needs one). */
const REMOTE_CHAIN = {
  PORT: "0",
  HOST: "127.0.0.1",
  METRICS_PORT: "0",
  SOLGATE_RPC_URL: "http://127.0.0.1:9",
  SOLGATE_API_KEYS: "sigterm-test-key",
};

describe("node src/main.ts", () => {
  it("drains on SIGTERM: NOT_SERVING, streams end UNAVAILABLE, exit 0", async () => {
    const p = start(REMOTE_CHAIN);
    const port = await p.listening;
    const health = createClient(Health, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
    const seen: Status[] = [];
    let ended: ConnectError | undefined;
    const watching = (async () => {
      try {
        for await (const r of health.watch({ service: "" })) {
          seen.push(r.status);
          if (seen.length === 1) p.child.kill("SIGTERM");
        }
      } catch (e) {
        ended = ConnectError.from(e);
      }
    })();
    await watching;
    expect(seen).toEqual([Status.SERVING, Status.NOT_SERVING]);
    expect(ended?.code).toBe(Code.Unavailable);
    expect(await p.exited).toBe(0);
    expect(p.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(["shutting down", "draining", "server closed"]));
    expect(JSON.stringify(p.lines)).not.toContain("sigterm-test-key");
  });

  it("exits on a second SIGTERM even when its log reader stalls, then goes away", async () => {
    const p = start(REMOTE_CHAIN);
    const port = await p.listening;
    // A log reader that stops reading: the pipe fills while a burst of requests logs a line each.
    p.child.stdout!.pause();
    const health = createClient(Health, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
    for (let i = 0; i < 20; i++) await Promise.all(Array.from({ length: 100 }, () => health.check({ service: "" })));
    // "Now", twice, as an impatient operator or a supervisor does; then the reader dies.
    p.child.kill("SIGTERM");
    p.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    p.child.stdout!.destroy();
    const code = await Promise.race([
      p.exited,
      new Promise((r) => setTimeout(() => r("still running after 8 s"), 8_000)),
    ]);
    expect(code).not.toBe("still running after 8 s");
  });

  it("exits 2 listing every configuration problem", async () => {
    const p = start({ PORT: "x", LOG_LEVEL: "loud" });
    await p.listening.catch(() => {});
    expect(await p.exited).toBe(2);
    expect(p.stderr()).toMatch(/PORT must be an integer/);
    expect(p.stderr()).toMatch(/LOG_LEVEL must be one of/);
  });
});
