/**
 * FeeService over an in-memory Connect transport, backed by real fee markets reading the real localnet
 * (which serves a recorded mainnet block): request mapping, response shape and JSON names, errors.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { toJson } from "@bufbuild/protobuf";
import { FeeService, GetFeesResponseSchema } from "../../gen/solgate/v1/fee_service_pb.js";
import { FeeSource } from "../../gen/solgate/v1/fee_pb.js";
import { createFeeServiceImpl } from "../../src/services/fee-service.ts";
import { createChainRegistry } from "../../src/chains.ts";
import type { ChainContext } from "../../src/chains.ts";
import { createErrorInterceptor } from "../../src/server/interceptors.ts";
import { createLogger } from "../../src/server/logger.ts";
import { reasonOf } from "../../src/errors.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";
import { createFeeMarket } from "../../src/fees/fee-market.ts";
import type { FeeMarket } from "../../src/fees/fee-market.ts";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import { REAL_BLOCK_FILE, referenceLevels, referenceTransactions } from "../fees/real-block.ts";

/** A core this service must never touch: any use fails the test. */
function unused(name: string): never {
  return new Proxy(
    {},
    {
      get: (_t, key) => {
        throw new Error(`FeeService used ${name}.${String(key)}`);
      },
    },
  ) as never;
}

let localnet: LocalnetHandle;
let upstream: Upstream;
let market: FeeMarket;
let idle: FeeMarket;
let client: ReturnType<typeof createClient<typeof FeeService>>;

beforeAll(async () => {
  localnet = await startLocalnet({ blocks: [REAL_BLOCK_FILE], traffic: false, world: false });
  upstream = createUpstream({ chain: "localnet", rpcUrls: [localnet.rpcUrl] });
  market = createFeeMarket({ upstream, backfillSlots: 150 });
  await market.refresh();
  idle = createFeeMarket({ upstream }); // never started: a chain with no data yet
  // Every other core is a trap: FeeService must need only `fees`.
  const context = (name: string, fees: FeeMarket): ChainContext =>
    new Proxy({ name, upstream, fees } as ChainContext, {
      get: (target, key) => (key in target ? target[key as keyof ChainContext] : unused(String(key))),
    });
  const chains = createChainRegistry([context("localnet", market), context("idle", idle)], "localnet");
  const transport = createRouterTransport((router) => router.service(FeeService, createFeeServiceImpl({ chains })), {
    router: { interceptors: [createErrorInterceptor(createLogger({ level: "silent" }))] },
  });
  client = createClient(FeeService, transport);
});
afterAll(async () => {
  await market?.stop();
  await upstream?.close();
  await localnet?.stop();
});

async function connectError(promise: Promise<unknown>): Promise<ConnectError> {
  const e = await promise.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ConnectError);
  return e as ConnectError;
}

const nonVote = referenceTransactions.filter((t) => !t.isVote);

describe("FeeService", () => {
  it("GetFees answers the chain's global levels, in the contract's shape and JSON names", async () => {
    const response = await client.getFees({});
    const estimate = response.estimate!;
    expect(estimate.source).toBe(FeeSource.BLOCKS);
    expect(estimate.priority).toMatchObject({
      ...referenceLevels(nonVote.map((t) => t.price)),
      unit: "microLamportsPerComputeUnit",
    });
    expect(estimate.baseFee).toMatchObject({ lamportsPerSignature: 5000n, signatures: 1n, lamports: 5000n });
    expect(estimate.sampleSize).toBe(BigInt(nonVote.length));
    expect(estimate.updatedAt).toBeDefined();
    // Levels of 0 are proto3 defaults: plain toJson would omit them (all are 0 in this 2022 block).
    const json = toJson(GetFeesResponseSchema, response, { alwaysEmitImplicit: true }) as {
      estimate: Record<string, any>;
    };
    expect(Object.keys(json.estimate.priority).sort()).toEqual(
      ["high", "low", "medium", "recommended", "unit", "veryHigh"].sort(),
    );
    expect(json.estimate.baseFee).toEqual({ lamportsPerSignature: "5000", signatures: "1", lamports: "5000" });
    expect(json.estimate.source).toBe("FEE_SOURCE_BLOCKS");
    expect(json.estimate).toHaveProperty("updatedAt");
    expect(json.estimate).toHaveProperty("windowSlots");
  });

  it("says when a chain has no data yet, without inventing levels", async () => {
    const { estimate } = await client.getFees({ chain: "idle" });
    expect(estimate!.source).toBe(FeeSource.NONE);
    expect(estimate!.priority).toBeUndefined();
    expect(estimate!.baseFee!.lamportsPerSignature).toBe(5000n);
  });

  it("EstimateFees prices a transaction from its write locks and signature count", async () => {
    const priced = nonVote.find((t) => t.price > 0n)!;
    const { estimate } = await client.estimateFees({ transaction: priced.wire });
    expect(estimate!.writableAccounts).toEqual(priced.writable);
    expect(estimate!.priority).toMatchObject({
      low: priced.price,
      medium: priced.price,
      high: priced.price,
      veryHigh: priced.price,
      recommended: priced.price,
    });
    expect(estimate!.baseFee).toMatchObject({ signatures: 1n, lamports: 5000n });
  });

  it("answers bad input with INVALID_TRANSACTION saying what is wrong, and unknown chains with UNKNOWN_CHAIN", async () => {
    const empty = await connectError(client.estimateFees({ transaction: new Uint8Array() }));
    expect([empty.code, reasonOf(empty), empty.rawMessage]).toEqual([
      Code.InvalidArgument,
      "INVALID_TRANSACTION",
      "transaction is empty",
    ]);
    const junk = await connectError(client.estimateFees({ transaction: new Uint8Array([1, 2, 3]) }));
    expect([junk.code, reasonOf(junk)]).toEqual([Code.InvalidArgument, "INVALID_TRANSACTION"]);
    expect(junk.rawMessage).toMatch(/truncated/);
    const huge = await connectError(client.estimateFees({ transaction: new Uint8Array(5000) }));
    expect(huge.rawMessage).toMatch(/5000 bytes; the limit is 1232/);
    const mars = await connectError(client.getFees({ chain: "mars" }));
    expect([mars.code, reasonOf(mars)]).toEqual([Code.NotFound, "UNKNOWN_CHAIN"]);
  });
});
