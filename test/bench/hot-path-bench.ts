/**
 * The hot path: what a cached read costs Solgate against what the runtime can do. The gateway runs as
 * `npm start` runs it (its own process, embedded localnet with background traffic, no seeded world); a
 * second process (bare-server.ts) serves the very bytes the gateway answered — status, headers, body and
 * gRPC trailers, recorded from the gateway first — from bare `node:http` and `node:http2` servers after
 * the same Bearer check. Both are driven by h2load (outside either process), one row at a time,
 * alternating baseline and gateway, and each row prints req/s, p50, p99, the server process's CPU time per
 * request (from /proc/<pid>/stat) and two ratios, both "the gateway as a fraction of bare" (1.00 = as good as
 * bare, lower = worse): req/s gateway / bare, and CPU per request bare / gateway (the inverse of the CPU
 * figures' order, so that both read the same way).
 *
 *   npx node test/bench/hot-path-bench.ts [--seconds 8] [--connections 16] [--rounds 1]
 *       [--streams 1] [--rows rest-h1,rest-h2,grpc,grpc-web,connect-proto,connect-json,estimate,status,status-seen]
 *       [--log warn] [--profile <dir>] [--root <checkout>]
 * --profile: the gateway runs under --cpu-prof into <dir>; --root: the gateway of another checkout (an older
 * commit's worktree) is measured, with this bench and this bare server.
 *
 * Needs h2load (nghttp2-client). Talks only to 127.0.0.1.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { EstimateFeesRequestSchema, GetFeesRequestSchema } from "../../gen/solgate/v1/fee_service_pb.js";
import { GetTransactionStatusRequestSchema } from "../../gen/solgate/v1/transaction_service_pb.js";
import { draftTransfer } from "../fees/on-chain.ts";

const ALL_ROWS = [
  "rest-h1",
  "rest-h2",
  "grpc",
  "grpc-web",
  "connect-proto",
  "connect-json",
  "estimate",
  "status",
  "status-seen",
] as const;
const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "8" },
    connections: { type: "string", default: "16" },
    streams: { type: "string", default: "1" },
    rounds: { type: "string", default: "1" },
    rows: { type: "string", default: ALL_ROWS.join(",") },
    log: { type: "string", default: "warn" },
    profile: { type: "string" },
    root: { type: "string" },
  },
});
const SECONDS = Number(args.seconds);
const CONNECTIONS = Number(args.connections);
// Concurrent streams per HTTP/2 connection (h2load -m), as multiplexing clients (gRPC) use them; HTTP/1.1 rows keep 1.
const STREAMS = Number(args.streams);
const ROUNDS = Number(args.rounds);
const KEY = "bench-key";
// --root: the checkout whose gateway is measured (default this one), e.g. a worktree of an older commit.
const root = path.resolve(args.root ?? path.join(import.meta.dirname, "../.."));
const tmp = mkdtempSync(path.join(os.tmpdir(), "hot-path-bench-"));

/** One request shape, sent to both servers. */
interface Row {
  name: string;
  label: string;
  h2: boolean;
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

interface Recorded {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  trailers?: Record<string, string>;
}

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  cpuUs: number;
  failed: number;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

function envelope(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + message.length);
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, 5);
  return out;
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after "pid (comm)".
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// Headers that differ per response or per connection: not part of "the same bytes".
const VOLATILE = new Set(["date", "x-request-id", "content-length", "connection", "keep-alive", "transfer-encoding"]);

function stable(headers: http.IncomingHttpHeaders | http2.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(":") || VOLATILE.has(name) || value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return out;
}

/** One request to the gateway, recording what it answered. */
async function record(port: number, row: Row): Promise<Recorded> {
  if (!row.h2) {
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port, method: row.method, path: row.path, headers: row.headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, headers: stable(res.headers), body: Buffer.concat(chunks) }),
          );
        },
      );
      req.on("error", reject);
      req.end(row.body);
    });
  }
  const session = http2.connect(`http://127.0.0.1:${port}`);
  try {
    return await new Promise((resolve, reject) => {
      const stream = session.request(
        { ":method": row.method, ":path": row.path, ...row.headers },
        { endStream: row.body === undefined },
      );
      let status = 0;
      let headers: Record<string, string> = {};
      let trailers: Record<string, string> | undefined;
      const chunks: Buffer[] = [];
      stream.on("response", (h) => {
        status = Number(h[":status"]);
        headers = stable(h);
      });
      stream.on("trailers", (t) => (trailers = stable(t)));
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () =>
        resolve({ status, headers, body: Buffer.concat(chunks), ...(trailers === undefined ? {} : { trailers }) }),
      );
      stream.on("error", reject);
      if (row.body !== undefined) stream.end(row.body);
    });
  } finally {
    session.close();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Drives `port` with h2load for SECONDS and measures the server process `pid`. */
async function drive(row: Row, port: number, pid: number): Promise<Measured> {
  const logFile = path.join(tmp, "h2load.log");
  rmSync(logFile, { force: true });
  const argv = [
    "-D",
    String(SECONDS),
    "--warm-up-time",
    "1",
    "-c",
    String(CONNECTIONS),
    "-m",
    String(row.h2 ? STREAMS : 1),
    "-t",
    "1",
    "--log-file",
    logFile,
  ];
  if (!row.h2) argv.push("--h1");
  for (const [name, value] of Object.entries(row.headers)) argv.push("-H", `${name}: ${value}`);
  if (row.method === "POST") {
    const bodyFile = path.join(tmp, `${row.name}.body`);
    writeFileSync(bodyFile, row.body ?? new Uint8Array(0));
    argv.push("-d", bodyFile);
  }
  argv.push(`http://127.0.0.1:${port}${row.path}`);
  // Measured from the end of the warm-up second: h2load's own log holds the measured requests only.
  let cpuStart = 0;
  const warm = setTimeout(() => (cpuStart = cpuSecondsOf(pid)), 1000);
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn("h2load", argv, { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.on("data", (b: Buffer) => (text += b.toString()));
    child.stderr.on("data", (b: Buffer) => (text += b.toString()));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`h2load exited ${code}:\n${text}`))));
  });
  clearTimeout(warm);
  const cpu = cpuSecondsOf(pid) - cpuStart;
  const done = /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed/.exec(out);
  const rps = /finished in [\d.]+s, ([\d.]+) req\/s/.exec(out);
  if (done === null || rps === null) throw new Error(`unexpected h2load output:\n${out}`);
  const latencies = readFileSync(logFile, "utf8")
    .trim()
    .split("\n")
    .map((line) => Number(line.split("\t")[2]) / 1000)
    .sort((a, b) => a - b);
  const non2xx = /status codes: \d+ 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  const failed = Number(done[3]) + (non2xx === null ? 0 : Number(non2xx[1]) + Number(non2xx[2]) + Number(non2xx[3]));
  return {
    rps: Number(rps[1]),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuUs: (cpu * 1e6) / Math.max(1, Number(done[2])),
    failed,
  };
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
}

async function main(): Promise<void> {
  const port = await freePort();
  const localnetPort = await freePort();
  const children: ChildProcess[] = [];
  const stopAll = () => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  };
  process.on("exit", stopAll);
  process.on("SIGINT", () => process.exit(130));

  const nodeFlags = args.profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", path.resolve(args.profile)];
  const gateway = spawn(process.execPath, [...nodeFlags, path.join(root, "src/main.ts")], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      NODE_ENV: "test",
      LOCALNET_WORLD: "0",
      LOCALNET_TRAFFIC: "1", // fee levels to serve, changing once a slot
      LOCALNET_PORT: String(localnetPort),
      PORT: String(port),
      HOST: "127.0.0.1",
      METRICS_PORT: String(await freePort()),
      SOLGATE_API_KEYS: KEY,
      SOLGATE_DEMO: "0",
      LOG_LEVEL: args.log,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(gateway);
  let stderr = "";
  gateway.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
  const auth = { authorization: `Bearer ${KEY}` };

  // Ready when the fee window has levels.
  for (let i = 0; ; i++) {
    const body = await fetch(`http://127.0.0.1:${port}/v1/localnet/network/fees`, { headers: auth }).then(
      (r) => (r.ok ? r.json() : undefined),
      () => undefined,
    );
    if ((body as { priority?: unknown } | undefined)?.priority != null) break;
    if (i > 1200 || gateway.exitCode !== null) throw new Error(`gateway did not serve fee levels:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  // A known signature: an airdrop on the localnet, confirmed. A draft: an unsigned transfer.
  const rpc = createSolanaRpc(`http://127.0.0.1:${localnetPort}`);
  const payer = await generateKeyPairSigner();
  const signature = await rpc.requestAirdrop(payer.address, lamports(1_000_000_000n)).send();
  for (let i = 0; ; i++) {
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    if (value[0]?.confirmationStatus === "confirmed" || value[0]?.confirmationStatus === "finalized") break;
    if (i > 400) throw new Error("airdrop did not confirm");
    await new Promise((r) => setTimeout(r, 50));
  }
  const destination = (await generateKeyPairSigner()).address;
  const draft = draftTransfer(payer.address, [destination]);
  // A send the gateway tracks: a transfer sent through it (REST, confirm true), for the `status` row. The
  // airdrop above, which the gateway did not send but saw on its Geyser stream, is the `status-seen` row's.
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const signedSend = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) =>
        appendTransactionMessageInstructions(
          [getTransferSolInstruction({ source: payer, destination, amount: lamports(1_000_000n) })],
          m,
        ),
    ),
  );
  const sent = await fetch(`http://127.0.0.1:${port}/v1/localnet/transactions/send`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ transaction: getBase64EncodedWireTransaction(signedSend), confirm: true }),
  });
  if (!sent.ok) throw new Error(`the gateway refused the tracked send: ${sent.status} ${await sent.text()}`);
  const trackedSignature = getSignatureFromTransaction(signedSend);

  const grpcHeaders = { ...auth, "content-type": "application/grpc", te: "trailers" };
  // Not the empty message: h2load cannot send an empty body file. Naming the chain is the same call.
  const emptyFees = toBinary(GetFeesRequestSchema, create(GetFeesRequestSchema, { chain: "localnet" }));
  const rows: Row[] = [
    {
      name: "rest-h1",
      label: "REST GET /network/fees, HTTP/1.1",
      h2: false,
      method: "GET",
      path: "/v1/localnet/network/fees",
      headers: auth,
    },
    {
      name: "rest-h2",
      label: "REST GET /network/fees, h2c",
      h2: true,
      method: "GET",
      path: "/v1/localnet/network/fees",
      headers: auth,
    },
    {
      name: "grpc",
      label: "gRPC GetFees (h2c)",
      h2: true,
      method: "POST",
      path: "/solgate.v1.FeeService/GetFees",
      headers: grpcHeaders,
      body: envelope(emptyFees),
    },
    {
      name: "grpc-web",
      label: "gRPC-Web GetFees (HTTP/1.1)",
      h2: false,
      method: "POST",
      path: "/solgate.v1.FeeService/GetFees",
      headers: { ...auth, "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
      body: envelope(emptyFees),
    },
    {
      name: "connect-proto",
      label: "Connect binary GetFees (HTTP/1.1)",
      h2: false,
      method: "POST",
      path: "/solgate.v1.FeeService/GetFees",
      headers: { ...auth, "content-type": "application/proto" },
      body: emptyFees,
    },
    {
      name: "connect-json",
      label: "Connect JSON GetFees (HTTP/1.1)",
      h2: false,
      method: "POST",
      path: "/solgate.v1.FeeService/GetFees",
      headers: { ...auth, "content-type": "application/json" },
      body: new TextEncoder().encode('{"chain":"localnet"}'),
    },
    {
      name: "estimate",
      label: "gRPC EstimateFees, a draft (h2c)",
      h2: true,
      method: "POST",
      path: "/solgate.v1.FeeService/EstimateFees",
      headers: grpcHeaders,
      body: envelope(toBinary(EstimateFeesRequestSchema, create(EstimateFeesRequestSchema, { transaction: draft }))),
    },
    {
      name: "status",
      label: "gRPC GetTransactionStatus, tracked",
      h2: true,
      method: "POST",
      path: "/solgate.v1.TransactionService/GetTransactionStatus",
      headers: grpcHeaders,
      body: envelope(
        toBinary(
          GetTransactionStatusRequestSchema,
          create(GetTransactionStatusRequestSchema, { signature: trackedSignature }),
        ),
      ),
    },
    {
      name: "status-seen",
      label: "gRPC GetTransactionStatus, seen",
      h2: true,
      method: "POST",
      path: "/solgate.v1.TransactionService/GetTransactionStatus",
      // Another content type spelling keys it apart from `status` in the bare server (same bytes otherwise).
      headers: { ...grpcHeaders, "content-type": "application/grpc+proto" },
      body: envelope(
        toBinary(GetTransactionStatusRequestSchema, create(GetTransactionStatusRequestSchema, { signature })),
      ),
    },
  ];
  const wanted = new Set(args.rows.split(","));
  const selected = rows.filter((r) => wanted.has(r.name));
  if (selected.length === 0) throw new Error(`no rows selected; choose from ${ALL_ROWS.join(",")}`);

  // Record the gateway's answers, then serve them from the bare servers.
  const recorded = [];
  for (const row of selected) {
    const r = await record(port, row);
    const grpcStatus = r.trailers?.["grpc-status"] ?? r.headers["grpc-status"];
    if (r.status !== 200 || (grpcStatus !== undefined && grpcStatus !== "0")) {
      throw new Error(
        `${row.name}: the gateway answered ${r.status} ${JSON.stringify({ ...r.headers, ...r.trailers })} ${r.body.toString()}`,
      );
    }
    recorded.push({
      method: row.method,
      path: row.path,
      contentType: row.headers["content-type"] ?? "",
      status: r.status,
      headers: r.headers,
      body: r.body.toString("base64"),
      ...(r.trailers === undefined ? {} : { trailers: r.trailers }),
      h2: row.h2,
    });
  }
  // The bare server keys routes by method, path and content-type; REST over h1 and h2 share the bytes.
  const routesFile = path.join(tmp, "routes.json");
  writeFileSync(routesFile, JSON.stringify({ key: KEY, routes: recorded }));
  const bare = spawn(process.execPath, [path.join(import.meta.dirname, "bare-server.ts"), routesFile], {
    cwd: root,
    stdio: ["pipe", "pipe", "inherit"],
  });
  children.push(bare);
  const barePorts = await new Promise<{ h1: number; h2: number }>((resolve, reject) => {
    bare.stdout!.once("data", (b: Buffer) => resolve(JSON.parse(b.toString())));
    bare.once("exit", (code) => reject(new Error(`bare server exited ${code}`)));
  });
  // Sanity: the bare server answers what the gateway answered, bytes, content type and trailers. Rows with
  // the same route (REST over h1 and h2) get the answer recorded last: the fee levels may move in between.
  const served = new Map(recorded.map((r) => [`${r.method} ${r.path} ${r.contentType}`, r]));
  for (const row of selected) {
    const r = await record(row.h2 ? barePorts.h2 : barePorts.h1, row);
    const want = served.get(`${row.method} ${row.path} ${row.headers["content-type"] ?? ""}`)!;
    const same =
      r.status === want.status &&
      r.body.toString("base64") === want.body &&
      r.headers["content-type"] === want.headers["content-type"] &&
      JSON.stringify(r.trailers ?? {}) === JSON.stringify(want.trailers ?? {});
    if (!same)
      throw new Error(
        `${row.name}: the bare server's answer differs from the gateway's: ${JSON.stringify({ got: { ...r, body: r.body.toString("base64") }, want })}`,
      );
  }

  console.log(
    `hot-path-bench: ${SECONDS} s per run (after 1 s warm-up), ${CONNECTIONS} connections, ${STREAMS} stream(s) each on HTTP/2, ${ROUNDS} round(s), gateway LOG_LEVEL=${args.log}`,
  );
  console.log(`load average at start: ${loadAverage()} (${os.cpus().length} cores)`);
  const results = new Map<string, { bare: Measured[]; gateway: Measured[] }>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const row of selected) {
      const runs = results.get(row.name) ?? { bare: [], gateway: [] };
      results.set(row.name, runs);
      // Alternate which goes first each round.
      const order = round % 2 === 0 ? (["bare", "gateway"] as const) : (["gateway", "bare"] as const);
      for (const which of order) {
        const m =
          which === "bare"
            ? await drive(row, row.h2 ? barePorts.h2 : barePorts.h1, bare.pid!)
            : await drive(row, port, gateway.pid!);
        runs[which].push(m);
        console.log(
          `  round ${round + 1} ${row.name.padEnd(14)} ${which.padEnd(8)} ${Math.round(m.rps).toString().padStart(6)} req/s  p50 ${m.p50.toFixed(2)} ms  p99 ${m.p99.toFixed(2)} ms  CPU ${Math.round(m.cpuUs)} us/req${m.failed > 0 ? `  FAILED ${m.failed}` : ""}  (load ${loadAverage()})`,
        );
      }
    }
  }

  const mean = (ms: Measured[], f: (m: Measured) => number) => ms.reduce((s, m) => s + f(m), 0) / ms.length;
  console.log(
    `\n${"row".padEnd(36)} ${"bare req/s".padStart(10)} ${"gw req/s".padStart(9)} ${"gw/bare".padStart(7)}  ${"bare p50/p99 ms".padStart(16)}  ${"gw p50/p99 ms".padStart(14)}  ${"CPU us/req bare/gw".padStart(19)} ${"CPU bare/gw".padStart(11)}`,
  );
  for (const row of selected) {
    const r = results.get(row.name)!;
    const b = mean(r.bare, (m) => m.rps);
    const g = mean(r.gateway, (m) => m.rps);
    const bc = mean(r.bare, (m) => m.cpuUs);
    const gc = mean(r.gateway, (m) => m.cpuUs);
    console.log(
      `${row.label.padEnd(36)} ${Math.round(b).toString().padStart(10)} ${Math.round(g).toString().padStart(9)} ${(g / b).toFixed(2).padStart(7)}  ${`${mean(r.bare, (m) => m.p50).toFixed(2)}/${mean(r.bare, (m) => m.p99).toFixed(2)}`.padStart(16)}  ${`${mean(r.gateway, (m) => m.p50).toFixed(2)}/${mean(r.gateway, (m) => m.p99).toFixed(2)}`.padStart(14)}  ${`${Math.round(bc)}/${Math.round(gc)}`.padStart(19)} ${(bc / gc).toFixed(2).padStart(11)}`,
    );
  }
  const h1 = results.get("rest-h1");
  const h2 = results.get("rest-h2");
  if (h1 !== undefined && h2 !== undefined) {
    console.log(
      `gateway REST h2c / HTTP/1.1: ${(mean(h2.gateway, (m) => m.rps) / mean(h1.gateway, (m) => m.rps)).toFixed(2)} (bare: ${(mean(h2.bare, (m) => m.rps) / mean(h1.bare, (m) => m.rps)).toFixed(2)})`,
    );
  }
  console.log(`load average at end: ${loadAverage()}`);
  stopAll();
  if (args.profile !== undefined) await new Promise((r) => gateway.once("exit", r));
  rmSync(tmp, { recursive: true, force: true });
}

await main();
