// Opens N watch streams against a spawned gateway and reports timings and RSS.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { startLocalnet } from "../../src/localnet/launcher.ts";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { generateKeyPairSigner, createSolanaRpc, getSignatureFromTransaction, pipe, createTransactionMessage, setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash, appendTransactionMessageInstructions, signTransactionMessageWithSigners, getBase64EncodedWireTransaction } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
const N = Number(process.argv[2] ?? 2000);
const localnet = await startLocalnet({ slotMs: 200 });
const rpc = createSolanaRpc(localnet.rpcUrl);
const child = spawn(process.execPath, [...(process.env.PROF ? ["--cpu-prof", "--cpu-prof-dir=/tmp/txprof"] : []), ...(process.env.SNAP ? ["--heapsnapshot-signal=SIGUSR2", "--diagnostic-dir=/tmp/txsnap"] : []), new URL("../../src/main.ts", import.meta.url).pathname], { env: { ...process.env, PORT: "0", HOST: "127.0.0.1", METRICS_PORT: "0", SOLGATE_RPC_URL: localnet.rpcUrl, SOLGATE_CHAIN: "bench", SOLGATE_API_KEYS: "k".repeat(20), LOG_LEVEL: process.env.LL ?? "info" }, stdio: ["ignore", "pipe", "inherit"] });
let metricsPort = 0;
const port: number = await new Promise((res) => { let b = ""; child.stdout!.on("data", (t) => { b += t; for (const l of b.split("\n")) if (l.includes("solgate listening")) { metricsPort = JSON.parse(l).metricsPort; res(JSON.parse(l).port); } }); });
const heap = async () => { const t = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(); return t.split("\n").filter((l) => /^nodejs_heap_size_used_bytes|^nodejs_external_memory_bytes|^nodejs_heap_size_total_bytes/.test(l)).map((l) => l.replace(/ (\d+)$/, (_, n) => " " + (Number(n) / 1048576).toFixed(0) + "MB")).join("; "); };
const headers = { Authorization: `Bearer ${"k".repeat(20)}` };
const clients = Array.from({ length: 20 }, () => createClient(TransactionService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` })));
const payer = await generateKeyPairSigner();
await rpc.requestAirdrop(payer.address, 10n ** 12n as never).send();
await new Promise((r) => setTimeout(r, 800));
await localnet.control({ freeze: true });
const sigs: string[] = [];
for (let i = 0; i < 100; i++) {
  const { value: blockhash } = await rpc.getLatestBlockhash().send();
  const to = (await generateKeyPairSigner()).address;
  const m = pipe(createTransactionMessage({ version: 0 }), (m) => setTransactionMessageFeePayerSigner(payer, m), (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m), (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: to, amount: 1000000n + BigInt(i) })], m));
  const s = await signTransactionMessageWithSigners(m);
  await clients[0].sendTransaction({ transaction: new Uint8Array(Buffer.from(getBase64EncodedWireTransaction(s), "base64")), confirm: false }, { headers });
  sigs.push(getSignatureFromTransaction(s));
}
const rss = () => Number(readFileSync(`/proc/${child.pid}/status`, "utf8").match(/VmRSS:\s+(\d+)/)![1]) / 1024;
console.log("rss0", rss().toFixed(0), await heap());
{
  const ac0 = new AbortController();
  const t = performance.now();
  for (let i = 0; i < 50; i++) {
    const it = clients[i % 20].watchStatus({ signature: sigs[i % 100] }, { headers, signal: ac0.signal })[Symbol.asyncIterator]();
    await it.next();
  }
  const t2 = performance.now();
  for (let i = 0; i < 50; i++) await clients[i % 20].getTransactionStatus({ signature: sigs[i % 100] }, { headers });
  console.log("sequential 50 unary status:", ((performance.now() - t2) / 50).toFixed(1), "ms each");
  console.log("sequential 50 first records:", ((performance.now() - t) / 50).toFixed(1), "ms each");
  ac0.abort();
  await new Promise((r) => setTimeout(r, 300));
}
const ac = new AbortController();
let opened = 0; const t0 = performance.now();
const marks: string[] = [];
const all = Array.from({ length: N }, async (_, i) => {
  try { for await (const e of clients[i % 20].watchStatus({ signature: sigs[i % 100] }, { headers, signal: ac.signal })) { if (e.event.case === "record") { opened++; if (opened % 500 === 0) marks.push(`${opened}@${(performance.now()-t0).toFixed(0)}`); } } } catch {}
});
while (opened < N) await new Promise((r) => setTimeout(r, 100));
console.log("heap", await heap());
console.log("opened", N, "in", (performance.now() - t0).toFixed(0), "ms", marks.join(" "), "rss", rss().toFixed(0), "client rss", (process.memoryUsage().rss/1048576).toFixed(0));
if (process.env.SNAP) { child.kill("SIGUSR2"); await new Promise((r) => setTimeout(r, 15000)); }
ac.abort(); await Promise.all(all);
await new Promise((r) => setTimeout(r, 1000));
console.log("rss after close", rss().toFixed(0));
child.kill("SIGTERM"); await localnet.stop();
