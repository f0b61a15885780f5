/**
 * Tips end to end: two real gateways (startGateway, port 0) over one real localnet, one with the localnet's
 * block engine (SOLGATE_JITO_URL) and one without. PrepareTransaction adds the tip transfer to one of the
 * engine's 8 tip accounts, refuses what it must with its reason code, and clamps a level to the ceiling;
 * GetFees and EstimateFees carry tip levels: the engine's tip floor with an engine, the tips seen in blocks
 * without one, absent while none is known.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  address,
  decompileTransactionMessage,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  signTransaction,
} from "@solana/kit";
import type { Address, KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction, parseTransferSolInstruction, SYSTEM_PROGRAM_ADDRESS } from "@solana-program/system";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { FeeService } from "../../gen/solgate/v1/fee_service_pb.js";
import { TipLevel, TipSource } from "../../gen/solgate/v1/fee_pb.js";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { loadConfig } from "../../src/config.ts";
import { startGateway } from "../../src/main.ts";
import type { Gateway } from "../../src/main.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createBlockEngine } from "../../src/upstream/block-engine.ts";
import type { BlockEngine } from "../../src/upstream/block-engine.ts";
import { createLogSink } from "../server/helpers.ts";
import { startChainFixture, transferTransaction } from "./chain-fixture.ts";
import type { ChainFixture } from "./chain-fixture.ts";

const API_KEY = "tips-test-key-0123456789";
const headers = { Authorization: `Bearer ${API_KEY}` };
const CEILING = 50_000n;

let chain: ChainFixture;
let engine: BlockEngine;
let tipAccounts: string[];
let withEngine: Gateway;
let withoutEngine: Gateway;

function start(extra: Record<string, string>): Promise<Gateway> {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    SOLGATE_RPC_URL: chain.localnet.rpcUrl,
    SOLGATE_CHAIN: "tipnet",
    SOLGATE_API_KEYS: API_KEY,
    SOLGATE_TIP_MAX_LAMPORTS: String(CEILING),
    // Tips seen in blocks are kept over the fee window: long enough that none leaves it during the test.
    SOLGATE_FEES_WINDOW_SLOTS: "2000",
    ...extra,
  });
  return startGateway(config, createLogger({ level: "info", destination: createLogSink().stream }));
}

const clients = (gateway: Gateway) => {
  const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${gateway.port}` });
  return { tx: createClient(TransactionService, transport), fees: createClient(FeeService, transport) };
};

/** The draft every test prepares: a plain transfer from `payer`, unsigned. */
async function draft(payer: KeyPairSigner): Promise<Uint8Array> {
  const { wire } = await transferTransaction({ payer, lamports: 1_000_000n, blockhash: await chain.latestBlockhash() });
  return wire;
}

/** The System transfers in a prepared wire transaction: destination and lamports. */
function transfersOf(wire: Uint8Array): { source: string; destination: string; lamports: bigint }[] {
  const tx = getTransactionDecoder().decode(wire);
  const message = decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(tx.messageBytes));
  return message.instructions
    .filter((ix) => ix.programAddress === SYSTEM_PROGRAM_ADDRESS && ix.data?.[0] === 2)
    .map((ix) => {
      const parsed = parseTransferSolInstruction(ix as Parameters<typeof parseTransferSolInstruction>[0]);
      return {
        source: String(parsed.accounts.source.address),
        destination: String(parsed.accounts.destination.address),
        lamports: parsed.data.amount,
      };
    });
}

async function refusal(promise: Promise<unknown>): Promise<{ code: Code | undefined; reason: string | undefined }> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  return { code: err?.code, reason: err?.findDetails(ErrorInfoSchema)[0]?.reason };
}

async function until<T>(read: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  // 200 ms slots: the localnet's tip floor covers 150 slots, which must outlast the gateway's 10 s reads.
  chain = await startChainFixture({ slotMs: 200 });
  engine = createBlockEngine({ url: chain.localnet.blockEngineUrl });
  tipAccounts = [...(await engine.tipAccounts())];
  [withEngine, withoutEngine] = await Promise.all([
    start({ SOLGATE_JITO_URL: chain.localnet.blockEngineUrl }),
    start({}),
  ]);
}, 60_000);

afterAll(async () => {
  await withEngine?.close();
  await withoutEngine?.close();
  await chain?.stop();
});

describe("before any tip landed", () => {
  it("GetFees has no tip levels, with or without an engine (an empty feed is not a level)", async () => {
    // Let the fee markets read some blocks first: levels would show by now if anything were guessed.
    const read = async (gateway: Gateway) =>
      until(async () => {
        const { estimate } = await clients(gateway).fees.getFees({}, { headers });
        return estimate !== undefined && estimate.slot > 0n ? estimate : undefined;
      }, 20_000);
    expect((await read(withEngine)).tips).toBeUndefined();
    expect((await read(withoutEngine)).tips).toBeUndefined();
  });

  it("a tip level is refused with TIP_LEVELS_UNKNOWN while no landed tip is known", async () => {
    const payer = await chain.funded(1);
    const got = await refusal(
      clients(withEngine).tx.prepareTransaction(
        { transaction: await draft(payer), tip: { choice: { case: "level", value: TipLevel.P50 } } },
        { headers },
      ),
    );
    expect(got).toEqual({ code: Code.Unavailable, reason: "TIP_LEVELS_UNKNOWN" });
  });

  it("a transaction that does not decode is refused as such before its tip is looked at", async () => {
    const got = await refusal(
      clients(withEngine).tx.prepareTransaction(
        { transaction: new Uint8Array(10).fill(7), tip: { choice: { case: "level", value: TipLevel.P50 } } },
        { headers },
      ),
    );
    expect(got).toEqual({ code: Code.InvalidArgument, reason: "INVALID_TRANSACTION" });
  });
});

describe("PrepareTransaction with a tip in lamports", () => {
  it("adds one transfer of exactly those lamports from the fee payer to one of the engine's 8 tip accounts, and it lands", async () => {
    expect(tipAccounts).toHaveLength(8);
    const payer = await chain.funded(1);
    const { tx } = clients(withEngine);
    const prepared = await tx.prepareTransaction(
      { transaction: await draft(payer), tip: { choice: { case: "lamports", value: 20_000n } } },
      { headers },
    );
    expect(prepared.tip).toMatchObject({
      lamports: 20_000n,
      level: TipLevel.UNSPECIFIED,
      levelLamports: 20_000n,
      clamped: false,
      raisedToMinimum: false,
    });
    expect(tipAccounts).toContain(prepared.tip?.account);
    const tips = transfersOf(prepared.transaction).filter((t) => tipAccounts.includes(t.destination));
    expect(tips).toEqual([{ source: String(payer.address), destination: prepared.tip?.account, lamports: 20_000n }]);

    // Signed and sent, the tip account gains exactly the tip.
    const tipAccount = address(prepared.tip!.account);
    const before = await chain.balance(tipAccount);
    const signed = await signTransaction([payer.keyPair], getTransactionDecoder().decode(prepared.transaction));
    const sent = await tx.sendTransaction(
      { transaction: new Uint8Array(getTransactionEncoder().encode(signed)) },
      { headers },
    );
    await chain.waitConfirmed(sent.result!.signature);
    expect((await chain.balance(tipAccount)) - before).toBe(20_000n);
  });

  it("picks the account at random among the 8", async () => {
    const payer = await chain.funded(1);
    const wire = await draft(payer);
    const seen = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const prepared = await clients(withEngine).tx.prepareTransaction(
        { transaction: wire, tip: { choice: { case: "lamports", value: 1_000n } } },
        { headers },
      );
      seen.add(prepared.tip!.account);
    }
    // 12 draws from 8 all landing on one account: (1/8)^11, about 2e-10.
    expect(seen.size).toBeGreaterThan(1);
  });

  it("refuses a tip over the ceiling with TIP_OVER_CEILING, below 1,000 lamports with INVALID_PARAMETER", async () => {
    const payer = await chain.funded(1);
    const wire = await draft(payer);
    const prepare = (lamports: bigint, gateway = withEngine) =>
      refusal(
        clients(gateway).tx.prepareTransaction(
          { transaction: wire, tip: { choice: { case: "lamports", value: lamports } } },
          { headers },
        ),
      );
    expect(await prepare(CEILING + 1n)).toEqual({ code: Code.InvalidArgument, reason: "TIP_OVER_CEILING" });
    expect(await prepare(999n)).toEqual({ code: Code.InvalidArgument, reason: "INVALID_PARAMETER" });
    // The amount is the client's mistake whatever the server has: refused the same way without an engine.
    expect(await prepare(CEILING + 1n, withoutEngine)).toEqual({
      code: Code.InvalidArgument,
      reason: "TIP_OVER_CEILING",
    });
    // An enum number this server does not know.
    expect(
      await refusal(
        clients(withEngine).tx.prepareTransaction(
          { transaction: wire, tip: { choice: { case: "level", value: 42 as TipLevel } } },
          { headers },
        ),
      ),
    ).toEqual({ code: Code.InvalidArgument, reason: "INVALID_PARAMETER" });
  });

  it("without a block engine a tip is refused with TIPS_UNAVAILABLE", async () => {
    const payer = await chain.funded(1);
    const got = await refusal(
      clients(withoutEngine).tx.prepareTransaction(
        { transaction: await draft(payer), tip: { choice: { case: "lamports", value: 5_000n } } },
        { headers },
      ),
    );
    expect(got).toEqual({ code: Code.FailedPrecondition, reason: "TIPS_UNAVAILABLE" });
  });

  it("REST: a tip in the body is added and said; an unknown level is a 400 naming the field", async () => {
    const payer = await chain.funded(1);
    const url = `http://127.0.0.1:${withEngine.port}/v1/tipnet/transactions/prepare`;
    const post = (tip: unknown, wire: Uint8Array) =>
      fetch(url, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ transaction: Buffer.from(wire).toString("base64"), tip }),
      });
    const wire = await draft(payer);
    const ok = await post({ lamports: 3000 }, wire);
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { tip: { account: string; lamports: number; level: string; clamped: boolean } };
    expect(body.tip).toMatchObject({ lamports: 3000, level: "unspecified", clamped: false });
    expect(tipAccounts).toContain(body.tip.account);
    const bad = await post({ level: "p42" }, wire);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain("tip");
  });
});

describe("once tips landed", () => {
  /** Lands a bundle of one transfer carrying `tip` lamports to a tip account, through the engine itself. */
  async function landTip(payer: KeyPairSigner, tip: bigint): Promise<void> {
    const { wire, signature } = await transferTransaction({
      payer,
      lamports: 1_000_000n,
      blockhash: await chain.latestBlockhash(),
      extra: [getTransferSolInstruction({ source: payer, destination: tipAccounts[0] as Address, amount: tip })],
    });
    await engine.sendBundle([Buffer.from(wire).toString("base64")]);
    await chain.waitConfirmed(signature, 20_000);
  }

  beforeAll(async () => {
    const payer = await chain.funded(5);
    // p25 2,000 ... p99 200,000 (over the 50,000 ceiling).
    for (const tip of [2_000n, 2_000n, 10_000n, 10_000n, 30_000n, 200_000n]) await landTip(payer, tip);
  }, 120_000);

  it("GetFees and EstimateFees carry the block engine's tip floor, as the engine gives it", async () => {
    const { fees } = clients(withEngine);
    // The engine's tip floor is read in the background every 10 s.
    const estimate = await until(async () => (await fees.getFees({}, { headers })).estimate?.tips, 30_000);
    const floor = await engine.tipFloor();
    expect(estimate.source).toBe(TipSource.BLOCK_ENGINE);
    expect({ p25: estimate.p25, p50: estimate.p50, p75: estimate.p75, p95: estimate.p95, p99: estimate.p99 }).toEqual({
      p25: floor.p25,
      p50: floor.p50,
      p75: floor.p75,
      p95: floor.p95,
      p99: floor.p99,
    });
    expect(estimate.p99).toBe(200_000n);
    const payer = await chain.funded(1);
    const { estimate: forDraft } = await fees.estimateFees({ transaction: await draft(payer) }, { headers });
    expect(forDraft?.tips?.p99).toBe(200_000n);
  });

  it("a level above the ceiling is clamped to it, and the answer says so", async () => {
    const payer = await chain.funded(1);
    const prepared = await clients(withEngine).tx.prepareTransaction(
      { transaction: await draft(payer), tip: { choice: { case: "level", value: TipLevel.P99 } } },
      { headers },
    );
    expect(prepared.tip).toMatchObject({
      lamports: CEILING,
      level: TipLevel.P99,
      levelLamports: 200_000n,
      clamped: true,
    });
    const tips = transfersOf(prepared.transaction).filter((t) => tipAccounts.includes(t.destination));
    expect(tips.map((t) => t.lamports)).toEqual([CEILING]);
  });

  it("a level under the ceiling is paid as it stands", async () => {
    const payer = await chain.funded(1);
    const floor = await engine.tipFloor();
    const prepared = await clients(withEngine).tx.prepareTransaction(
      { transaction: await draft(payer), tip: { choice: { case: "level", value: TipLevel.P25 } } },
      { headers },
    );
    expect(prepared.tip).toMatchObject({ lamports: floor.p25, levelLamports: floor.p25, clamped: false });
    const tips = transfersOf(prepared.transaction).filter((t) => tipAccounts.includes(t.destination));
    expect(tips.map((t) => t.lamports)).toEqual([floor.p25]);
  });

  it("without an engine, GetFees carries the tips seen in recent blocks", async () => {
    const { fees } = clients(withoutEngine);
    const tips = await until(async () => {
      const t = (await fees.getFees({}, { headers })).estimate?.tips;
      return t !== undefined && t.sampleSize >= 6n ? t : undefined;
    }, 20_000);
    expect(tips.source).toBe(TipSource.BLOCKS);
    // The tips landed above (and in PrepareTransaction's first test, 20,000): nearest-rank percentiles of them.
    expect(tips.p99).toBe(200_000n);
    expect(tips.p25).toBe(2_000n);
    const rest = await fetch(`http://127.0.0.1:${withoutEngine.port}/v1/tipnet/network/fees`, { headers });
    const body = (await rest.json()) as { tips: { p99: number; source: string } };
    expect(body.tips).toMatchObject({ p99: 200_000, source: "blocks" });
  });
});
