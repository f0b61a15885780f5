/**
 * Command-line clients with no schema but what server reflection gives them:
 * - buf curl, every RPC over `--protocol grpc` (HTTP/2), `grpcweb` and `connect` (HTTP/1.1), with a
 *   transaction prepared, signed here, sent and watched to its end over each protocol;
 * - grpcurl (from the Go module proxy): list, describe and call every RPC.
 * Errors are read as the tools print them: a code and a `google.rpc.ErrorInfo` detail (decoded here).
 */
import { beforeAll, describe, expect, inject, it } from "vitest";
import { buildDraft, sendTransfer } from "./harness/chain-fixture.ts";
import { TOKEN_PROGRAM } from "./harness/client-env.ts";
import { landed } from "./harness/landed.ts";
import { run } from "./harness/processes.ts";
import type { ProcessResult } from "./harness/processes.ts";
import { ALL_RPCS, SOLGATE_SERVICES } from "./harness/rpcs.ts";
import { decodeErrorInfo, parseJsonStream, signWire } from "./harness/wire.ts";

const BUF = "node_modules/.bin/buf";
const GRPCURL = "test/interop/.bin/grpcurl";

const ctx = inject("interop");
const query = { programId: TOKEN_PROGRAM, size: "165", match: [`0:${ctx.chain.mint}`], limit: 500 };
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

/** What one tool call printed. */
interface Call {
  result: ProcessResult;
  /** The response messages (one for unary, any number for a stream). */
  messages: any[];
}

function expectOk(call: Call): any[] {
  expect(call.result.code, `${call.result.stdout}\n${call.result.stderr}`).toBe(0);
  return call.messages;
}

/** The finalized record at the end of a WatchStatus stream, after checking the order of the records. */
function expectWatchEndsFinalized(messages: any[], signature: string): any {
  const records = messages.filter((m) => m.record !== undefined).map((m) => m.record);
  expect(records.length, JSON.stringify(messages)).toBeGreaterThan(0);
  const order = ["TRANSACTION_STATUS_SUBMITTED", "TRANSACTION_STATUS_CONFIRMED", "TRANSACTION_STATUS_FINALIZED"];
  const ranks = records.map((r) => order.indexOf(r.status));
  expect(
    ranks.every((r, i) => r >= 0 && (i === 0 || r >= ranks[i - 1])),
    JSON.stringify(records),
  ).toBe(true);
  const last = records.at(-1);
  expect(last).toMatchObject({ signature, status: "TRANSACTION_STATUS_FINALIZED" });
  expect(BigInt(last.slot)).toBeGreaterThan(0n);
  expect(Math.abs(Date.parse(last.updatedAt) - Date.now())).toBeLessThan(3_600_000);
  return last;
}

describe("buf curl (reflection, no schema)", () => {
  const bufCurl = async (protocol: string, rpc: string, body: unknown, key = true): Promise<Call & { error: any }> => {
    const args = ["curl", "--protocol", protocol];
    // gRPC needs HTTP/2 (h2c with prior knowledge); gRPC-Web and Connect go over HTTP/1.1.
    if (protocol === "grpc") args.push("--http2-prior-knowledge");
    if (key) args.push("-H", `Authorization: Bearer ${ctx.apiKey}`);
    args.push("-d", JSON.stringify(body), `${ctx.url}/solgate.v1.${rpc}`);
    const result = await run(BUF, args, { timeoutMs: 150_000 });
    const [error] = result.code === 0 ? [] : parseJsonStream(result.stderr);
    return { result, messages: parseJsonStream(result.stdout), error };
  };

  it("lists every service through reflection", async () => {
    const result = await run(BUF, ["curl", "--http2-prior-knowledge", "--list-services", ctx.url]);
    const listed = result.stdout.split("\n").filter(Boolean);
    expect(listed).toEqual(
      expect.arrayContaining([...SOLGATE_SERVICES.map((s) => s.typeName), "grpc.health.v1.Health"]),
    );
    const methods = await run(BUF, ["curl", "--http2-prior-knowledge", "--list-methods", ctx.url]);
    for (const r of ALL_RPCS) expect(methods.stdout).toContain(`${r.typeName}/${r.method}`);
  });

  // One test per service and protocol, all at once; each protocol drives a transaction of its own.
  const PROTOCOLS = [
    ["grpc", 10],
    ["grpcweb", 11],
    ["connect", 12],
  ] as const;

  it.concurrent.each(PROTOCOLS)("ProgramService over --protocol %s", async (protocol) => {
    const [programs] = expectOk(await bufCurl(protocol, "ProgramService/ListProgramAccounts", query));
    expect(programs.items?.map((a: any) => a.address)).toEqual(ctx.chain.tokenAccounts.map((a) => a.address));
    // uint64 travels as a JSON string, exactly, even past 2^53; enums as their names.
    expect(programs.items.map((a: any) => a.data.parsed.info.tokenAmount.raw ?? "0")).toEqual(
      ctx.chain.tokenAccounts.map((a) => a.raw),
    );
    expect(programs.items.every((a: any) => a.data.format === "DATA_FORMAT_PARSED")).toBe(true);
    expect(programs.nextCursor).toBeUndefined();
  });

  it.concurrent.each(PROTOCOLS)("errors carry ErrorInfo over --protocol %s", async (protocol) => {
    const bad = await bufCurl(protocol, "ProgramService/ListProgramAccounts", { programId: "not-an-address" });
    expect(bad.error?.code).toBe("invalid_argument");
    expect(bad.error.details[0].type).toBe("google.rpc.ErrorInfo");
    expect(decodeErrorInfo(bad.error.details[0].value)).toMatchObject({ reason: "INVALID_ADDRESS", domain: "solgate" });
    const anonymous = await bufCurl(protocol, "ProgramService/ListProgramAccounts", query, false);
    expect(anonymous.error?.code).toBe("unauthenticated");
    expect(decodeErrorInfo(anonymous.error.details[0].value).reason).toBe("UNAUTHENTICATED");
  });

  it.concurrent.each(PROTOCOLS)("FeeService over --protocol %s", async (protocol, index) => {
    const draft = b64(await buildDraft(ctx.localnetUrl, ctx.chain.payerSeed, index));
    if (!landed("FeeService")) {
      // TODO(interop): FeeService not landed.
      for (const rpc of ["GetFees", "EstimateFees"])
        expect((await bufCurl(protocol, `FeeService/${rpc}`, {})).error?.code).toBe("unimplemented");
      return;
    }
    const [fees] = expectOk(await bufCurl(protocol, "FeeService/GetFees", {}));
    expect(fees.estimate.baseFee).toEqual({ lamportsPerSignature: "5000", signatures: "1", lamports: "5000" });
    expect(fees.estimate.source).toMatch(/^FEE_SOURCE_(BLOCKS|RECENT_PRIORITIZATION_FEES|NONE)$/);
    expect(Math.abs(Date.parse(fees.estimate.updatedAt) - Date.now())).toBeLessThan(3_600_000);
    const [estimate] = expectOk(await bufCurl(protocol, "FeeService/EstimateFees", { transaction: draft }));
    expect(estimate.estimate.writableAccounts).toContain(ctx.chain.payer);
  });

  it.concurrent.each(PROTOCOLS)(
    "TransactionService over --protocol %s: prepare, sign, send, watch to the end",
    async (protocol, index) => {
      if (!landed("TransactionService")) {
        // TODO(interop): TransactionService not landed.
        for (const rpc of ["PrepareTransaction", "SendTransaction", "WatchStatus", "GetTransactionStatus"]) {
          expect((await bufCurl(protocol, `TransactionService/${rpc}`, {})).error?.code).toBe("unimplemented");
        }
        return;
      }
      const draft = b64(await buildDraft(ctx.localnetUrl, ctx.chain.payerSeed, index));
      const [prepared] = expectOk(
        await bufCurl(protocol, "TransactionService/PrepareTransaction", {
          transaction: draft,
          priorityFee: { level: "PRIORITY_LEVEL_AUTO" },
        }),
      );
      expect(Number(prepared.computeUnitLimit)).toBeGreaterThan(0);
      const { signed, signature } = signWire(Buffer.from(prepared.transaction, "base64"), ctx.chain.payerSeed);
      const [sent] = expectOk(
        await bufCurl(protocol, "TransactionService/SendTransaction", { transaction: b64(signed), confirm: false }),
      );
      expect(sent.result.signature).toBe(signature);
      expect(sent.result.lastValidBlockHeight).toBe(prepared.lastValidBlockHeight);
      const watched = expectOk(await bufCurl(protocol, "TransactionService/WatchStatus", { signature }));
      const last = expectWatchEndsFinalized(watched, signature);
      expect(last.fee.lamports).toBe(prepared.expectedFee.lamports);
      const [status] = expectOk(await bufCurl(protocol, "TransactionService/GetTransactionStatus", { signature }));
      expect(status.record).toMatchObject({ status: "TRANSACTION_STATUS_FINALIZED", slot: last.slot });
    },
  );

  it.concurrent.each(PROTOCOLS)(
    "AccountService, WalletService and TokenService over --protocol %s",
    async (protocol) => {
      const first = ctx.chain.tokenAccounts[0];
      const [account] = expectOk(await bufCurl(protocol, "AccountService/GetAccount", { address: first.address }));
      expect(account.account).toMatchObject({ address: first.address, owner: TOKEN_PROGRAM, space: "165" });
      expect(account.account.data.parsed.info).toMatchObject({ mint: ctx.chain.mint, owner: first.owner });
      const [mint] = expectOk(await bufCurl(protocol, "AccountService/GetAccount", { address: ctx.chain.mint }));
      expect(mint.account.data.parsed).toMatchObject({ type: "mint", fields: { decimals: first.decimals } });
      const [tokens] = expectOk(
        await bufCurl(protocol, "WalletService/ListWalletTokens", { owner: first.owner, includeZero: true }),
      );
      expect(tokens.items.map((t: any) => t.tokenAccount)).toContain(first.address);
      const [nfts] = expectOk(
        await bufCurl(protocol, "WalletService/ListWalletNfts", { owner: ctx.collection.nftOwner }),
      );
      expect(nfts.items.map((n: any) => n.id)).toEqual(ctx.collection.nftOwnerIds);
      const [holders] = expectOk(
        await bufCurl(protocol, "TokenService/ListTokenHolders", {
          mint: ctx.chain.mint,
          limit: 1000,
          includeZero: true,
        }),
      );
      expect(holders.items.map((h: any) => h.tokenAccount).sort()).toEqual(
        ctx.chain.tokenAccounts.map((a) => a.address).sort(),
      );
    },
  );

  it.concurrent.each(PROTOCOLS)("CollectionService over --protocol %s", async (protocol) => {
    const get = { address: ctx.collection.address };
    const list = { address: ctx.collection.address, limit: 1 };
    if (!landed("CollectionService")) {
      // TODO(interop): CollectionService not landed.
      expect((await bufCurl(protocol, "CollectionService/GetCollection", get)).error?.code).toBe("unimplemented");
      expect((await bufCurl(protocol, "CollectionService/ListCollectionNfts", list)).error?.code).toBe("unimplemented");
      return;
    }
    const [collection] = expectOk(await bufCurl(protocol, "CollectionService/GetCollection", get));
    expect(collection.collection).toMatchObject({
      address: ctx.collection.address,
      name: ctx.collection.name,
      itemCount: ctx.collection.itemCount,
    });
    const [page] = expectOk(await bufCurl(protocol, "CollectionService/ListCollectionNfts", list));
    expect(page.items.map((n: any) => n.id)).toEqual(ctx.collection.members.slice(0, 1));
  });
});

describe("grpcurl (reflection, no schema)", () => {
  let install: ProcessResult;
  beforeAll(async () => {
    install = await run("bash", ["test/interop/install-grpcurl.sh"], { timeoutMs: 600_000 });
    console.log(`grpcurl: go install took ${install.ms} ms`);
  });
  /** `grpcurl [flags] ADDR verb...` (a verb like `list`) or `grpcurl [flags] -d BODY ADDR solgate.v1.RPC`. */
  const grpcurl = async (verb: string[], rpc?: string, body?: unknown): Promise<Call & { error: any }> => {
    const all = ["-plaintext", "-format-error", "-H", `authorization: Bearer ${ctx.apiKey}`];
    if (body !== undefined) all.push("-d", JSON.stringify(body));
    all.push(ctx.addr, ...verb);
    if (rpc !== undefined) all.push(`solgate.v1.${rpc}`);
    const result = await run(GRPCURL, all, { timeoutMs: 150_000 });
    if (rpc === undefined) return { result, messages: [], error: undefined };
    // Messages (several, for a stream) on stdout; with -format-error, the status as JSON on stderr.
    const [error] = result.code === 0 ? [] : parseJsonStream(result.stderr);
    return { result, messages: parseJsonStream(result.stdout), error };
  };

  it("installs from the Go module proxy", () => {
    expect(install.code, install.stderr).toBe(0);
  });

  it("lists and describes every service and method", async () => {
    const list = await grpcurl(["list"]);
    expect(list.result.stdout.split("\n")).toEqual(expect.arrayContaining(SOLGATE_SERVICES.map((s) => s.typeName)));
    for (const service of SOLGATE_SERVICES) {
      const described = await grpcurl(["describe", service.typeName]);
      expect(described.result.code, described.result.stderr).toBe(0);
      for (const m of service.methods) expect(described.result.stdout).toContain(`rpc ${m.name} (`);
    }
  });

  const expectCode = (call: { error: any }, code: number) =>
    expect(call.error?.code, JSON.stringify(call.error)).toBe(code);
  const UNIMPLEMENTED = 12;

  it("calls ProgramService, and reads ErrorInfo from a failed call", async () => {
    const [programs] = expectOk(await grpcurl([], "ProgramService/ListProgramAccounts", query));
    expect(programs.items?.map((a: any) => a.data.parsed.info.tokenAmount.raw ?? "0")).toEqual(
      ctx.chain.tokenAccounts.map((a) => a.raw),
    );
    const bad = await grpcurl([], "ProgramService/ListProgramAccounts", { programId: "not-an-address" });
    expectCode(bad, 3); // INVALID_ARGUMENT
    // grpcurl resolves the detail's type through reflection, so it prints ErrorInfo decoded.
    expect(bad.error.details[0]).toMatchObject({
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "INVALID_ADDRESS",
      domain: "solgate",
    });
  });

  it("calls FeeService", async () => {
    if (!landed("FeeService")) {
      expectCode(await grpcurl([], "FeeService/GetFees", {}), UNIMPLEMENTED); // TODO(interop)
      expectCode(await grpcurl([], "FeeService/EstimateFees", {}), UNIMPLEMENTED);
      return;
    }
    const [fees] = expectOk(await grpcurl([], "FeeService/GetFees", {}));
    expect(fees.estimate.baseFee.lamportsPerSignature).toBe("5000");
    const draft = b64(await buildDraft(ctx.localnetUrl, ctx.chain.payerSeed, 13));
    const [estimate] = expectOk(await grpcurl([], "FeeService/EstimateFees", { transaction: draft }));
    expect(estimate.estimate.writableAccounts).toContain(ctx.chain.payer);
  });

  it("calls TransactionService, following a transaction sent to the chain directly", async () => {
    if (!landed("TransactionService")) {
      for (const rpc of ["PrepareTransaction", "SendTransaction", "WatchStatus", "GetTransactionStatus"]) {
        expectCode(await grpcurl([], `TransactionService/${rpc}`, {}), UNIMPLEMENTED); // TODO(interop)
      }
      return;
    }
    const draft = b64(await buildDraft(ctx.localnetUrl, ctx.chain.payerSeed, 14));
    const [prepared] = expectOk(await grpcurl([], "TransactionService/PrepareTransaction", { transaction: draft }));
    expect(prepared.blockhash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    const garbage = await grpcurl([], "TransactionService/SendTransaction", { transaction: "AQID" });
    expectCode(garbage, 3);
    expect(garbage.error.details[0]).toMatchObject({
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "INVALID_TRANSACTION",
    });
    const signature = await sendTransfer(ctx.localnetUrl, ctx.chain.payerSeed, 15);
    const last = expectWatchEndsFinalized(
      expectOk(await grpcurl([], "TransactionService/WatchStatus", { signature })),
      signature,
    );
    const [status] = expectOk(await grpcurl([], "TransactionService/GetTransactionStatus", { signature }));
    expect(status.record).toMatchObject({ status: "TRANSACTION_STATUS_FINALIZED", slot: last.slot });
  });

  it("calls CollectionService", async () => {
    if (!landed("CollectionService")) {
      expectCode(
        await grpcurl([], "CollectionService/GetCollection", { address: ctx.collection.address }),
        UNIMPLEMENTED,
      ); // TODO(interop)
      expectCode(
        await grpcurl([], "CollectionService/ListCollectionNfts", { address: ctx.collection.address }),
        UNIMPLEMENTED,
      );
      return;
    }
    const [collection] = expectOk(
      await grpcurl([], "CollectionService/GetCollection", { address: ctx.collection.address }),
    );
    expect(collection.collection.itemCount).toBe(ctx.collection.itemCount);
    const [page] = expectOk(
      await grpcurl([], "CollectionService/ListCollectionNfts", { address: ctx.collection.address, limit: 1 }),
    );
    expect(page.items.map((n: any) => n.id)).toEqual(ctx.collection.members.slice(0, 1));
  });

  it("calls AccountService, WalletService and TokenService", async () => {
    const first = ctx.chain.tokenAccounts[0];
    const [account] = expectOk(await grpcurl([], "AccountService/GetAccount", { address: first.address }));
    expect(account.account.data.parsed.info.tokenAmount.raw ?? "0").toBe(first.raw);
    const [tokens] = expectOk(
      await grpcurl([], "WalletService/ListWalletTokens", { owner: first.owner, includeZero: true }),
    );
    expect(tokens.items.map((t: any) => t.tokenAccount)).toContain(first.address);
    const [nfts] = expectOk(
      await grpcurl([], "WalletService/ListWalletNfts", { owner: ctx.collection.nftOwner, limit: 1 }),
    );
    expect(nfts.items.map((n: any) => n.id)).toEqual(ctx.collection.nftOwnerIds.slice(0, 1));
    const [holders] = expectOk(await grpcurl([], "TokenService/ListTokenHolders", { mint: ctx.chain.mint, limit: 2 }));
    expect(holders.items).toHaveLength(2);
  });
});
