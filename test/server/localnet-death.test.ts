/**
 * A standalone localnet (a child process) behind a gateway configured as a remote chain, killed with
 * SIGKILL while a send waits for confirmation: the client must hear UNAVAILABLE (gRPC) / 503 (REST)
 * with the UPSTREAM_UNAVAILABLE reason, never INTERNAL or 500.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createSolanaRpc, generateKeyPairSigner } from "@solana/kit";
import type { Signature } from "@solana/kit";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { loadConfig } from "../../src/config.ts";
import { startGateway } from "../../src/main.ts";
import type { Gateway } from "../../src/main.ts";
import { createLogger } from "../../src/server/logger.ts";
import { transferTransaction } from "../transactions/chain-fixture.ts";
import { createLogSink } from "./helpers.ts";

const KEY = "localnet-death-key";
let localnet: LocalnetHandle | undefined;
let gateway: Gateway | undefined;

afterEach(async () => {
  await gateway?.close();
  if (
    localnet !== undefined &&
    (await Promise.race([localnet.exited.then(() => true), Promise.resolve(false)])) === false
  )
    await localnet.stop();
  gateway = undefined;
  localnet = undefined;
});

/** A localnet with a funded payer and a gateway in front of it; returns a signed transfer, not yet sent. */
async function setUp(): Promise<{ wire: Uint8Array; base: string }> {
  localnet = await startLocalnet({ slotMs: 50, confirmSlots: 1, finalizeSlots: 4 });
  const rpc = createSolanaRpc(localnet.rpcUrl);
  const payer = await generateKeyPairSigner();
  const airdrop = await rpc.requestAirdrop(payer.address, 5_000_000_000n as never).send();
  for (let i = 0; i < 200; i++) {
    const { value } = await rpc.getSignatureStatuses([airdrop as Signature]).send();
    if (value[0]?.confirmationStatus === "confirmed" || value[0]?.confirmationStatus === "finalized") break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const tx = await transferTransaction({ payer, blockhash });
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    SOLGATE_RPC_URL: localnet.rpcUrl,
    SOLGATE_WS_URL: localnet.wsUrl,
    SOLGATE_CHAIN: "remote",
    SOLGATE_API_KEYS: KEY,
    SOLGATE_UPSTREAM_TIMEOUT_MS: "1000",
    SOLGATE_UPSTREAM_MAX_RETRIES: "2",
    // A budget of 2 s (not the default 10 s), so that "within the budget" has a 10x bound far below the 90 s
    // confirmation timeout.
    SOLGATE_UPSTREAM_BUDGET_MS: "2000",
  });
  gateway = await startGateway(config, createLogger({ level: "info", destination: createLogSink().stream }));
  // The chain stands still, so the send waits for a confirmation that cannot come before the kill.
  await localnet.control({ freeze: true });
  return { wire: tx.wire, base: `http://127.0.0.1:${gateway.port}` };
}

/** Kills the localnet (SIGKILL) once the send has had time to reach it and start waiting. */
async function killSoon(): Promise<void> {
  await new Promise((r) => setTimeout(r, 500));
  process.kill(localnet!.pid, "SIGKILL");
  await localnet!.exited;
}

describe("the localnet dies under a send", () => {
  it("answers UNAVAILABLE with UPSTREAM_UNAVAILABLE over gRPC", async () => {
    const { wire, base } = await setUp();
    const client = createClient(TransactionService, createGrpcTransport({ baseUrl: base }));
    const started = performance.now();
    const sent = client.sendTransaction({ transaction: wire }, { headers: { Authorization: `Bearer ${KEY}` } }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    await killSoon();
    const err = await sent;
    expect(err, "the send succeeded against a dead node").toBeDefined();
    expect({ code: Code[err!.code], reason: err!.findDetails(ErrorInfoSchema)[0]?.reason }).toEqual({
      code: "Unavailable",
      reason: "UPSTREAM_UNAVAILABLE",
    });
    expect(err!.rawMessage).toMatch(/was sent, but its confirmation cannot be read/);
    expect(err!.rawMessage).not.toContain("127.0.0.1");
    // Within 10x the upstream budget (2 s here) after the kill, not the 90 s confirmation timeout.
    expect(performance.now() - started).toBeLessThan(20_500);
  }, 60_000);

  it("answers 503 with UPSTREAM_UNAVAILABLE over REST", async () => {
    const { wire, base } = await setUp();
    const sent = fetch(`${base}/v1/remote/transactions/send`, {
      method: "POST",
      headers: { Authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ transaction: Buffer.from(wire).toString("base64") }),
    });
    await killSoon();
    const response = await sent;
    const body = (await response.json()) as { code?: string; message?: string };
    expect({ status: response.status, code: body.code }).toEqual({ status: 503, code: "upstream_unavailable" });
    expect(body.message).toMatch(/was sent, but its confirmation cannot be read/);
    expect(body.message).not.toContain("127.0.0.1");
    expect(response.headers.get("retry-after")).not.toBeNull();
  }, 60_000);
});
