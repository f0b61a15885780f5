/**
 * Every RPC Solgate serves, called once through a real gateway, answered as the client sees it: the HTTP
 * status, the Connect code and the ErrorInfo reason. Unary calls go as Connect JSON over plain fetch (so
 * the HTTP status is the real one); WatchStatus, a server stream, through a Connect client (its first
 * message, or its error). Shared by hostile-upstream.test.ts and abuse-bench's hostile-upstream section.
 */
import { readFileSync } from "node:fs";
import { fromBinary } from "@bufbuild/protobuf";
import type { JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { createKeyPairSignerFromBytes, createSolanaRpc, generateKeyPairSigner } from "@solana/kit";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { draftTransfer } from "../fees/on-chain.ts";
import { transferTransaction } from "../transactions/chain-fixture.ts";

/** What a client saw. */
export interface CallOutcome {
  rpc: string;
  /** HTTP status (a stream's errors are mapped as Connect maps codes: unavailable 503, internal 500). */
  httpStatus: number;
  /** Connect code name (`ok` for success). */
  code: string;
  /** ErrorInfo reason, when there is one. */
  reason?: string;
  /** ErrorInfo metadata `failure`, when there is one. */
  failure?: string;
  /** The answer (JSON) of a success. */
  value?: unknown;
  ms: number;
}

/** The world the requests are made from (as the localnet's manifest writes it). */
export interface HostileWorld {
  chain: string;
  collections: { mint: string; seeded: boolean }[];
  fungibleMints: { symbol: string; mint: string }[];
  demoWallet: { address: string; keypairFile: string };
}

/** A valid request of every RPC, and a transfer that landed (sent straight to the real node). */
export async function requestsOfEveryRpc(world: HostileWorld, realRpcUrl: string): Promise<Map<string, JsonValue>> {
  const payer = await createKeyPairSignerFromBytes(
    Uint8Array.from(JSON.parse(readFileSync(world.demoWallet.keypairFile, "utf8")) as number[]),
  );
  const rpc = createSolanaRpc(realRpcUrl);
  const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const tx = await transferTransaction({ payer, blockhash });
  await rpc.sendTransaction(Buffer.from(tx.wire).toString("base64") as never, { encoding: "base64" }).send();
  for (let i = 0; i < 200; i++) {
    const { value } = await rpc.getSignatureStatuses([tx.signature as never]).send();
    if (value[0]?.confirmationStatus === "confirmed" || value[0]?.confirmationStatus === "finalized") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const collection = world.collections.find((c) => c.seeded)!;
  const gate = world.fungibleMints.find((m) => m.symbol === "GATE")!;
  const draft = Buffer.from(draftTransfer(payer.address, [(await generateKeyPairSigner()).address])).toString("base64");
  const signed = Buffer.from(tx.wire).toString("base64");
  const { chain } = world;
  return new Map<string, JsonValue>([
    ["solgate.v1.CollectionService/GetCollection", { chain, address: collection.mint }],
    ["solgate.v1.CollectionService/ListCollectionNfts", { chain, address: collection.mint, limit: 5 }],
    ["solgate.v1.FeeService/GetFees", { chain }],
    ["solgate.v1.FeeService/EstimateFees", { chain, transaction: draft }],
    [
      "solgate.v1.ProgramService/ListProgramAccounts",
      {
        chain,
        programId: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
        size: "165",
        match: [`0:${gate.mint}`],
        limit: 3,
      },
    ],
    ["solgate.v1.TransactionService/SendTransaction", { chain, transaction: signed, confirm: false }],
    ["solgate.v1.TransactionService/GetTransactionStatus", { chain, signature: tx.signature }],
    // A signature nobody sent: a lying node reports it finalized.
    ["solgate.v1.TransactionService/GetTransactionStatus#unknown", { chain, signature: UNSENT_SIGNATURE }],
    ["solgate.v1.TransactionService/WatchStatus", { chain, signature: tx.signature }],
    [
      "solgate.v1.TransactionService/PrepareTransaction",
      { chain, transaction: draft, priorityFee: { level: "PRIORITY_LEVEL_AUTO" } },
    ],
    ["solgate.v1.AccountService/GetAccount", { chain, address: world.demoWallet.address }],
    ["solgate.v1.WalletService/ListWalletTokens", { chain, owner: world.demoWallet.address, limit: 5 }],
    ["solgate.v1.WalletService/ListWalletNfts", { chain, owner: world.demoWallet.address, limit: 5 }],
    ["solgate.v1.TokenService/ListTokenHolders", { chain, mint: gate.mint, limit: 10 }],
  ]);
}

/** A well-formed signature of no transaction. */
const UNSENT_SIGNATURE = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";

/** Calls `rpc` (`Service/Method`, with an optional `#label`) once; never throws (a hang past `timeoutMs` is reported as code `hang`). */
export async function callOnce(
  origin: string,
  apiKey: string,
  rpc: string,
  request: JsonValue,
  timeoutMs = 60_000,
): Promise<CallOutcome> {
  const started = performance.now();
  const path = rpc.split("#")[0];
  const done = (o: Omit<CallOutcome, "rpc" | "ms">): CallOutcome => ({ rpc, ...o, ms: performance.now() - started });
  if (path.endsWith("/WatchStatus")) {
    const client = createClient(TransactionService, createConnectTransport({ baseUrl: origin, httpVersion: "1.1" }));
    try {
      const r = request as { chain: string; signature: string };
      for await (const message of client.watchStatus(r, {
        headers: { authorization: `Bearer ${apiKey}` },
        timeoutMs,
      })) {
        if (message.event.case !== "record") continue;
        return done({ httpStatus: 200, code: "ok", value: { signature: message.event.value.signature } });
      }
      return done({ httpStatus: 200, code: "ok", value: null });
    } catch (error) {
      const e = ConnectError.from(error);
      const info = e.findDetails(ErrorInfoSchema)[0];
      return done({
        httpStatus: httpStatusOfCode(e.code),
        code: e.code === Code.DeadlineExceeded ? "hang" : codeName(e.code),
        ...(info === undefined ? {} : { reason: info.reason, failure: info.metadata.failure }),
      });
    }
  }
  try {
    const res = await fetch(`${origin}/${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = { unreadable: text.slice(0, 200) };
    }
    if (res.status === 200) return done({ httpStatus: 200, code: "ok", value: body });
    const details = (body.details ?? []) as { type?: string; value?: string }[];
    const raw = details.find((d) => d.type === "google.rpc.ErrorInfo")?.value;
    const info = raw === undefined ? undefined : fromBinary(ErrorInfoSchema, Buffer.from(raw, "base64"));
    return done({
      httpStatus: res.status,
      code: typeof body.code === "string" ? body.code : "none",
      ...(info === undefined ? {} : { reason: info.reason, failure: info.metadata.failure }),
    });
  } catch {
    return done({ httpStatus: 0, code: "hang" });
  }
}

/** A Connect code as Connect JSON spells it (`failed_precondition`). */
function codeName(code: Code): string {
  return Code[code].replace(/(?<=[a-z])(?=[A-Z])/g, "_").toLowerCase();
}

/** Connect's code-to-HTTP mapping, for a stream's error. */
function httpStatusOfCode(code: Code): number {
  switch (code) {
    case Code.Unavailable:
      return 503;
    case Code.Internal:
    case Code.Unknown:
    case Code.DataLoss:
      return 500;
    case Code.InvalidArgument:
      return 400;
    case Code.NotFound:
      return 404;
    case Code.DeadlineExceeded:
      return 504;
    case Code.ResourceExhausted:
      return 429;
    default:
      return 400;
  }
}

/**
 * What an answer may be behind a hostile node: a success, or UNAVAILABLE / 503 with a reason. A
 * success of an RPC whose answer does not move (`stable`) must equal the honest answer.
 */
export function judge(outcome: CallOutcome, honest: CallOutcome | undefined): string | undefined {
  if (outcome.code === "ok") {
    if (honest === undefined || !STABLE.has(outcome.rpc)) return undefined;
    return JSON.stringify(outcome.value) === JSON.stringify(honest.value)
      ? undefined
      : `${outcome.rpc}: a value other than the honest one: ${JSON.stringify(outcome.value).slice(0, 300)}`;
  }
  if (outcome.httpStatus === 503 && outcome.code === "unavailable" && outcome.reason !== undefined) return undefined;
  // The honest node's own refusal (NOT_FOUND for a signature nobody sent) is a correct answer too.
  if (honest !== undefined && honest.code === outcome.code && honest.reason === outcome.reason) return undefined;
  return `${outcome.rpc}: HTTP ${outcome.httpStatus} ${outcome.code} ${outcome.reason ?? "(no reason)"}`;
}

/** RPCs whose honest answer stays the same while nothing is sent (no traffic on the chain). */
const STABLE = new Set([
  "solgate.v1.CollectionService/GetCollection",
  "solgate.v1.CollectionService/ListCollectionNfts",
  "solgate.v1.ProgramService/ListProgramAccounts",
  "solgate.v1.AccountService/GetAccount",
  "solgate.v1.WalletService/ListWalletTokens",
  "solgate.v1.WalletService/ListWalletNfts",
  "solgate.v1.TokenService/ListTokenHolders",
]);
