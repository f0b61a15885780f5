/**
 * `LOCALNET_GEYSER_PORT` reaches the embedded localnet, as `LOCALNET_PORT` does: `npm start` with it set
 * serves Yellowstone gRPC on that port, and the official Node client subscribes there. (It was ignored:
 * the launcher always asked for a free port.)
 */
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient, openStream, request } from "../../packages/localnet/test/geyser/geyser-client.ts";

const NODE = path.resolve("node_modules/.bin/node");

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let child: ChildProcess;
let listening: Record<string, unknown>;
let stderr = "";
let geyserPort: number;

beforeAll(async () => {
  geyserPort = await freePort();
  child = spawn(NODE, ["src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      PORT: "0",
      METRICS_PORT: "0",
      LOCALNET_SLOT_MS: "100",
      LOCALNET_WORLD: "0",
      LOCALNET_TRAFFIC: "0",
      LOCALNET_GEYSER_PORT: String(geyserPort),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
  listening = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry.msg === "solgate listening") resolve(entry);
    });
    child.once("exit", () => reject(new Error(`exited before listening:\n${stderr}`)));
  });
});
afterAll(() => {
  if (child?.exitCode === null) child.kill("SIGKILL");
  if (typeof listening?.localnetPid === "number") {
    try {
      process.kill(listening.localnetPid, "SIGKILL");
    } catch {}
  }
});

describe("npm start with LOCALNET_GEYSER_PORT", () => {
  it("serves Yellowstone gRPC on that port, where the official client subscribes", async () => {
    const client = await connectClient(`http://127.0.0.1:${geyserPort}`);
    const stream = await openStream(client, request({ slots: { all: {} } }));
    try {
      const update = await stream.next((u) => u.slot !== undefined, 20_000, "a slot update");
      expect(Number(update.slot!.slot)).toBeGreaterThan(0);
    } finally {
      stream.close();
    }
  });
});
