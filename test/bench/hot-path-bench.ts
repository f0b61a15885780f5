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
 *       [--log warn] [--profile <dir>] [--root <checkout>] [--env KEY=VALUE ...] [--ci [--floor 0.4] [--tries 3]]
 * --profile: the gateway runs under --cpu-prof into <dir>; --root: the gateway of another checkout (an older
 * commit's worktree) is measured, with this bench and this bare server.
 *
 * Needs h2load (nghttp2-client). Talks only to 127.0.0.1.
 */
import { execFileSync, spawn } from "node:child_process";
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
    seconds: { type: "string" },
    connections: { type: "string", default: "16" },
    streams: { type: "string", default: "1" },
    rounds: { type: "string", default: "1" },
    rows: { type: "string" },
    log: { type: "string", default: "warn" },
    profile: { type: "string" },
    root: { type: "string" },
    ci: { type: "boolean", default: false },
    floor: { type: "string" },
    tries: { type: "string" },
    env: { type: "string", multiple: true },
  },
});
// --ci: the short form CI runs (.ci/run): REST over HTTP/1.1 and gRPC GetFees, 4 s each, failing (exit 1) when
// either serves under --floor (0.4) x the bare server with Solgate's headers (req/s, and CPU per request, bare /
// gateway); a row under it is measured again, up to --tries (3) in all, so that one unlucky run on a shared
// machine does not fail CI while a real loss fails every try.
const CI = args.ci;
const SECONDS = Number(args.seconds ?? (CI ? "4" : "8"));
const CONNECTIONS = Number(args.connections);
// Concurrent streams per HTTP/2 connection (h2load -m), as multiplexing clients (gRPC) use them; HTTP/1.1 rows keep 1.
const STREAMS = Number(args.streams);
const ROUNDS = Number(args.rounds);
const ROWS = args.rows ?? (CI ? "rest-h1,grpc" : ALL_ROWS.join(","));
const FLOOR = args.floor === undefined ? (CI ? 0.4 : undefined) : Number(args.floor);
const TRIES = Number(args.tries ?? (FLOOR === undefined ? "1" : "3"));
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
  /** The measured seconds, in the monotonic clock's microseconds (V8's CPU profiles use the same clock). */
  fromUs: number;
  toUs: number;
  /** Requests done in the measured seconds. */
  done: number;
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
  let fromUs = 0;
  const warm = setTimeout(() => {
    cpuStart = cpuSecondsOf(pid);
    fromUs = Number(process.hrtime.bigint() / 1000n);
  }, 1000);
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
  const toUs = Number(process.hrtime.bigint() / 1000n);
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
    fromUs,
    toUs,
    done: Number(done[2]),
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
      // --env KEY=VALUE: more of the gateway's environment (e.g. SOLGATE_GEYSER_URL=off), to find what costs.
      ...Object.fromEntries(
        (args.env ?? []).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
      ),
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
  const wanted = new Set(ROWS.split(","));
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
  // Two baselines. `bare` sends what the gateway sent: its headers (request id, CORS vary, ...) and trailers.
  // `bare-min` sends only what HTTP and the protocol need: the content type (and length), and for gRPC the
  // grpc-status/grpc-message trailers; no request id.
  const minimal = recorded.map((r) => ({
    ...r,
    headers: { "content-type": r.headers["content-type"] ?? "" },
    ...(r.trailers === undefined
      ? {}
      : {
          trailers: Object.fromEntries(
            Object.entries(r.trailers).filter(([name]) => name === "grpc-status" || name === "grpc-message"),
          ),
        }),
  }));
  const bare = await startBare("bare", { key: KEY, routes: recorded });
  const bareMin = await startBare("bare-min", { key: KEY, routes: minimal, requestId: false });
  const servers = [
    { name: "bare", ports: bare.ports, pid: bare.child.pid! },
    { name: "bare-min", ports: bareMin.ports, pid: bareMin.child.pid! },
    { name: "gateway", ports: { h1: port, h2: port }, pid: gateway.pid! },
  ] as const;
  type ServerName = (typeof servers)[number]["name"];

  async function startBare(
    name: string,
    spec: object,
  ): Promise<{ child: ChildProcess; ports: { h1: number; h2: number } }> {
    const routesFile = path.join(tmp, `${name}.json`);
    writeFileSync(routesFile, JSON.stringify(spec));
    const child = spawn(process.execPath, [path.join(import.meta.dirname, "bare-server.ts"), routesFile], {
      cwd: root,
      stdio: ["pipe", "pipe", "inherit"],
    });
    children.push(child);
    const ports = await new Promise<{ h1: number; h2: number }>((resolve, reject) => {
      child.stdout!.once("data", (b: Buffer) => resolve(JSON.parse(b.toString())));
      child.once("exit", (code) => reject(new Error(`${name} server exited ${code}`)));
    });
    return { child, ports };
  }

  // Sanity: the bare servers answer what the gateway answered, bytes, content type and (bare) trailers. Rows with
  // the same route (REST over h1 and h2) get the answer recorded last: the fee levels may move in between.
  for (const [server, routes] of [
    [bare, recorded],
    [bareMin, minimal],
  ] as const) {
    const served = new Map(routes.map((r) => [`${r.method} ${r.path} ${r.contentType}`, r]));
    for (const row of selected) {
      const r = await record(row.h2 ? server.ports.h2 : server.ports.h1, row);
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
  }

  console.log(
    `hot-path-bench: ${SECONDS} s per run (after 1 s warm-up), ${CONNECTIONS} connections, ${STREAMS} stream(s) each on HTTP/2, ${ROUNDS} round(s), gateway LOG_LEVEL=${args.log}, commit ${commitOf(root)}${args.root === undefined ? "" : ` (${root})`}`,
  );
  console.log(`load average at start: ${loadAverage()} (${os.cpus().length} cores)`);
  for (const r of recorded) {
    const extra = Object.keys(r.headers).filter((h) => h !== "content-type");
    console.log(
      `  ${r.h2 ? "h2" : "h1"} ${r.method} ${r.path} (${r.contentType || "no content type"}): ${Buffer.from(r.body, "base64").length} body bytes; headers beyond HTTP's: x-request-id${extra.length === 0 ? "" : `, ${extra.join(", ")}`}${r.trailers === undefined ? "" : `; trailers ${Object.keys(r.trailers).join(", ")}`}`,
    );
  }
  type Runs = Record<ServerName, Measured[]>;
  const results = new Map<string, Runs>();
  const windows: { row: string; round: number; fromUs: number; toUs: number; requests: number }[] = [];
  const measure = async (row: Row, round: number, runs: Runs) => {
    // Alternate which goes first each round.
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    for (const server of order) {
      const m = await drive(row, row.h2 ? server.ports.h2 : server.ports.h1, server.pid);
      runs[server.name].push(m);
      if (server.name === "gateway")
        windows.push({ row: row.name, round, fromUs: m.fromUs, toUs: m.toUs, requests: m.done });
      console.log(
        `  round ${round + 1} ${row.name.padEnd(14)} ${server.name.padEnd(8)} ${Math.round(m.rps).toString().padStart(6)} req/s  p50 ${m.p50.toFixed(2)} ms  p99 ${m.p99.toFixed(2)} ms  CPU ${Math.round(m.cpuUs)} us/req${m.failed > 0 ? `  FAILED ${m.failed}` : ""}  (load ${loadAverage()})`,
      );
    }
  };
  for (let round = 0; round < ROUNDS; round++) {
    for (const row of selected) {
      const runs = results.get(row.name) ?? { bare: [], "bare-min": [], gateway: [] };
      results.set(row.name, runs);
      await measure(row, round, runs);
    }
  }

  const mean = (ms: Measured[], f: (m: Measured) => number) => ms.reduce((s, m) => s + f(m), 0) / ms.length;
  const ratios = (r: Runs) => ({
    bare: mean(r.gateway, (m) => m.rps) / mean(r.bare, (m) => m.rps),
    min: mean(r.gateway, (m) => m.rps) / mean(r["bare-min"], (m) => m.rps),
    cpu: mean(r.bare, (m) => m.cpuUs) / mean(r.gateway, (m) => m.cpuUs),
  });
  // --floor: a row under it against `bare` (the same bytes and headers, as the issue measures), in req/s or in
  // CPU per request, is measured again, alone, up to TRIES in all; the figures printed are those of its last
  // try. Both ratios must hold in one try: a bare server's unlucky seconds can lift a slow gateway's req/s ratio
  // over the floor (seen with a 50 us busy wait per request: gRPC 0.53 in req/s, 0.36 in CPU), and the CPU
  // ratio is the steadier of the two. `bare-min` is printed.
  const gated = new Set(["rest-h1", "grpc"]);
  const failing: string[] = [];
  if (FLOOR !== undefined) {
    for (const row of selected.filter((r) => gated.has(r.name))) {
      for (let tryNo = 1; ; tryNo++) {
        const r = ratios(results.get(row.name)!);
        if (r.bare >= FLOOR && r.cpu >= FLOOR) break;
        console.log(
          `  ${row.name}: ${r.bare.toFixed(2)} x bare in req/s, ${r.cpu.toFixed(2)} in CPU per request (${r.min.toFixed(2)} x bare-min): under the floor ${FLOOR} (try ${tryNo} of ${TRIES})`,
        );
        if (tryNo === TRIES) {
          failing.push(row.name);
          break;
        }
        const runs: Runs = { bare: [], "bare-min": [], gateway: [] };
        results.set(row.name, runs);
        await measure(row, tryNo, runs);
      }
    }
  }

  // docs/benchmarks.md's table, as printed here (means of the rounds).
  const TARGETS: Record<string, string> = {
    "rest-h1": "0.5",
    "rest-h2": "0.9 x HTTP/1.1",
    grpc: "0.5",
    "grpc-web": "0.4",
    "connect-proto": "0.5",
    "connect-json": "0.5",
    status: "0.5",
  };
  const n = (x: number) => Math.round(x).toLocaleString("en-US");
  console.log(
    `\n${new Date().toISOString().slice(0, 10)}, commit ${commitOf(root)}: \`${["npx node test/bench/hot-path-bench.ts", ...process.argv.slice(2)].join(" ")}\``,
  );
  console.log(
    "\n| row | bare req/s: Solgate's headers / HTTP's only | gateway req/s | gw / bare | gw / bare-min | CPU us bare / bare-min / gw | target |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  for (const row of selected) {
    const r = results.get(row.name)!;
    const { bare: toBare, min: toMin } = ratios(r);
    const cpu = (name: ServerName) => Math.round(mean(r[name], (m) => m.cpuUs));
    const failed = [...r.bare, ...r["bare-min"], ...r.gateway].reduce((s, m) => s + m.failed, 0);
    const bold = (x: number) => (gated.has(row.name) ? `**${x.toFixed(2)}**` : x.toFixed(2));
    console.log(
      `| ${row.label} | ${n(mean(r.bare, (m) => m.rps))} / ${n(mean(r["bare-min"], (m) => m.rps))} | ${n(mean(r.gateway, (m) => m.rps))} | ${bold(toBare)} | ${bold(toMin)} | ${cpu("bare")} / ${cpu("bare-min")} / ${cpu("gateway")} | ${TARGETS[row.name] ?? ""}${failed > 0 ? ` (${failed} failed requests)` : ""} |`,
    );
  }
  const h1 = results.get("rest-h1");
  const h2 = results.get("rest-h2");
  if (h1 !== undefined && h2 !== undefined) {
    console.log(
      `\n- gateway REST h2c / HTTP/1.1: ${(mean(h2.gateway, (m) => m.rps) / mean(h1.gateway, (m) => m.rps)).toFixed(2)} (bare: ${(mean(h2.bare, (m) => m.rps) / mean(h1.bare, (m) => m.rps)).toFixed(2)}, bare-min: ${(mean(h2["bare-min"], (m) => m.rps) / mean(h1["bare-min"], (m) => m.rps)).toFixed(2)})`,
    );
  }
  console.log(`- load average at end: ${loadAverage()}`);
  if (args.profile !== undefined) {
    // The gateway's measured seconds, for cpu-profile-summary.ts --windows: a profile of those seconds alone.
    writeFileSync(path.join(path.resolve(args.profile), "windows.json"), JSON.stringify(windows, null, 1));
  }
  stopAll();
  if (args.profile !== undefined) await new Promise((r) => gateway.once("exit", r));
  rmSync(tmp, { recursive: true, force: true });
  if (FLOOR !== undefined) {
    if (failing.length > 0) {
      console.log(`\nFAIL: ${failing.join(", ")} under ${FLOOR} x bare (req/s or CPU per request) in ${TRIES} tries`);
      process.exitCode = 1;
    } else
      console.log(
        `\nok: REST (HTTP/1.1) and gRPC GetFees at or above ${FLOOR} x bare, in req/s and in CPU per request`,
      );
  }
}

/** The commit a checkout is at (short), or "?" outside git. */
function commitOf(dir: string): string {
  try {
    return execFileSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "?";
  }
}

await main();
