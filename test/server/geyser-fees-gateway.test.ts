/**
 * The gateway on its embedded localnet feeds its fee market from the Geyser block stream by default: the block
 * stream comes up (`solgate_geyser_blocks_up` 1, one log line), a WatchFees client gets estimates for new
 * slots, and meanwhile the gateway reads no block over JSON-RPC (its own `getBlock` counter stays put while
 * `solgate_geyser_blocks_received` moves).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { FeeService } from "../../gen/solgate/v1/fee_service_pb.js";
import { loadConfig } from "../../src/config.ts";
import { startGateway } from "../../src/main.ts";
import type { Gateway } from "../../src/main.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createLogSink } from "./helpers.ts";

const KEY = "geyser-fees-gateway-test-key";
const logs = createLogSink();
let gateway: Gateway;

beforeAll(async () => {
  const config = loadConfig({
    NODE_ENV: "test",
    PORT: "0",
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    SOLGATE_API_KEYS: KEY,
    SOLGATE_DEMO: "0",
    LOCALNET_TRAFFIC: "1", // priced transactions: the levels move, so WatchFees has news to send
  });
  gateway = await startGateway(config, createLogger({ level: "info", destination: logs.stream }));
}, 60_000);
afterAll(() => gateway?.close());

async function scrape(): Promise<string> {
  return (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
}

/** The sum of a metric's samples for the localnet chain whose labels include `match`. */
function sample(text: string, name: string, match = ""): number {
  let sum = 0;
  for (const line of text.split("\n"))
    if (line.startsWith(`${name}{`) && line.includes('chain="localnet"') && line.includes(match))
      sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  return sum;
}

async function until(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("gateway fees on the embedded localnet's Geyser block stream", () => {
  it("WatchFees follows new slots from the stream while the gateway reads no block over JSON-RPC", async () => {
    await until(async () => sample(await scrape(), "solgate_geyser_blocks_up") === 1);
    expect(logs.lines.filter((l) => l.msg === "geyser block stream up: fee market fed from it")).toHaveLength(1);
    const client = createClient(FeeService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${gateway.port}` }));
    const abort = new AbortController();
    const slots: bigint[] = [];
    let getBlocks = 0;
    let received = 0;
    for await (const res of client.watchFees(
      {},
      { headers: { Authorization: `Bearer ${KEY}` }, signal: abort.signal, timeoutMs: 30_000 },
    )) {
      if (res.event.case !== "estimate") continue;
      const text = await scrape();
      if (slots.length === 0) {
        getBlocks = sample(text, "solgate_upstream_attempts_started_total", 'method="getBlock"');
        received = sample(text, "solgate_geyser_blocks_received");
      }
      slots.push(res.event.value.slot);
      if (slots.length === 6) {
        expect(sample(text, "solgate_upstream_attempts_started_total", 'method="getBlock"')).toBe(getBlocks);
        expect(sample(text, "solgate_geyser_blocks_received")).toBeGreaterThan(received);
        expect(sample(text, "solgate_geyser_blocks_up")).toBe(1);
        break;
      }
    }
    abort.abort();
    for (let i = 1; i < slots.length; i++) expect(slots[i]).toBeGreaterThan(slots[i - 1]);
  }, 60_000);
});
