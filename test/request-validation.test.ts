/**
 * The contract's buf.validate rules, enforced on the request path: each rule family answers the same
 * reason, field and message over REST and over gRPC (binary, through the router, and the lean stream
 * path for WatchStatus), against the real gateway and its localnet. Also: REST refuses an explicit
 * `limit=0` that proto3 cannot tell from an unset limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { AccountService } from "../gen/solgate/v1/account_service_pb.js";
import { CollectionService } from "../gen/solgate/v1/collection_service_pb.js";
import { FeeService } from "../gen/solgate/v1/fee_service_pb.js";
import { ProgramService } from "../gen/solgate/v1/program_service_pb.js";
import { TransactionService } from "../gen/solgate/v1/transaction_service_pb.js";
import { WalletService } from "../gen/solgate/v1/wallet_service_pb.js";
import { startRestGateway } from "./rest/rest-gateway.ts";
import type { RestGateway } from "./rest/rest-gateway.ts";

const TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

let t: RestGateway;
beforeAll(async () => {
  t = await startRestGateway();
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

interface Refusal {
  reason: string;
  field: unknown;
  message: string;
}

async function rest(path: string, body?: unknown): Promise<Refusal & { status: number }> {
  const res = await fetch(`${t.base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { ...t.auth, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { code: string; message: string; details?: Record<string, unknown> };
  return { status: res.status, reason: json.code.toUpperCase(), field: json.details?.field, message: json.message };
}

async function grpc(call: (headers: Record<string, string>) => Promise<unknown>): Promise<Refusal & { code: Code }> {
  try {
    await call(t.auth);
  } catch (e) {
    const error = ConnectError.from(e);
    const info = error.findDetails(ErrorInfoSchema)[0];
    return { code: error.code, reason: info?.reason ?? "", field: info?.metadata.field, message: error.rawMessage };
  }
  throw new Error("expected the call to be refused");
}

const clients = () => {
  const transport = createGrpcTransport({ baseUrl: t.url });
  return {
    accounts: createClient(AccountService, transport),
    collections: createClient(CollectionService, transport),
    fees: createClient(FeeService, transport),
    programs: createClient(ProgramService, transport),
    transactions: createClient(TransactionService, transport),
    wallets: createClient(WalletService, transport),
  };
};

async function expectSame(
  restPath: string,
  restBody: unknown,
  call: Parameters<typeof grpc>[0],
  want: Refusal,
): Promise<void> {
  const overRest = await rest(restPath, restBody);
  const overGrpc = await grpc(call);
  expect({ reason: overRest.reason, field: overRest.field, message: overRest.message }).toEqual(want);
  expect({ reason: overGrpc.reason, field: overGrpc.field, message: overGrpc.message }).toEqual(want);
  expect(overRest.status).toBe(400);
  expect(overGrpc.code).toBe(Code.InvalidArgument);
}

describe("the contract's rules on the request path", () => {
  it("addresses: base58 of 32-44 characters, INVALID_ADDRESS naming the field", async () => {
    const c = clients();
    await expectSame(`/accounts/0`, undefined, (headers) => c.accounts.getAccount({ address: "0" }, { headers }), {
      reason: "INVALID_ADDRESS",
      field: "address",
      message: 'address must be a base58 address of 32 bytes, got "0"',
    });
    await expectSame(
      `/programs/${"1".repeat(45)}/accounts`,
      undefined,
      (headers) => c.programs.listProgramAccounts({ programId: "1".repeat(45) }, { headers }),
      {
        reason: "INVALID_ADDRESS",
        field: "programId",
        message: `programId must be a base58 address of 32 bytes, got "${"1".repeat(45)}"`,
      },
    );
    await expectSame(
      `/wallets/${"O".repeat(40)}/tokens`,
      undefined,
      (headers) => c.wallets.listWalletTokens({ owner: "O".repeat(40) }, { headers }),
      {
        reason: "INVALID_ADDRESS",
        field: "owner",
        message: `owner must be a base58 address of 32 bytes, got "${"O".repeat(40)}"`,
      },
    );
  });

  it("page sizes: out of range is INVALID_PARAMETER (limit); 0 is the default over gRPC but refused over REST", async () => {
    const c = clients();
    const mint = t.manifest.collections.find((x) => x.seeded)!.mint;
    await expectSame(
      `/collections/${mint}/nfts?limit=1001`,
      undefined,
      (headers) => c.collections.listCollectionNfts({ address: mint, limit: 1001 }, { headers }),
      {
        reason: "INVALID_PARAMETER",
        field: "limit",
        message: "limit must be 1-1000, got 1001",
      },
    );
    await expectSame(
      `/programs/${TOKEN}/accounts?match=0:${USDC}&limit=501`,
      undefined,
      (headers) => c.programs.listProgramAccounts({ programId: TOKEN, match: [`0:${USDC}`], limit: 501 }, { headers }),
      {
        reason: "INVALID_PARAMETER",
        field: "limit",
        message: "limit must be 1-500, got 501",
      },
    );
    const zero = await rest(`/collections/${mint}/nfts?limit=0`);
    expect(zero).toMatchObject({
      status: 400,
      reason: "INVALID_PARAMETER",
      field: "limit",
      message: "limit must be 1-1000, got 0",
    });
    const page = await c.collections.listCollectionNfts({ address: mint, limit: 0 }, { headers: t.auth });
    expect(page.items.length).toBeGreaterThan(0);
  });

  it("program filters: offset:base58 form, size bound, at most 4 filters in all", async () => {
    const c = clients();
    await expectSame(
      `/programs/${TOKEN}/accounts?match=0-abc`,
      undefined,
      (headers) => c.programs.listProgramAccounts({ programId: TOKEN, match: ["0-abc"] }, { headers }),
      {
        reason: "INVALID_PARAMETER",
        field: "match",
        message: 'match[0] must be written offset:base58, got "0-abc"',
      },
    );
    await expectSame(
      `/programs/${TOKEN}/accounts?size=10485761`,
      undefined,
      (headers) => c.programs.listProgramAccounts({ programId: TOKEN, size: 10485761n }, { headers }),
      {
        reason: "INVALID_PARAMETER",
        field: "size",
        message: "size must be 0-10485760, got 10485761",
      },
    );
    const four = [0, 32, 64, 96].map((o) => `${o}:${USDC}`);
    await expectSame(
      `/programs/${TOKEN}/accounts?size=165&${four.map((m) => `match=${m}`).join("&")}`,
      undefined,
      (headers) => c.programs.listProgramAccounts({ programId: TOKEN, size: 165n, match: four }, { headers }),
      {
        reason: "INVALID_PARAMETER",
        field: "match",
        message: "at most 4 filters are allowed (size and matches together), got 5",
      },
    );
  });

  it("signatures: base58 of 64-88 characters, required; the lean stream path answers the same", async () => {
    const c = clients();
    const bad = "not-a-signature";
    const want = {
      reason: "INVALID_PARAMETER",
      field: "signature",
      message: `signature must be base58 (64-88 characters), got "${bad}"`,
    };
    await expectSame(
      `/transactions/${bad}/status`,
      undefined,
      (headers) => c.transactions.getTransactionStatus({ signature: bad }, { headers }),
      want,
    );
    const watched = await grpc(async (headers) => {
      for await (const _ of c.transactions.watchStatus({ signature: bad }, { headers })) void _;
    });
    expect({ reason: watched.reason, field: watched.field, message: watched.message }).toEqual(want);
    const empty = await grpc(async (headers) => {
      for await (const _ of c.transactions.watchStatus({ signature: "" }, { headers })) void _;
    });
    expect({ reason: empty.reason, field: empty.field, message: empty.message }).toEqual({
      reason: "INVALID_PARAMETER",
      field: "signature",
      message: "signature is required",
    });
  });

  it("transactions: required and at most 1232 bytes, INVALID_TRANSACTION", async () => {
    const c = clients();
    const empty = { reason: "INVALID_TRANSACTION", field: undefined, message: "transaction is empty" };
    await expectSame(`/network/fees/estimate`, {}, (headers) => c.fees.estimateFees({}, { headers }), empty);
    await expectSame(
      `/transactions/send`,
      { transaction: "" },
      (headers) => c.transactions.sendTransaction({}, { headers }),
      empty,
    );
    const big = new Uint8Array(1300);
    await expectSame(
      `/transactions/prepare`,
      { transaction: Buffer.from(big).toString("base64") },
      (headers) => c.transactions.prepareTransaction({ transaction: big }, { headers }),
      {
        reason: "INVALID_TRANSACTION",
        field: undefined,
        message: "transaction is 1300 bytes; the limit is 1232",
      },
    );
  });

  it("bundles: 1-5 transactions (BUNDLE_TOO_LARGE), each at most 1232 bytes (INVALID_TRANSACTION), a 64-hex id", async () => {
    const c = clients();
    const tx = new Uint8Array(200);
    for (const count of [0, 6]) {
      await expectSame(
        `/bundles`,
        { transactions: Array.from({ length: count }, () => Buffer.from(tx).toString("base64")) },
        (headers) => c.transactions.sendBundle({ transactions: Array.from({ length: count }, () => tx) }, { headers }),
        {
          reason: "BUNDLE_TOO_LARGE",
          field: undefined,
          message: `a bundle holds 1 to 5 transactions; this one holds ${count}`,
        },
      );
    }
    const big = new Uint8Array(1300);
    await expectSame(
      `/bundles`,
      { transactions: [Buffer.from(tx).toString("base64"), Buffer.from(big).toString("base64")] },
      (headers) => c.transactions.sendBundle({ transactions: [tx, big] }, { headers }),
      {
        reason: "INVALID_TRANSACTION",
        field: undefined,
        message: "transaction 1: transaction is 1300 bytes; the limit is 1232",
      },
    );
    await expectSame(
      `/bundles/${"A".repeat(64)}`,
      undefined,
      (headers) => c.transactions.getBundleStatus({ bundleId: "A".repeat(64) }, { headers }),
      {
        reason: "INVALID_PARAMETER",
        field: "bundleId",
        message: `bundleId must be a string matching ^[0-9a-f]{64}$, got "${"A".repeat(64)}"`,
      },
    );
  });
});
