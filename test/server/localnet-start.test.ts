/**
 * `npm start` with nothing configured: the embedded localnet starts, the banner gives a dev key and
 * a `buf curl` line that works as printed, and when the localnet dies the gateway exits non-zero.
 */
import { execFile, spawn } from "node:child_process";
import net from "node:net";
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const NODE = path.resolve("node_modules/.bin/node");
const BUF = path.resolve("node_modules/.bin/buf");
const run = promisify(execFile);

let child: ChildProcess;
let stderr = "";
let listening: Record<string, unknown>;
const logs: Record<string, unknown>[] = [];
let exited: Promise<number | null>;

beforeAll(async () => {
  child = spawn(NODE, ["src/main.ts"], {
    env: { PATH: process.env.PATH ?? "", PORT: "0", METRICS_PORT: "0", LOCALNET_SLOT_MS: "100" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
  exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  listening = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (entry.msg === "solgate listening") resolve(entry);
    });
    child.once("exit", () => reject(new Error(`exited before listening:\n${stderr}\n${JSON.stringify(logs)}`)));
  });
  // The banner follows the listening line.
  for (let i = 0; i < 50 && !stderr.includes("ListProgramAccounts"); i++) await new Promise((r) => setTimeout(r, 20));
});
afterAll(() => {
  if (child.exitCode === null) child.kill("SIGKILL");
  if (typeof listening?.localnetPid === "number") {
    try {
      process.kill(listening.localnetPid, "SIGKILL");
    } catch {}
  }
});

describe("npm start with no upstream", () => {
  it("serves chain localnet and prints the port, RPC URL, a dev key and a buf curl line", () => {
    expect(listening.chains).toEqual(["localnet"]);
    expect(stderr).toContain(`http://127.0.0.1:${listening.port}`);
    expect(stderr).toContain(String(listening.localnetUrl));
    expect(stderr).toMatch(/API key \(generated[^:]*\): dev-[\w-]+/);
  });

  it("binds loopback only (it prints a dev key), and says so", async () => {
    // Another address of this machine (loopback's 127.0.0.2 is one on Linux) gets no answer.
    const other = await new Promise<string>((resolve) => {
      const socket = net.connect(Number(listening.port), "127.0.0.2", () => {
        socket.destroy();
        resolve("connected");
      });
      socket.on("error", () => resolve("refused"));
    });
    expect(other).toBe("refused");
    expect(listening.host).toBe("127.0.0.1");
    expect(stderr).toContain(`listening on http://127.0.0.1:${listening.port} `);
  });

  it("answers the printed buf curl and curl lines", async () => {
    const lines = stderr.split("\n");
    const at = lines.findIndex((l) => l.includes("--protocol grpc"));
    const command = lines
      .slice(at, at + 2)
      .join(" ")
      .replace(/\\\s*/g, " ");
    const key = /Bearer ([\w-]+)/.exec(command)![1];
    const url = /(http:\/\/\S+\/solgate\.v1\.FeeService\/GetFees)/.exec(command)![1];
    const out = await run(BUF, [
      "curl",
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "-H",
      `Authorization: Bearer ${key}`,
      url,
    ]);
    // An empty test chain has no market yet: the answer says so rather than inventing levels.
    const body = JSON.parse(out.stdout) as { estimate: { source: string; baseFee: { lamportsPerSignature: string } } };
    expect(body.estimate.baseFee.lamportsPerSignature).toBe("5000");
    expect(["FEE_SOURCE_NONE", "FEE_SOURCE_BLOCKS", "FEE_SOURCE_RECENT_PRIORITIZATION_FEES"]).toContain(
      body.estimate.source,
    );

    const rest = /curl -H "Authorization: Bearer [\w-]+" (\S+)/.exec(stderr)![1];
    const response = await fetch(rest, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    expect(
      ((await response.json()) as { baseFee: { lamportsPerSignature: number } }).baseFee.lamportsPerSignature,
    ).toBe(5000);
  });

  it("exits non-zero when the localnet dies", async () => {
    process.kill(listening.localnetPid as number, "SIGKILL");
    expect(await exited).toBe(1);
    expect(logs.some((l) => l.level === "fatal" && String(l.msg).includes("localnet exited"))).toBe(true);
  });
});
