/**
 * The fee ladder end to end: the real server (port 0, gRPC and REST) over the real localnet, the real upstream, fee
 * market and transactions core. Prepare, sign, send, land with exactly one rung on chain; every refusal with its
 * reason over gRPC and REST; and the safety cases (an underfunded top rung, an instruction failure, a nonce advanced
 * by someone else, a cancel followed by the client advancing the nonce), each counting rungs on chain: never two.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectError, createClient } from "@connectrpc/connect";
import type { Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { generateKeyPairSigner } from "@solana/kit";
import type { Address, KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getSetLoadedAccountsDataSizeLimitInstruction } from "@solana-program/compute-budget";
import { ErrorInfoSchema } from "../../../gen/google/rpc/error_details_pb.js";
import { TransactionService } from "../../../gen/solgate/v1/transaction_service_pb.js";
import { FeeService } from "../../../gen/solgate/v1/fee_service_pb.js";
import { LadderStatus, RungState } from "../../../gen/solgate/v1/ladder_pb.js";
import type { LadderRecord } from "../../../gen/solgate/v1/ladder_pb.js";
import { createChainRegistry } from "../../../src/chains.ts";
import { createFeeMarket } from "../../../src/fees/fee-market.ts";
import type { FeeMarket } from "../../../src/fees/fee-market.ts";
import { createProgramAccounts } from "../../../src/programs/program-accounts.ts";
import { createCollections } from "../../../src/collections/collections.ts";
import { createApiKeyChecker } from "../../../src/server/auth.ts";
import { createLogger } from "../../../src/server/logger.ts";
import { createRoutes, createStreamRoutes } from "../../../src/server/routes.ts";
import { createServer } from "../../../src/server/server.ts";
import type { ListeningServer } from "../../../src/server/server.ts";
import { createRestHandler } from "../../../src/rest/rest-handler.ts";
import { createMetrics } from "../../../src/server/metrics.ts";
import { createTransactions } from "../../../src/transactions/transactions.ts";
import type { Transactions } from "../../../src/transactions/transactions.ts";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { createWallets } from "../../../src/wallets/wallets.ts";
import { createTokenHolders } from "../../../src/tokens/token-holders.ts";
import { startChainFixture, transferTransaction } from "../chain-fixture.ts";
import type { ChainFixture } from "../chain-fixture.ts";
import { createLogSink } from "../../server/helpers.ts";
import {
  advanceNonceWire,
  createNonceAccount,
  draftTransfer,
  handRungs,
  nonceValue,
  onChain,
  sendRaw,
  signRung,
  signatureOf,
  waitFor,
} from "./ladder-fixture.ts";

const API_KEY = "ladder-test-key-0123456789";
const headers = { Authorization: `Bearer ${API_KEY}` };

let chain: ChainFixture;
let fees: FeeMarket;
let core: Transactions;
let listening: ListeningServer;
let grpc: Client<typeof TransactionService>;
let feeClient: Client<typeof FeeService>;
let base: string;
let payer: KeyPairSigner;
const logs = createLogSink();

beforeAll(async () => {
  chain = await startChainFixture();
  const { upstream } = chain;
  fees = createFeeMarket({ upstream, pollIntervalMs: 50 });
  fees.start();
  core = createTransactions({
    upstream,
    fees,
    pollIntervalMs: 25,
    rebroadcastIntervalMs: 150,
    heartbeatIntervalMs: 200,
  });
  core.start();
  const chains = createChainRegistry(
    [
      {
        name: "localnet",
        upstream,
        programs: createProgramAccounts({ upstream }),
        fees,
        transactions: core,
        collections: createCollections({ upstream }),
        accounts: createAccounts({ upstream }),
        wallets: createWallets({ upstream }),
        tokens: createTokenHolders({ upstream }),
      },
    ],
    "localnet",
  );
  const server = createServer({
    routes: createRoutes({ chains }),
    streamRoutes: createStreamRoutes({ chains }),
    auth: createApiKeyChecker([API_KEY]),
    logger: createLogger({ level: "info", destination: logs.stream }),
    inProcessHandlers: (context) => [createRestHandler(context).handle],
  });
  listening = await server.listen(0, "127.0.0.1");
  base = `http://127.0.0.1:${listening.port}/v1/localnet`;
  grpc = createClient(TransactionService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${listening.port}` }));
  feeClient = createClient(FeeService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${listening.port}` }));
  payer = await chain.funded(100);
}, 60_000);

afterAll(async () => {
  await listening?.close();
  core?.stop();
  await fees?.stop();
  await chain?.stop();
});

const b64 = (wire: Uint8Array) => Buffer.from(wire).toString("base64");

async function grpcReason(promise: Promise<unknown>): Promise<string | undefined> {
  const caught = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(caught).toBeInstanceOf(ConnectError);
  return (caught as ConnectError).findDetails(ErrorInfoSchema)[0]?.reason;
}

async function rest(method: "GET" | "POST", path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as Record<string, unknown>;
  return { status: response.status, json };
}

/** A REST error's reason: the seed's shape carries it lower-cased as `code`. */
function restReason(json: Record<string, unknown>): string | undefined {
  return typeof json.code === "string" ? json.code.toUpperCase() : undefined;
}

async function prepareSigned(
  signer: KeyPairSigner,
  nonce: Address,
  extra: { rungs?: number; deadlineSlots?: number } = {},
) {
  const prepared = await grpc.prepareLadder(
    { transaction: await draftTransfer(signer), nonceAccount: nonce, ...extra },
    { headers },
  );
  const signed = await Promise.all(prepared.rungs.map((rung) => signRung(rung.transaction, [signer])));
  return { prepared, signed };
}

async function ladderStatus(id: string): Promise<LadderRecord> {
  return (await grpc.getLadderStatus({ id }, { headers })).ladder!;
}

describe("PrepareLadder -> sign -> SendLadder", () => {
  it("lands exactly one rung, the cheapest, and reports it; the nonce advanced", async () => {
    const nonce = await createNonceAccount(chain, payer);
    const before = await nonceValue(chain, nonce);
    const { prepared, signed } = await prepareSigned(payer, nonce, { rungs: 4, deadlineSlots: 20 });
    expect(prepared.rungs).toHaveLength(4);
    expect(prepared.nonce).toBe(before);
    const prices = prepared.rungs.map((r) => r.price);
    for (let i = 1; i < prices.length; i++) expect(prices[i]).toBeGreaterThan(prices[i - 1]);
    expect(prices[0]).toBeGreaterThan(0n);
    for (let i = 1; i < prepared.rungs.length; i++)
      expect(prepared.rungs[i].sendAtSlot).toBeGreaterThanOrEqual(prepared.rungs[i - 1].sendAtSlot);

    const sent = await grpc.sendLadder({ transactions: signed }, { headers });
    const id = sent.ladder!.id;
    expect(id).toBe(signatureOf(signed[0]));
    expect(sent.ladder!.status).toBe(LadderStatus.PENDING);
    expect(sent.ladder!.rungs[0].state).toBe(RungState.SUBMITTED);

    // Watched to the end (finalized).
    let last: LadderRecord | undefined;
    for await (const event of grpc.watchLadder({ id }, { headers, timeoutMs: 30_000 })) {
      if (event.event.case === "ladder") last = event.event.value;
    }
    expect(last?.status).toBe(LadderStatus.FINALIZED);
    expect(last?.landedRung).toBe(0);
    expect(last?.signature).toBe(signatureOf(signed[0]));
    expect(last?.slot).toBeDefined();
    expect(last?.feePaidLamports).toBeGreaterThan(0n);
    expect(last?.slotsToLand).toBeDefined();
    expect(last?.rungs.filter((r) => r.state === RungState.LANDED)).toHaveLength(1);
    // Overpay: alone on its accounts in its block, the ladder paid the cheapest fee there was.
    expect(last?.overpayRatio).toBe(1);
    expect(await onChain(chain, signed.map(signatureOf))).toBe(1);
    expect(await nonceValue(chain, nonce)).not.toBe(before);

    // The overpay as metrics: the fee paid and the cheapest fee beside it, both counted.
    const metrics = createMetrics();
    metrics.observeChains([
      {
        name: "localnet",
        trackedSends: () => ({}),
        feeWindowMovedAt: () => undefined,
        upstreamHealthy: () => true,
        ladders: () => core.ladders.stats(),
      },
    ]);
    const scraped = await metrics.registry.metrics();
    const value = (name: string) =>
      Number(new RegExp(`^${name}\\{chain="localnet"\\} (\\S+)$`, "m").exec(scraped)?.[1] ?? Number.NaN);
    expect(value("solgate_ladder_fee_paid_lamports_total")).toBeGreaterThanOrEqual(Number(last?.feePaidLamports));
    expect(value("solgate_ladder_cheapest_fee_lamports_total")).toBeGreaterThan(0);
    expect(value("solgate_ladder_overpay_measured_total")).toBeGreaterThanOrEqual(1);
    expect(scraped).toMatch(/solgate_ladders_ended_total\{chain="localnet",state="finalized"\} [1-9]/);

    // The REST shape.
    const { status, json } = await rest("GET", `/transactions/ladder/${id}`);
    expect(status).toBe(200);
    expect(json).toMatchObject({ id, status: "finalized", landedRung: 0, signature: signatureOf(signed[0]) });
    expect(json.rungs).toHaveLength(4);
  }, 60_000);

  it("answers the REST shapes of prepare and send", async () => {
    const nonce = await createNonceAccount(chain, payer);
    const prepared = await rest("POST", "/transactions/ladder/prepare", {
      transaction: b64(await draftTransfer(payer)),
      nonceAccount: nonce,
      rungs: 3,
      deadlineSlots: 20,
    });
    expect(prepared.status).toBe(200);
    const rungs = prepared.json.rungs as { transaction: string; price: number; odds: number; sendAtSlot: number }[];
    expect(rungs).toHaveLength(3);
    for (const rung of rungs) {
      expect(typeof rung.price).toBe("number");
      expect(rung.odds).toBeGreaterThanOrEqual(0);
      expect(rung.odds).toBeLessThanOrEqual(1);
      expect(typeof rung.sendAtSlot).toBe("number");
    }
    const signed = await Promise.all(rungs.map((r) => signRung(Buffer.from(r.transaction, "base64"), [payer])));
    const sent = await rest("POST", "/transactions/ladder", { transactions: signed.map(b64) });
    expect(sent.status).toBe(200);
    expect(sent.json).toMatchObject({ id: signatureOf(signed[0]), status: "pending" });
    await waitFor(
      () => ladderStatus(signatureOf(signed[0])),
      (l) => l.status === LadderStatus.FINALIZED,
    );
    expect(await onChain(chain, signed.map(signatureOf))).toBe(1);
  }, 60_000);
});

describe("refusals, each with its reason, over gRPC and REST", () => {
  async function refusedPrepare(body: { transaction: Uint8Array; nonceAccount: string }, reason: string) {
    expect(await grpcReason(grpc.prepareLadder(body, { headers }))).toBe(reason);
    const { status, json } = await rest("POST", "/transactions/ladder/prepare", {
      transaction: b64(body.transaction),
      nonceAccount: body.nonceAccount,
    });
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
    expect(restReason(json)).toBe(reason);
  }

  async function refusedSend(wires: Uint8Array[], reason: string) {
    expect(await grpcReason(grpc.sendLadder({ transactions: wires }, { headers }))).toBe(reason);
    const { status, json } = await rest("POST", "/transactions/ladder", { transactions: wires.map(b64) });
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
    expect(restReason(json)).toBe(reason);
    // Nothing was submitted.
    expect(await onChain(chain, wires.map(signatureOf))).toBe(0);
  }

  it("PrepareLadder: a nonce account that does not exist", async () => {
    const missing = (await generateKeyPairSigner()).address;
    await refusedPrepare({ transaction: await draftTransfer(payer), nonceAccount: missing }, "NONCE_ACCOUNT_NOT_FOUND");
  });

  it("PrepareLadder: an account that is not a nonce", async () => {
    await refusedPrepare(
      { transaction: await draftTransfer(payer), nonceAccount: payer.address },
      "NONCE_ACCOUNT_INVALID",
    );
  });

  it("PrepareLadder: a nonce whose authority does not sign the draft", async () => {
    const other = await generateKeyPairSigner();
    const nonce = await createNonceAccount(chain, payer, other.address);
    await refusedPrepare(
      { transaction: await draftTransfer(payer), nonceAccount: nonce },
      "NONCE_AUTHORITY_NOT_SIGNER",
    );
  });

  it("PrepareLadder and SendLadder: a fee payer that cannot afford the top rung", async () => {
    // Rent exemption of an empty account is 890,880 lamports: this payer can pay a base fee, not a top rung.
    const poor = await generateKeyPairSigner();
    const fund = await transferTransaction({
      payer,
      to: poor.address,
      lamports: 900_000n,
      blockhash: await chain.latestBlockhash(),
    });
    await sendRaw(chain, fund.wire);
    await chain.waitConfirmed(fund.signature);
    const nonce = await createNonceAccount(chain, payer, poor.address);
    const value = await nonceValue(chain, nonce);
    const hand = await handRungs(
      poor,
      nonce,
      value,
      [1n, 10_000_000n],
      [getTransferSolInstruction({ source: poor, destination: payer.address, amount: 1n })],
    );
    await refusedSend(hand, "LADDER_FEE_UNAFFORDABLE");
    // PrepareLadder refuses too when even its plan's top rung is out of reach: a payer with less than rent + base fee.
    const broke = await generateKeyPairSigner();
    const fund2 = await transferTransaction({
      payer,
      to: broke.address,
      lamports: 891_000n,
      blockhash: await chain.latestBlockhash(),
    });
    await sendRaw(chain, fund2.wire);
    await chain.waitConfirmed(fund2.signature);
    const nonce2 = await createNonceAccount(chain, payer, broke.address);
    await refusedPrepare({ transaction: await draftTransfer(broke), nonceAccount: nonce2 }, "LADDER_FEE_UNAFFORDABLE");
  }, 30_000);

  it("SendLadder: rungs that differ beyond their price", async () => {
    const nonce = await createNonceAccount(chain, payer);
    const a = await prepareSigned(payer, nonce, { rungs: 2 });
    const b = await prepareSigned(payer, nonce, { rungs: 2 }); // another draft: another recipient
    await refusedSend([a.signed[0], b.signed[1]], "LADDER_MESSAGE_MISMATCH");
  }, 30_000);

  it("SendLadder: rungs that do not advance a durable nonce", async () => {
    const blockhash = await chain.latestBlockhash();
    const one = await transferTransaction({ payer, blockhash, budget: { units: 1000, microLamports: 1n } });
    const two = await transferTransaction({ payer, blockhash, budget: { units: 1000, microLamports: 2n } });
    await refusedSend([one.wire, two.wire], "LADDER_NOT_NONCE");
  });

  it("SendLadder: a nonce that moved since the rungs were signed", async () => {
    const nonce = await createNonceAccount(chain, payer);
    const { signed } = await prepareSigned(payer, nonce, { rungs: 2 });
    const advance = await advanceNonceWire(chain, payer, nonce);
    await chain.waitConfirmed(await sendRaw(chain, advance));
    await refusedSend(signed, "LADDER_NONCE_STALE");
  }, 30_000);

  it("SendLadder: prices that do not rise", async () => {
    const nonce = await createNonceAccount(chain, payer);
    const { signed } = await prepareSigned(payer, nonce, { rungs: 2 });
    await refusedSend([signed[1], signed[0]], "LADDER_PRICES_NOT_RISING");
  }, 30_000);

  it("SendLadder: a signature that does not verify", async () => {
    const nonce = await createNonceAccount(chain, payer);
    const { prepared, signed } = await prepareSigned(payer, nonce, { rungs: 2 });
    await refusedSend([signed[0], prepared.rungs[1].transaction], "LADDER_SIGNATURE_INVALID");
    const forged = signed[1].slice();
    forged[5] ^= 0xff;
    await refusedSend([signed[0], forged], "LADDER_SIGNATURE_INVALID");
  }, 30_000);
});

describe("never two rungs on chain", () => {
  /** A ladder whose every rung fails on chain (a transfer of more than the payer holds): sent unsimulated. */
  async function failingLadder() {
    const nonce = await createNonceAccount(chain, payer);
    const value = await nonceValue(chain, nonce);
    const rungs = await handRungs(
      payer,
      nonce,
      value,
      [1n, 2n, 3n],
      [getTransferSolInstruction({ source: payer, destination: nonce, amount: 10_000n * 1_000_000_000n })],
    );
    const before = await chain.balance(payer.address);
    const sent = await grpc.sendLadder({ transactions: rungs, skipPreflight: true }, { headers });
    const ended = await waitFor(
      () => ladderStatus(sent.ladder!.id),
      (l) => l.status !== LadderStatus.PENDING,
    );
    return { nonce, value, rungs, before, ended };
  }

  it("an instruction failure: FAILED with the fee charged, and Solgate puts no second rung on chain", async () => {
    const { rungs, before, ended } = await failingLadder();
    expect(ended.status).toBe(LadderStatus.FAILED);
    expect(ended.error?.code).toBe("InstructionError");
    expect(ended.landedRung).toBe(0);
    expect(await chain.balance(payer.address)).toBeLessThan(before);
    // Several ticks later (each could have climbed): still the one rung.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await ladderStatus(ended.id)).rungs.filter((r) => r.submittedSlot !== undefined)).toHaveLength(1);
    expect(await onChain(chain, rungs.map(signatureOf))).toBe(1);
  }, 30_000);

  // Agave advances the nonce of a durable-nonce transaction whose instruction fails (the fee is charged and the
  // nonce moved, so the other rungs can never land); the localnet does too (packages/localnet durable-nonce rules).
  it("an instruction failure advances the nonce: rungs re-sent straight to the node cannot land", async () => {
    const { nonce, value, rungs } = await failingLadder();
    expect(await nonceValue(chain, nonce)).not.toBe(value);
    for (const wire of rungs.slice(1)) await sendRaw(chain, wire).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    expect(await onChain(chain, rungs.map(signatureOf))).toBe(1);
  }, 30_000);

  it("a load failure (fees-only, SIMD-0191): FAILED with the fee charged and the nonce advanced; one rung on chain", async () => {
    const nonce = await createNonceAccount(chain, payer);
    const value = await nonceValue(chain, nonce);
    const rungs = await handRungs(
      payer,
      nonce,
      value,
      [1n, 2n, 3n],
      [
        getSetLoadedAccountsDataSizeLimitInstruction({ accountDataSizeLimit: 1024 }),
        getTransferSolInstruction({ source: payer, destination: nonce, amount: 1n }),
      ],
    );
    const before = await chain.balance(payer.address);
    const sent = await grpc.sendLadder({ transactions: rungs, skipPreflight: true }, { headers });
    const ended = await waitFor(
      () => ladderStatus(sent.ladder!.id),
      (l) => l.status !== LadderStatus.PENDING,
    );
    expect(ended.status).toBe(LadderStatus.FAILED);
    expect(ended.error?.code).toBe("MaxLoadedAccountsDataSizeExceeded");
    expect(await chain.balance(payer.address)).toBeLessThan(before);
    expect(await nonceValue(chain, nonce)).not.toBe(value);
    // The other rungs, re-sent straight to the node, name a nonce that is no longer current.
    for (const wire of rungs.slice(1)) await sendRaw(chain, wire).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    expect(await onChain(chain, rungs.map(signatureOf))).toBe(1);
  }, 30_000);

  it("an underfunded top rung: not processed (no fee, nonce unmoved), the cheap rung lands; one rung on chain", async () => {
    // The payer can pay the cheap rung's fee and stay rent-exempt, not the top rung's (1,000,000 µL/CU x 10,000
    // CU = 10,000 lamports on top of the base fee). Solgate refuses such a ladder (LADDER_FEE_UNAFFORDABLE); a
    // client can still hand both rungs to the node, and a payer can be drained after the check: the chain's rule.
    const poor = await generateKeyPairSigner();
    const fund = await transferTransaction({
      payer,
      to: poor.address,
      lamports: 890_880n + 12_000n,
      blockhash: await chain.latestBlockhash(),
    });
    await sendRaw(chain, fund.wire);
    await chain.waitConfirmed(fund.signature);
    const nonce = await createNonceAccount(chain, payer, poor.address);
    const value = await nonceValue(chain, nonce);
    const [cheap, top] = await handRungs(
      poor,
      nonce,
      value,
      [1n, 1_000_000n],
      [getTransferSolInstruction({ source: poor, destination: payer.address, amount: 1n })],
    );
    const before = await chain.balance(poor.address);
    // Frozen, both wait in the leader's queue; the top rung's higher priority puts it first when blocks resume.
    await chain.localnet.control({ freeze: true });
    try {
      await sendRaw(chain, top).catch(() => undefined);
      await sendRaw(chain, cheap).catch(() => undefined);
    } finally {
      await chain.localnet.control({ freeze: false });
    }
    await waitFor(
      () => onChain(chain, [signatureOf(cheap)]),
      (n) => n === 1,
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(await onChain(chain, [signatureOf(cheap), signatureOf(top)])).toBe(1);
    // The cheap rung's fee (5,000 + 1 lamport) and its 1-lamport transfer: nothing charged for the top rung.
    expect(before - (await chain.balance(poor.address))).toBe(5_002n);
    expect(await nonceValue(chain, nonce)).not.toBe(value);
  }, 30_000);

  it("a nonce advanced by someone else: NONCE_ADVANCED, no rung on chain", async () => {
    const nonce = await createNonceAccount(chain, payer);
    const { signed } = await prepareSigned(payer, nonce, { rungs: 3 });
    const advance = await advanceNonceWire(chain, payer, nonce);
    // Frozen, the rung waits in the queue; the advance outbids it and runs first when blocks resume.
    await chain.localnet.control({ freeze: true });
    try {
      await grpc.sendLadder({ transactions: signed }, { headers });
      await sendRaw(chain, advance);
    } finally {
      await chain.localnet.control({ freeze: false });
    }
    const ended = await waitFor(
      () => ladderStatus(signatureOf(signed[0])),
      (l) => l.status !== LadderStatus.PENDING,
    );
    expect(ended.status).toBe(LadderStatus.NONCE_ADVANCED);
    expect(ended.rungs.every((r) => r.state === RungState.DEAD)).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    expect(await onChain(chain, signed.map(signatureOf))).toBe(0);
  }, 30_000);

  it("a cancel, then the client advancing the nonce: CANCELLED, no rung on chain", async () => {
    const nonce = await createNonceAccount(chain, payer);
    const { signed } = await prepareSigned(payer, nonce, { rungs: 3 });
    const advance = await advanceNonceWire(chain, payer, nonce);
    await chain.localnet.control({ freeze: true });
    try {
      const sent = await grpc.sendLadder({ transactions: signed }, { headers });
      const cancelled = await grpc.cancelLadder({ id: sent.ladder!.id }, { headers });
      expect(cancelled.ladder?.status).toBe(LadderStatus.CANCELLED);
      // REST answers the same record.
      const viaRest = await rest("POST", `/transactions/ladder/${sent.ladder!.id}/cancel`, {});
      expect(viaRest.json).toMatchObject({ status: "cancelled" });
      await sendRaw(chain, advance);
    } finally {
      await chain.localnet.control({ freeze: false });
    }
    const ended = await waitFor(
      () => ladderStatus(signatureOf(signed[0])),
      (l) => l.rungs.every((r) => r.state === RungState.DEAD),
    );
    expect(ended.status).toBe(LadderStatus.CANCELLED);
    await new Promise((r) => setTimeout(r, 500));
    expect(await onChain(chain, signed.map(signatureOf))).toBe(0);
  }, 30_000);

  it("an unknown ladder is NOT_FOUND", async () => {
    const id = signatureOf(new Uint8Array(65).fill(7));
    expect(await grpcReason(grpc.getLadderStatus({ id }, { headers }))).toBe("NOT_FOUND");
  });
});

describe("EstimateFees answers odds at any price", () => {
  it("gives the odds at a named price, the cheapest price for a named probability and k, and the curve", async () => {
    const draft = await draftTransfer(payer);
    // The odds need 32 blocks in the window: a second or so of the fast localnet.
    const { estimate } = await waitFor(
      () =>
        feeClient.estimateFees(
          { transaction: draft, oddsPrice: 1_000n, targetOdds: 0.9, withinSlots: 10, curvePoints: 12 },
          { headers },
        ),
      (answer) => answer.estimate?.oddsAnswer?.priceOdds !== undefined,
    );
    const answer = estimate!.oddsAnswer!;
    expect(answer.withinSlots).toBe(10);
    expect(answer.priceOdds).toBeGreaterThanOrEqual(0);
    expect(answer.priceOdds).toBeLessThanOrEqual(1);
    expect(answer.cheapestPrice).toBeDefined();
    expect(answer.cheapestPriceOdds).toBeGreaterThanOrEqual(0.9);
    expect(answer.curve).toHaveLength(12);
    // Not asked, not answered.
    const plain = await feeClient.estimateFees({ transaction: draft }, { headers });
    expect(plain.estimate?.oddsAnswer).toBeUndefined();
    // Over REST, inside the estimate.
    const { status, json } = await rest("POST", "/network/fees/estimate", {
      transaction: b64(draft),
      oddsPrice: 1000,
      targetOdds: 0.9,
      withinSlots: 100,
      curvePoints: 8,
    });
    expect(status).toBe(200);
    const odds = json.oddsAnswer as { withinSlots: number; curve: unknown[]; priceOdds: number };
    expect(odds.withinSlots).toBe(100);
    expect(odds.curve).toHaveLength(8);
    expect(odds.priceOdds).toBeGreaterThanOrEqual(0);
    // k = 150 needs a window longer than the default 150 slots: refused, saying the most it can answer.
    const long = await rest("POST", "/network/fees/estimate", { transaction: b64(draft), withinSlots: 150 });
    expect(long.status).toBe(400);
    expect(restReason(long.json)).toBe("INVALID_PARAMETER");
  }, 30_000);

  it("refuses k, a probability or a curve out of range", async () => {
    const draft = await draftTransfer(payer);
    expect(await grpcReason(feeClient.estimateFees({ transaction: draft, withinSlots: 151 }, { headers }))).toBe(
      "INVALID_PARAMETER",
    );
    expect(await grpcReason(feeClient.estimateFees({ transaction: draft, targetOdds: 1 }, { headers }))).toBe(
      "INVALID_PARAMETER",
    );
    expect(await grpcReason(feeClient.estimateFees({ transaction: draft, curvePoints: 4 }, { headers }))).toBe(
      "INVALID_PARAMETER",
    );
  });
});
