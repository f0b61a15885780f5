/**
 * The whole gateway (`startGateway`, a remote chain: a localnet child process) on a Geyser source that falls
 * sick: a real HTTP/2 proxy in front of the localnet's Yellowstone server (test/upstream/sick-geyser.ts) that
 * starts sending garbage, then is killed, then comes back. Each time the gateway logs one line, moves
 * `solgate_geyser_fallbacks` and `solgate_geyser_up`, and a send with confirm: true is still answered with the
 * node's status (by polling); back on the stream it reconnects and statuses come from the stream again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import type { Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Signature } from "@solana/kit";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { TransactionStatus } from "../../gen/solgate/v1/transaction_pb.js";
import { loadConfig } from "../../src/config.ts";
import { startGateway } from "../../src/main.ts";
import type { Gateway } from "../../src/main.ts";
import { createLogger } from "../../src/server/logger.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";
import { startSickGeyser } from "../upstream/sick-geyser.ts";
import { createLogSink } from "./helpers.ts";

const KEY = "geyser-gateway-sick-test-key";
const CHAIN = "sick";
const auth = { Authorization: `Bearer ${KEY}` };
const logs = createLogSink();
let chain: ChainFixture;
let proxy: Awaited<ReturnType<typeof startSickGeyser>>;
let gateway: Gateway;
let client: Client<typeof TransactionService>;

beforeAll(async () => {
  chain = await startChainFixture({ slotMs: 100, confirmSlots: 1, finalizeSlots: 4 });
  proxy = await startSickGeyser(chain.localnet.geyserUrl!);
  const config = loadConfig({
    NODE_ENV: "test",
    PORT: "0",
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    SOLGATE_API_KEYS: KEY,
    SOLGATE_DEMO: "0",
    SOLGATE_CHAIN: CHAIN,
    SOLGATE_RPC_URL: chain.localnet.rpcUrl,
    SOLGATE_WS_URL: chain.localnet.wsUrl,
    SOLGATE_GEYSER_URL: proxy.url,
  });
  gateway = await startGateway(config, createLogger({ level: "info", destination: logs.stream }));
  client = createClient(TransactionService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${gateway.port}` }));
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await proxy?.kill().catch(() => {});
  await chain?.stop();
});

async function gauge(name: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{chain="${CHAIN}"} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

async function until(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

const downLines = () => logs.lines.filter((l) => l.msg === "geyser stream down: falling back to polling");

/** A transfer sent with confirm: true: CONFIRMED (or FINALIZED), and the node says the same of it. */
async function sendConfirmed(): Promise<void> {
  const tx = await transferTransaction({ payer: await chain.funded(1), blockhash: await chain.latestBlockhash() });
  const { result } = await client.sendTransaction(
    { chain: CHAIN, transaction: tx.wire, confirm: true },
    { headers: auth },
  );
  expect([TransactionStatus.CONFIRMED, TransactionStatus.FINALIZED]).toContain(result?.status);
  const { value } = await chain.upstream.rpc.getSignatureStatuses([tx.signature as Signature]).send();
  expect(["confirmed", "finalized"]).toContain(value[0]?.confirmationStatus);
  expect(value[0]?.err).toBeNull();
  expect(result?.slot).toBe(value[0]?.slot);
}

describe("the gateway on a sick Geyser source", () => {
  it("falls back on garbage and on a killed server, one line and a metric each time, and recovers", async () => {
    await until(async () => (await gauge("solgate_geyser_up")) === 1);
    await sendConfirmed();
    const fromStream = (await gauge("solgate_geyser_statuses")) ?? 0;
    expect(fromStream).toBeGreaterThan(0);
    expect(await gauge("solgate_geyser_fallbacks")).toBe(0);

    proxy.set("garbage");
    await until(async () => (await gauge("solgate_geyser_up")) === 0);
    expect(await gauge("solgate_geyser_fallbacks")).toBe(1);
    expect(downLines()).toHaveLength(1);
    expect(String(downLines()[0]?.reason)).toMatch(/stream failed/);
    await sendConfirmed(); // by polling
    expect(downLines()).toHaveLength(1);

    proxy.set("pass");
    await until(async () => (await gauge("solgate_geyser_up")) === 1);
    expect(await gauge("solgate_geyser_reconnects")).toBeGreaterThan(0);

    const port = proxy.port;
    await proxy.kill();
    await until(async () => (await gauge("solgate_geyser_up")) === 0);
    expect(await gauge("solgate_geyser_fallbacks")).toBe(2);
    expect(downLines()).toHaveLength(2);
    await sendConfirmed();

    proxy = await startSickGeyser(chain.localnet.geyserUrl!, port);
    await until(async () => (await gauge("solgate_geyser_up")) === 1);
    const before = (await gauge("solgate_geyser_statuses")) ?? 0;
    await sendConfirmed();
    await until(async () => ((await gauge("solgate_geyser_statuses")) ?? 0) > before);
  }, 120_000);
});
