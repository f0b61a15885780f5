/**
 * Localnet throughput: accepted sendTransaction/s over HTTP (pre-signed transfers, many
 * concurrent keep-alive connections), with and without preflight, and executed transactions/s
 * (until every accepted transfer has landed).
 * Run: npx node packages/localnet/test/bench/localnet-bench.ts [transfers=20000] [concurrency=64]
 * (BENCH_GEYSER=0: without the Geyser server, to see what it costs the chain.)
 *
 * Baseline: none in this run, so its figures are absolute (sends/s against a target), not ratios. The baseline
 * it should have is agave's `solana-test-validator` (3.0, the version the localnet follows) on the same
 * machine, driven by this same client with the same pre-signed transfers: accepted and executed per second as
 * localnet / test-validator. It is not installable here: there is no Debian or npm package of it, Anza's
 * installer and the GitHub releases are not reachable from this machine (their hosts do not resolve), and
 * building agave from source is not practical on two shared cores.
 */
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import bs58 from "bs58";
import { startLocalnet } from "../../src/launcher.ts";

const TRANSFERS = Number(process.argv[2] ?? 20_000);
const CONCURRENCY = Number(process.argv[3] ?? 64);
const PAYERS = 32;

interface Payer {
  address: string;
  key: Uint8Array;
  privateKey: KeyObject;
}

function keypair(): Payer {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const key = new Uint8Array(Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url"));
  return {
    address: bs58.encode(key),
    key,
    privateKey: createPrivateKey(privateKey.export({ format: "pem", type: "pkcs8" })),
  };
}

/** A signed legacy System transfer, base64 (built by hand: kit's builders cost ~1 ms each). */
function transfer(payer: Payer, to: Uint8Array, blockhash: Uint8Array, lamports: bigint): string {
  const message = new Uint8Array(150);
  message.set([1, 0, 1, 3], 0);
  message.set(payer.key, 4);
  message.set(to, 36);
  message.set(blockhash, 100);
  message.set([1, 2, 2, 0, 1, 12, 2, 0, 0, 0], 132);
  new DataView(message.buffer).setBigUint64(142, lamports, true);
  const signature = sign(null, message, payer.privateKey);
  return Buffer.concat([Buffer.from([1]), signature, message]).toString("base64");
}

/**
 * CPU seconds the localnet process has used (Linux /proc): on a shared machine wall-clock rates
 * depend on the neighbours, CPU per request does not.
 */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks
  } catch {
    return Number.NaN;
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function post(url: URL, body: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        path: "/",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function call(url: URL, method: string, params: unknown[] = []): Promise<any> {
  const response = await post(url, JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }));
  if (response.error) throw new Error(`${method}: ${response.error.message}`);
  return response.result;
}

/** Sends every body with `CONCURRENCY` requests in flight; returns elapsed ms and accepted count. */
async function blast(url: URL, bodies: string[]): Promise<{ ms: number; accepted: number }> {
  let next = 0;
  let accepted = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < bodies.length) {
        const response = await post(url, bodies[next++]!);
        if (typeof response.result === "string") accepted++;
      }
    }),
  );
  return { ms: performance.now() - start, accepted };
}

async function main() {
  const localnet = await startLocalnet({
    port: 0,
    maxQueue: 1_000_000,
    world: false,
    traffic: false,
    geyser: process.env.BENCH_GEYSER !== "0",
    execArgv: process.env.LOCALNET_PROFILE_DIR
      ? ["--cpu-prof", `--cpu-prof-dir=${process.env.LOCALNET_PROFILE_DIR}`]
      : [],
  });
  const url = new URL(localnet.rpcUrl);
  try {
    const payers = Array.from({ length: PAYERS }, keypair);
    const airdrops = await Promise.all(payers.map((p) => call(url, "requestAirdrop", [p.address, 1_000_000_000_000])));
    for (;;) {
      const statuses = await call(url, "getSignatureStatuses", [airdrops]);
      if (statuses.value.every((s: unknown) => s !== null)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const recipients = Array.from({ length: 256 }, () => keypair().key);
    const round = async (label: string, config: Record<string, unknown>) => {
      const { blockhash } = (await call(url, "getLatestBlockhash", [{ commitment: "processed" }])).value;
      const hash = bs58.decode(blockhash);
      const signStart = performance.now();
      const bodies: string[] = [];
      for (let i = 0; i < TRANSFERS; i++) {
        const tx = transfer(payers[i % PAYERS]!, recipients[i % recipients.length]!, hash, 1_000_000n + BigInt(i));
        bodies.push(
          JSON.stringify({
            jsonrpc: "2.0",
            id: i,
            method: "sendTransaction",
            params: [tx, { encoding: "base64", ...config }],
          }),
        );
      }
      const signMs = performance.now() - signStart;
      const before = BigInt((await call(url, "localnet_status")).transactionCount);
      const cpuBefore = cpuSeconds(localnet.pid);
      const { ms, accepted } = await blast(url, bodies);
      const sentAt = performance.now();
      let landed = 0n;
      for (;;) {
        landed = BigInt((await call(url, "localnet_status")).transactionCount) - before;
        if (landed >= BigInt(accepted) || performance.now() - sentAt > 60_000) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const executedMs = performance.now() - sentAt + ms;
      const cpuPerTx = ((cpuSeconds(localnet.pid) - cpuBefore) / TRANSFERS) * 1e6;
      console.log(
        `${label}: ${accepted}/${TRANSFERS} accepted in ${ms.toFixed(0)} ms = ${((accepted / ms) * 1000).toFixed(0)} sends/s ` +
          `(concurrency ${CONCURRENCY}); ${landed} executed by ${executedMs.toFixed(0)} ms after the first send = ` +
          `${((Number(landed) / executedMs) * 1000).toFixed(0)} executed tx/s; client signing ${signMs.toFixed(0)} ms; ` +
          `localnet CPU ${cpuPerTx.toFixed(0)} µs per transaction (accepted and executed) = ${(1e6 / cpuPerTx).toFixed(0)} tx per CPU-second`,
      );
      return {
        label,
        accepted,
        sendsPerSecond: (accepted / ms) * 1000,
        executed: Number(landed),
        executedPerSecond: (Number(landed) / executedMs) * 1000,
        localnetCpuMicrosPerTransaction: cpuPerTx,
      };
    };
    const results = [
      await round("skipPreflight", { skipPreflight: true }),
      await round("preflight (processed)", { preflightCommitment: "processed" }),
    ];
    const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
    console.log(JSON.stringify({ transfers: TRANSFERS, concurrency: CONCURRENCY, loadAverage: load, results }));
  } finally {
    agent.destroy();
    await localnet.stop();
  }
}

await main();
