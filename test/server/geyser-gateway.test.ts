/**
 * The gateway on its embedded localnet runs on the Geyser stream by default (no configuration): the
 * stream comes up (one log line, `solgate_geyser_up` 1), a send with confirm: true is answered CONFIRMED
 * with its confirmation delivered by the stream (`solgate_geyser_delivered` moves: the stream, not the
 * poll, said "look now"), and the status it answers is the node's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createSolanaRpc, generateKeyPairSigner } from "@solana/kit";
import type { Blockhash, Signature } from "@solana/kit";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { TransactionStatus } from "../../gen/solgate/v1/transaction_pb.js";
import { loadConfig } from "../../src/config.ts";
import { startGateway } from "../../src/main.ts";
import type { Gateway } from "../../src/main.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createLogSink } from "./helpers.ts";
import { transferTransaction } from "../transactions/chain-fixture.ts";

const KEY = "geyser-gateway-test-key";
const auth = { Authorization: `Bearer ${KEY}` };
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
  });
  gateway = await startGateway(config, createLogger({ level: "info", destination: logs.stream }));
}, 60_000);
afterAll(() => gateway?.close());

async function scrape(): Promise<string> {
  return (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
}

function sample(text: string, name: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{chain="localnet"} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

async function until(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("gateway on the embedded localnet's Geyser stream", () => {
  it("comes up on the stream by default and logs it once", async () => {
    await until(async () => sample(await scrape(), "solgate_geyser_up") === 1);
    expect(logs.lines.filter((l) => l.msg === "geyser stream up: blocks and confirmations pushed")).toHaveLength(1);
  });

  it("a send with confirm: true is CONFIRMED through the stream, and the node agrees", async () => {
    await until(async () => sample(await scrape(), "solgate_geyser_up") === 1);
    const before = sample(await scrape(), "solgate_geyser_delivered") ?? 0;
    const rpc = createSolanaRpc(gateway.localnetUrl!);
    const payer = await generateKeyPairSigner();
    const airdrop = await rpc.requestAirdrop(payer.address, (10n ** 9n) as never).send();
    await until(async () => {
      const { value } = await rpc.getSignatureStatuses([airdrop as Signature]).send();
      return value[0]?.confirmationStatus === "confirmed" || value[0]?.confirmationStatus === "finalized";
    });
    const { value: latest } = await rpc.getLatestBlockhash().send();
    const tx = await transferTransaction({
      payer,
      lamports: 1_000_000n,
      blockhash: latest as { blockhash: Blockhash; lastValidBlockHeight: bigint },
    });
    const client = createClient(
      TransactionService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${gateway.port}` }),
    );
    const answer = await client.sendTransaction({ transaction: tx.wire, confirm: true }, { headers: auth });
    expect(answer.result?.status).toBe(TransactionStatus.CONFIRMED);
    await until(async () => (sample(await scrape(), "solgate_geyser_delivered") ?? 0) > before, 5000);
    const { value } = await rpc.getSignatureStatuses([tx.signature as Signature]).send();
    expect(["confirmed", "finalized"]).toContain(value[0]?.confirmationStatus);
    const text = await scrape();
    expect(sample(text, "solgate_geyser_lag_slots")).toBeLessThanOrEqual(8);
    expect(sample(text, "solgate_geyser_fallbacks")).toBe(0);
  });

  it("a watched signature Solgate did not send is confirmed through the stream, and the node agrees", async () => {
    const rpc = createSolanaRpc(gateway.localnetUrl!);
    const client = createClient(
      TransactionService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${gateway.port}` }),
    );
    const payer = await generateKeyPairSigner();
    const airdrop = await rpc.requestAirdrop(payer.address, (10n ** 9n) as never).send();
    await until(async () => {
      const { value } = await rpc.getSignatureStatuses([airdrop as Signature]).send();
      return value[0]?.confirmationStatus === "confirmed" || value[0]?.confirmationStatus === "finalized";
    });
    // The watch must begin after the node processed the send and before it confirms it: a few tries.
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = sample(await scrape(), "solgate_geyser_delivered") ?? 0;
      const { value: latest } = await rpc.getLatestBlockhash().send();
      const tx = await transferTransaction({
        payer,
        lamports: 1_000_000n + BigInt(attempt),
        blockhash: latest as { blockhash: Blockhash; lastValidBlockHeight: bigint },
      });
      await rpc.sendTransaction(Buffer.from(tx.wire).toString("base64") as never, { encoding: "base64" }).send();
      await until(async () => {
        const { value } = await rpc.getSignatureStatuses([tx.signature as Signature]).send();
        return value[0] !== null;
      }, 5000);
      const abort = new AbortController();
      const states: TransactionStatus[] = [];
      try {
        for await (const event of client.watchStatus(
          { signature: tx.signature },
          { headers: auth, signal: abort.signal },
        )) {
          if (event.event.case !== "record") continue;
          states.push(event.event.value.status);
          if (event.event.value.status !== TransactionStatus.SUBMITTED) break;
        }
      } finally {
        abort.abort();
      }
      if (states[0] !== TransactionStatus.SUBMITTED) continue; // confirmed before the watch began
      expect(states.at(-1)).toBe(TransactionStatus.CONFIRMED);
      await until(async () => (sample(await scrape(), "solgate_geyser_delivered") ?? 0) > before, 5000);
      const { value } = await rpc.getSignatureStatuses([tx.signature as Signature]).send();
      expect(["confirmed", "finalized"]).toContain(value[0]?.confirmationStatus);
      return;
    }
    throw new Error("every send was confirmed before its watch began");
  });
});
