/**
 * Traces over real OTLP/HTTP: the real process (`node src/main.ts`, embedded localnet) exports to a
 * receiver that decodes the protobuf with the official OpenTelemetry definitions (otlp/receiver.py,
 * PyPI opentelemetry-proto). One traced gRPC call, then SIGTERM: the batch is flushed on the way out,
 * so the receiver holds the RPC span (the caller's child) and its upstream span, under service `solgate`.
 */
import { execFileSync, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AccountService } from "../../gen/solgate/v1/account_service_pb.js";

const NODE = path.resolve("node_modules/.bin/node");
const KEY = "otlp-interop-key";
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  status: { code: number; message: string };
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

/** Starts the receiver; resolves with its port and the spans it has printed so far (a live array). */
async function startReceiver(): Promise<{ port: number; spans: ReceivedSpan[] }> {
  const python = execFileSync("bash", ["test/interop/install-otlp-receiver.sh"], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!;
  const child = spawn(python, ["test/interop/otlp/receiver.py"], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  const spans: ReceivedSpan[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.startsWith("listening ")) resolve(Number(line.slice("listening ".length)));
      else spans.push(JSON.parse(line) as ReceivedSpan);
    });
    child.once("exit", (code) => reject(new Error(`receiver exited (${code})`)));
  });
  return { port, spans };
}

it("exports spans over OTLP/HTTP and flushes them on SIGTERM", async () => {
  const receiver = await startReceiver();
  const gateway = spawn(NODE, ["src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      NODE_ENV: "test",
      PORT: "0",
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      SOLGATE_API_KEYS: KEY,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(gateway);
  let stderr = "";
  gateway.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: gateway.stdout! }).on("line", (line) => {
      const entry = JSON.parse(line) as { msg?: string; port?: number };
      if (entry.msg === "solgate listening") resolve(entry.port!);
    });
    gateway.once("exit", () => reject(new Error(`gateway exited before listening: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => gateway.once("exit", (code) => resolve(code)));

  const traceId = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
  const parentId = Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex");
  const client = createClient(AccountService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
  await client.getAccount(
    { address: "11111111111111111111111111111111" },
    { headers: { authorization: `Bearer ${KEY}`, traceparent: `00-${traceId}-${parentId}-01` } },
  );
  // The batch processor waits 5 s before an export: nothing has reached the receiver yet; SIGTERM flushes.
  gateway.kill("SIGTERM");
  expect(await exited).toBe(0);
  const deadline = Date.now() + 5000;
  while (!receiver.spans.some((s) => s.traceId === traceId && s.kind === 3) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const ours = receiver.spans.filter((s) => s.traceId === traceId);
  // OTLP span kinds: 2 SERVER, 3 CLIENT.
  const rpc = ours.find((s) => s.kind === 2);
  expect(rpc?.name).toBe("solgate.v1.AccountService/GetAccount");
  expect(rpc?.parentSpanId).toBe(parentId);
  expect(rpc?.attributes).toMatchObject({
    "rpc.system": "grpc",
    "rpc.method": "GetAccount",
    "rpc.grpc.status_code": 0,
  });
  expect(rpc?.resource).toMatchObject({ "service.name": "solgate", "telemetry.sdk.language": "nodejs" });
  const upstream = ours.find((s) => s.kind === 3);
  expect(upstream?.name).toBe("getAccountInfo");
  expect(upstream?.parentSpanId).toBe(rpc?.spanId);
  expect(JSON.stringify(receiver.spans)).not.toContain(KEY);
});
