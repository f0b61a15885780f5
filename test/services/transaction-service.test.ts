/**
 * TransactionService through the real server (port 0, production listener, interceptors and routes)
 * and real clients (gRPC and Connect JSON), over a real localnet with the real upstream and fee
 * market. Ends with seeded, bounded fuzzing of every RPC: bad input is always a clear error, never a
 * crash, and malformed input never reaches the upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import type { Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { generateKeyPairSigner, getTransactionDecoder, getTransactionEncoder, signTransaction } from "@solana/kit";
import type { KeyPairSigner } from "@solana/kit";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { TransactionStatus } from "../../gen/solgate/v1/transaction_pb.js";
import { FeeSource, PriorityLevel } from "../../gen/solgate/v1/fee_pb.js";
import { createChainRegistry } from "../../src/chains.ts";
import { createFeeMarket } from "../../src/fees/fee-market.ts";
import type { FeeMarket } from "../../src/fees/fee-market.ts";
import { createProgramAccounts } from "../../src/programs/program-accounts.ts";
import { createCollections } from "../../src/collections/collections.ts";
import { createApiKeyChecker } from "../../src/server/auth.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createRoutes, createStreamRoutes } from "../../src/server/routes.ts";
import { createServer } from "../../src/server/server.ts";
import type { ListeningServer } from "../../src/server/server.ts";
import { createTransactions } from "../../src/transactions/transactions.ts";
import type { Transactions } from "../../src/transactions/transactions.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";
import { createLogSink } from "../server/helpers.ts";
import { createAccounts } from "../../src/accounts/accounts.ts";
import { createWallets } from "../../src/wallets/wallets.ts";
import { createTokenHolders } from "../../src/tokens/token-holders.ts";

const API_KEY = "tx-test-key-0123456789";
const headers = { Authorization: `Bearer ${API_KEY}` };

let chain: ChainFixture;
let fees: FeeMarket;
let core: Transactions;
let listening: ListeningServer;
let grpc: Client<typeof TransactionService>;
let connect: Client<typeof TransactionService>;
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
    // As the gateway runs: gRPC WatchStatus on the lean stream path, the other protocols on the router.
    streamRoutes: createStreamRoutes({ chains }),
    auth: createApiKeyChecker([API_KEY]),
    logger: createLogger({ level: "info", destination: logs.stream }),
  });
  listening = await server.listen(0, "127.0.0.1");
  const baseUrl = `http://127.0.0.1:${listening.port}`;
  grpc = createClient(TransactionService, createGrpcTransport({ baseUrl }));
  connect = createClient(TransactionService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
  payer = await chain.funded(100);
  await fees.refresh();
});

afterAll(async () => {
  await listening?.close();
  core?.stop();
  await fees?.stop();
  await chain?.stop();
});

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream);
}

/** Waits until the engine follows nothing, so that any upstream call after this is the request's own. */
async function settleEngine(): Promise<void> {
  while (core.stats().inFlight > 0) await new Promise((r) => setTimeout(r, 50));
}

/** Upstream calls a request may make (the fee market's block reads are background work). */
function requestCalls(): number {
  return [
    "getSignatureStatuses",
    "getBlockHeight",
    "isBlockhashValid",
    "getLatestBlockhash",
    "simulateTransaction",
    "sendTransaction",
    "getTransaction",
    "getMultipleAccounts",
  ].reduce((n, m) => n + (chain.calls.get(m) ?? 0), 0);
}

async function rpcError(
  promise: Promise<unknown>,
): Promise<{ code: Code; reason: string | undefined; error: ConnectError }> {
  const caught = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(caught).toBeInstanceOf(ConnectError);
  const error = caught as ConnectError;
  return { code: error.code, reason: error.findDetails(ErrorInfoSchema)[0]?.reason, error };
}

describe("TransactionService over gRPC and Connect", () => {
  it("sends a transfer with confirm true and answers CONFIRMED with slot, exact fee and prices", async () => {
    const before = await chain.balance(payer.address);
    const tx = await transferTransaction({
      payer,
      blockhash: await chain.latestBlockhash(),
      budget: { units: 800, microLamports: 10_000n },
    });
    // Read before the send: once the transaction lands, its own price joins the market.
    const highPrice = fees.priceFor("high", [payer.address]);
    expect(highPrice).toBeDefined();
    const { result } = await grpc.sendTransaction(
      { transaction: tx.wire, priorityFee: { choice: { case: "level", value: PriorityLevel.HIGH } } },
      { headers },
    );
    expect([TransactionStatus.CONFIRMED, TransactionStatus.FINALIZED]).toContain(result?.status);
    expect(result?.signature).toBe(tx.signature);
    expect(result?.slot).toBeGreaterThan(0n);
    expect(result?.fee?.lamports).toBe(5_008n);
    expect(result?.fee?.sol).toBeCloseTo(0.000005008, 12);
    expect(before - (await chain.balance(payer.address))).toBe(1_000_000n + 5_008n);
    expect(result?.computeUnitPrice).toBe(10_000n);
    // The localnet's blocks feed the fee market, so the level has a price.
    expect(result?.requestedComputeUnitPrice).toBe(highPrice);
    expect(result?.lastValidBlockHeight).toBeGreaterThan(0n);
  });

  it("answers SUBMITTED with confirm false; GetTransactionStatus and WatchStatus see it to FINALIZED", async () => {
    const tx = await transferTransaction({ payer, blockhash: await chain.latestBlockhash() });
    const { result } = await connect.sendTransaction({ transaction: tx.wire, confirm: false }, { headers });
    expect(result?.status).toBe(TransactionStatus.SUBMITTED);
    const statuses: TransactionStatus[] = [];
    for await (const event of grpc.watchStatus({ signature: tx.signature }, { headers })) {
      if (event.event.case === "record") statuses.push(event.event.value.status);
    }
    // The record as it stands, then each change, in order, to FINALIZED. On a fast chain (25 ms slots,
    // finalized 6 slots later) a loaded machine may start the watch past SUBMITTED or skip CONFIRMED.
    expect(statuses.at(-1)).toBe(TransactionStatus.FINALIZED);
    expect(statuses.every((s, i) => i === 0 || s > statuses[i - 1])).toBe(true);
    const { record } = await connect.getTransactionStatus({ signature: tx.signature }, { headers });
    expect(record).toMatchObject({ status: TransactionStatus.FINALIZED, fee: { lamports: 5_000n } });
    expect(record?.updatedAt).toBeDefined();
  });

  it("frees a watch when its client goes away", async () => {
    await chain.localnet.control({ freeze: true });
    try {
      const tx = await transferTransaction({ payer, blockhash: await chain.latestBlockhash() });
      await grpc.sendTransaction({ transaction: tx.wire, confirm: false }, { headers });
      const controller = new AbortController();
      const kinds: string[] = [];
      const watching = (async () => {
        for await (const event of connect.watchStatus(
          { signature: tx.signature },
          { headers, signal: controller.signal },
        )) {
          kinds.push(event.event.case ?? "");
          if (event.event.case === "heartbeat") controller.abort();
        }
      })().catch((e: unknown) => ConnectError.from(e).code);
      expect(await watching).toBe(Code.Canceled);
      expect(kinds).toEqual(["record", "heartbeat"]);
      for (let i = 0; i < 50 && core.stats().watchers > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(core.stats().watchers).toBe(0);
    } finally {
      await chain.localnet.control({ freeze: false });
    }
  });

  it("answers SIMULATION_FAILED with the program logs, and FAILED with the error once preflight is skipped", async () => {
    const poor = await chain.funded(1);
    const tx = await transferTransaction({
      payer: poor,
      lamports: 2n * 10n ** 9n,
      blockhash: await chain.latestBlockhash(),
    });
    const simulated = await rpcError(grpc.sendTransaction({ transaction: tx.wire }, { headers }));
    expect(simulated.code).toBe(Code.FailedPrecondition);
    expect(simulated.reason).toBe("SIMULATION_FAILED");
    const metadata = simulated.error.findDetails(ErrorInfoSchema)[0].metadata;
    expect(JSON.parse(metadata.logs)).toEqual(expect.arrayContaining([expect.stringMatching(/insufficient lamports/)]));
    expect(JSON.parse(metadata.error)).toEqual({ InstructionError: [0, { Custom: 1 }] });

    const { result } = await grpc.sendTransaction({ transaction: tx.wire, skipPreflight: true }, { headers });
    expect(result?.status).toBe(TransactionStatus.FAILED);
    expect(result?.error).toMatchObject({ code: "InstructionError", instructionIndex: 0, customCode: 1 });
    expect(toJson(ValueSchema, result!.error!.raw!)).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(result?.fee?.lamports).toBe(5_000n);
  });

  it("prepares a draft over Connect JSON with the fee market's estimate; signed, it lands at the expected fee", async () => {
    const unsigned = await transferTransaction({ payer, blockhash: await chain.latestBlockhash() });
    unsigned.wire.fill(0, 1, 65);
    const prepared = await connect.prepareTransaction(
      { transaction: unsigned.wire, priorityFee: { choice: { case: "microLamports", value: 20_000n } } },
      { headers },
    );
    expect(prepared.computeUnitPrice).toBe(20_000n);
    expect(prepared.computeUnitLimit).toBeGreaterThan(0);
    // Twice what a transfer loads plus 64 KiB, in 32 KiB pages: 96 KiB (a transfer loads a few hundred bytes).
    expect(prepared.loadedAccountsDataSizeLimit).toBe(96 * 1024);
    expect(prepared.estimate?.source).toBe(FeeSource.BLOCKS);
    expect(prepared.estimate?.writableAccounts).toContain(payer.address);
    const signed = await signTransaction([payer.keyPair], getTransactionDecoder().decode(prepared.transaction));
    const { result } = await grpc.sendTransaction(
      { transaction: new Uint8Array(getTransactionEncoder().encode(signed)) },
      { headers },
    );
    expect([TransactionStatus.CONFIRMED, TransactionStatus.FINALIZED]).toContain(result?.status);
    expect(result?.fee?.lamports).toBe(prepared.expectedFee?.lamports);
  });

  it("maps bad requests to clear errors", async () => {
    const tx = await transferTransaction({ payer, blockhash: await chain.latestBlockhash() });
    const cases: [() => Promise<unknown>, Code, string][] = [
      [
        () => grpc.sendTransaction({ transaction: new Uint8Array() }, { headers }),
        Code.InvalidArgument,
        "INVALID_TRANSACTION",
      ],
      [
        () =>
          grpc.sendTransaction(
            { transaction: tx.wire, priorityFee: { choice: { case: "level", value: 9 as PriorityLevel } } },
            { headers },
          ),
        Code.InvalidArgument,
        "INVALID_PARAMETER",
      ],
      [
        () => grpc.sendTransaction({ transaction: tx.wire, chain: "devnet" }, { headers }),
        Code.NotFound,
        "UNKNOWN_CHAIN",
      ],
      [
        () => grpc.getTransactionStatus({ signature: "not-a-signature" }, { headers }),
        Code.InvalidArgument,
        "INVALID_PARAMETER",
      ],
      [() => grpc.getTransactionStatus({ signature: tx.signature }, { headers }), Code.NotFound, "NOT_FOUND"],
      [() => drain(grpc.watchStatus({ signature: tx.signature }, { headers })), Code.NotFound, "NOT_FOUND"],
      [() => drain(grpc.watchStatus({ signature: "" }, { headers })), Code.InvalidArgument, "INVALID_PARAMETER"],
    ];
    for (const [call, code, reason] of cases) {
      const got = await rpcError(call());
      expect([got.code, got.reason]).toEqual([code, reason]);
    }
  });
});

/** mulberry32: a small seeded PRNG, so every fuzz run sees the same inputs. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("fuzzing every RPC (seeded, bounded)", () => {
  const random = prng(20261121);
  const int = (n: number) => Math.floor(random() * n);
  const bytes = (n: number) => Uint8Array.from({ length: n }, () => int(256));
  const CLIENT_CODES = new Set([Code.InvalidArgument, Code.NotFound, Code.FailedPrecondition]);

  async function mutants(count: number): Promise<Uint8Array[]> {
    const base = await transferTransaction({ payer, blockhash: await chain.latestBlockhash(), budget: { units: 900 } });
    const out: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      const kind = int(6);
      let wire: Uint8Array;
      if (kind === 0)
        wire = bytes(int(1300)); // noise, sometimes oversized
      else if (kind === 1)
        wire = base.wire.subarray(0, int(base.wire.length)); // truncated
      else if (kind === 2)
        wire = Uint8Array.from([...base.wire, ...bytes(1 + int(8))]); // trailing bytes
      else if (kind === 3)
        wire = Uint8Array.from([...base.wire.subarray(0, 65), ...base.wire.subarray(1)]); // duplicated signature
      else {
        wire = base.wire.slice();
        for (let flips = 1 + int(3); flips > 0; flips--) wire[int(wire.length)] ^= 1 << int(8); // mutated
      }
      out.push(wire);
    }
    out.push(new Uint8Array(0), new Uint8Array(1233), Uint8Array.from([1]));
    return out;
  }

  it("SendTransaction: every malformed or mutated transaction is INVALID_TRANSACTION, with no upstream call", async () => {
    const inputs = await mutants(300);
    await settleEngine();
    chain.resetCalls();
    for (const wire of inputs) {
      const skipPreflight = random() < 0.5;
      const got = await rpcError(
        grpc.sendTransaction({ transaction: wire, skipPreflight, confirm: random() < 0.5 }, { headers }),
      );
      expect([got.code, got.reason]).toEqual([Code.InvalidArgument, "INVALID_TRANSACTION"]);
      expect(got.error.message.length).toBeGreaterThan(10);
    }
    expect(requestCalls()).toBe(0);
  });

  it("SendTransaction over Connect JSON: non-base64 and odd field values are refused before the core", async () => {
    const baseUrl = `http://127.0.0.1:${listening.port}/solgate.v1.TransactionService/SendTransaction`;
    const bodies = [
      '{"transaction":"%%%not base64%%%"}',
      '{"transaction":12}',
      '{"transaction":"AAAA","priorityFee":{"level":"PRIORITY_LEVEL_WHATEVER"}}',
      '{"transaction":"AAAA","priorityFee":{"microLamports":"-5"}}',
      '{"transaction":"AAAA","confirm":"yes"}',
      "not json",
      "",
    ];
    await settleEngine();
    chain.resetCalls();
    for (const body of bodies) {
      const response = await fetch(baseUrl, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body,
      });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      const json = (await response.json()) as { code: string };
      expect(json.code).toBe("invalid_argument");
    }
    expect(requestCalls()).toBe(0);
  });

  it("PrepareTransaction: malformed drafts never reach the upstream; decodable mutants get a client error, never INTERNAL", async () => {
    const inputs = await mutants(120);
    await settleEngine();
    for (const wire of inputs) {
      chain.resetCalls();
      const fee = random() < 0.3 ? { choice: { case: "level" as const, value: int(8) as PriorityLevel } } : undefined;
      const outcome = await grpc
        .prepareTransaction({ transaction: wire, priorityFee: fee, replaceComputeBudget: random() < 0.5 }, { headers })
        .then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
      if (outcome === undefined) continue; // a mutant that is still a valid draft
      expect(CLIENT_CODES.has(outcome.code), `${Code[outcome.code]}: ${outcome.message}`).toBe(true);
      const reason = outcome.findDetails(ErrorInfoSchema)[0]?.reason;
      if (
        reason === "INVALID_TRANSACTION" &&
        /empty|truncated|limit is|trailing|does not decode|signature slots|header|account/.test(outcome.message)
      ) {
        expect(requestCalls()).toBe(0);
      }
    }
    // The localnet survived every draft that reached it.
    expect(await chain.upstream.rpc.getSlot().send()).toBeGreaterThan(0n);
  });

  it("GetTransactionStatus and WatchStatus: malformed signatures are INVALID_PARAMETER without an upstream call; unknown ones NOT_FOUND", async () => {
    const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0OIl+/=_-! ";
    await settleEngine();
    chain.resetCalls();
    for (let i = 0; i < 200; i++) {
      const signature = Array.from({ length: int(120) }, () => alphabet[int(alphabet.length)]).join("");
      const unary = await rpcError(grpc.getTransactionStatus({ signature }, { headers }));
      const stream = await rpcError(drain(grpc.watchStatus({ signature }, { headers })));
      for (const got of [unary, stream])
        expect([got.code, got.reason]).toEqual([Code.InvalidArgument, "INVALID_PARAMETER"]);
    }
    expect(requestCalls()).toBe(0);
    for (let i = 0; i < 20; i++) {
      const unknown = (await generateKeyPairSigner()).address + (await generateKeyPairSigner()).address;
      const signature = (await import("bs58")).default.encode(bytes(64));
      for (const s of [signature, unknown]) {
        const got = await rpcError(grpc.getTransactionStatus({ signature: s }, { headers }));
        expect(got.reason === "NOT_FOUND" || got.reason === "INVALID_PARAMETER").toBe(true);
      }
    }
    expect(core.stats().watchers).toBe(0);
  });
});
