/**
 * Every REST path of the seed, with plain fetch, against the real gateway and its embedded localnet
 * (a small seeded world): each response's shape and JSON types field by field, every error code the
 * seed lists, and the same request through Connect JSON reaching the same handler with the same data.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromJson } from "@bufbuild/protobuf";
import type { DescMessage, JsonValue } from "@bufbuild/protobuf";
import { createKeyPairSignerFromBytes, createSolanaRpc, devnet, generateKeyPairSigner } from "@solana/kit";
import type { Blockhash, KeyPairSigner } from "@solana/kit";
import {
  GetCollectionResponseSchema,
  ListCollectionNftsResponseSchema,
} from "../../gen/solgate/v1/collection_service_pb.js";
import { EstimateFeesResponseSchema, GetFeesResponseSchema } from "../../gen/solgate/v1/fee_service_pb.js";
import { ListProgramAccountsResponseSchema } from "../../gen/solgate/v1/program_service_pb.js";
import { GetAccountResponseSchema } from "../../gen/solgate/v1/account_service_pb.js";
import {
  ListWalletNftsResponseSchema,
  ListWalletTokensResponseSchema,
} from "../../gen/solgate/v1/wallet_service_pb.js";
import { ListTokenHoldersResponseSchema } from "../../gen/solgate/v1/token_service_pb.js";
import {
  GetTransactionStatusResponseSchema,
  PrepareTransactionResponseSchema,
  SendTransactionResponseSchema,
} from "../../gen/solgate/v1/transaction_service_pb.js";
import { renderField, renderMessage } from "../../src/rest/rest-json.ts";
import { transferTransaction } from "../transactions/chain-fixture.ts";
import { startRestGateway } from "./rest-gateway.ts";
import type { RestGateway } from "./rest-gateway.ts";
import {
  COLLECTION,
  FEE_ESTIMATE,
  PREPARED_TIP,
  NFT_PAGE,
  PROGRAM_ACCOUNTS_PAGE,
  SEND_RESULT,
  STATUS_RECORD,
  ACCOUNT,
  TOKEN_ACCOUNT_INFO,
  TOKEN_HOLDERS_PAGE,
  WALLET_NFTS_PAGE,
  WALLET_TOKENS_PAGE,
  expectRestError,
  expectShape,
} from "./shapes.ts";

const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const UNKNOWN_ADDRESS = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

let t: RestGateway;
let payer: KeyPairSigner;
let collectionMint: string;
// `devnet` only brands the URL so that the RPC type includes requestAirdrop, which the localnet serves.
const localnetRpc = (url: string) => createSolanaRpc(devnet(url));
let rpc: ReturnType<typeof localnetRpc>;

beforeAll(async () => {
  t = await startRestGateway();
  rpc = localnetRpc(t.gateway.localnetUrl!);
  payer = await createKeyPairSignerFromBytes(t.demoWalletSecret);
  collectionMint = t.manifest.collections.find((c) => c.seeded)!.mint;
});
afterAll(async () => {
  for (const l of t?.logs ?? []) if (l.level === "error") console.log("ERRLOG", JSON.stringify(l).slice(0, 2500));
  await t?.stop();
});

const get = (path: string, headers: Record<string, string> = t.auth) => fetch(`${t.base}${path}`, { headers });
const post = (path: string, body: unknown, headers: Record<string, string> = t.auth) =>
  fetch(`${t.base}${path}`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
async function okJson(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  return JSON.parse(text) as Record<string, unknown>;
}

/** The same RPC over Connect JSON, rendered by the REST rules (`field`: the response_body). */
async function viaConnect(procedure: string, request: unknown, schema: DescMessage, field?: string): Promise<unknown> {
  const res = await fetch(`${t.url}/solgate.v1.${procedure}`, {
    method: "POST",
    headers: { ...t.auth, "content-type": "application/json" },
    body: JSON.stringify(request),
  });
  const body = (await res.json()) as JsonValue;
  expect(res.status, JSON.stringify(body)).toBe(200);
  const message = fromJson(schema, body) as unknown as Record<string, unknown>;
  if (field === undefined) return renderMessage(schema, message);
  const desc = schema.fields.find((f) => f.name === field)!;
  return renderField(desc, message[desc.localName]);
}

async function blockhash(): Promise<{ blockhash: Blockhash; lastValidBlockHeight: bigint }> {
  return (await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value;
}
const base64 = (wire: Uint8Array) => Buffer.from(wire).toString("base64");

describe("GET /v1/{chain}/collections/{address}", () => {
  it("returns the Collection bare, in the seed's shape", async () => {
    const body = await okJson(await get(`/collections/${collectionMint}`));
    expectShape(body, COLLECTION);
    const seeded = t.manifest.collections.find((c) => c.mint === collectionMint)!;
    expect(body.address).toBe(collectionMint);
    expect(body.itemCount).toBe(seeded.verifiedMembers);
    // The embedded localnet's marketplace answers Magic Eden's stats API, and the gateway reads it by default.
    const floor = body.floorPrice as { lamports: number; sol: number; updatedAt: string };
    expect(Number.isInteger(floor.lamports) && floor.lamports > 0).toBe(true);
    expect(floor.sol).toBeCloseTo(floor.lamports / 1e9, 9);
    expect(
      await viaConnect(
        "CollectionService/GetCollection",
        { address: collectionMint },
        GetCollectionResponseSchema,
        "collection",
      ),
    ).toEqual(body);
  });

  it("answers invalid_address, not_found, unknown_chain", async () => {
    await expectRestError(await get("/collections/not-an-address"), 400, "invalid_address");
    await expectRestError(await get(`/collections/${UNKNOWN_ADDRESS}`), 404, "not_found");
    const unknown = await expectRestError(
      await fetch(`${t.url}/v1/devnet/collections/${collectionMint}`, { headers: t.auth }),
      404,
      "unknown_chain",
    );
    expect(unknown.message).toContain("localnet");
    expect(unknown.details.served).toEqual(["localnet"]);
  });
});

describe("GET /v1/{chain}/collections/{address}/nfts", () => {
  it("pages through every verified member, nextCursor null at the end", async () => {
    const seeded = t.manifest.collections.find((c) => c.mint === collectionMint)!;
    const ids: string[] = [];
    let compressed = 0;
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? "?limit=3" : `?limit=3&cursor=${encodeURIComponent(cursor)}`;
      const page = await okJson(await get(`/collections/${collectionMint}/nfts${query}`));
      expectShape(page, NFT_PAGE);
      expect((page.items as unknown[]).length).toBeLessThanOrEqual(3);
      ids.push(...(page.items as { id: string }[]).map((i) => i.id));
      compressed += (page.items as { compressed: boolean }[]).filter((i) => i.compressed).length;
      cursor = page.nextCursor as string | null;
      pages++;
    } while (cursor !== null && pages < 20);
    expect(cursor).toBeNull();
    expect(new Set(ids).size).toBe(seeded.verifiedMembers);
    expect([...ids].sort()).toEqual(ids);
    expect(compressed).toBeGreaterThan(0);
  });

  it("gives the same page as Connect JSON", async () => {
    const rest = await okJson(await get(`/collections/${collectionMint}/nfts?limit=4`));
    expect(
      await viaConnect(
        "CollectionService/ListCollectionNfts",
        { address: collectionMint, limit: 4 },
        ListCollectionNftsResponseSchema,
      ),
    ).toEqual(rest);
  });

  it("answers invalid_parameter for bad query values and unknown parameters", async () => {
    const abc = await expectRestError(
      await get(`/collections/${collectionMint}/nfts?limit=abc`),
      400,
      "invalid_parameter",
    );
    expect(abc.details.field).toBe("limit");
    await expectRestError(await get(`/collections/${collectionMint}/nfts?limit=5000`), 400, "invalid_parameter");
    await expectRestError(await get(`/collections/${collectionMint}/nfts?limit=-1`), 400, "invalid_parameter");
    await expectRestError(await get(`/collections/${collectionMint}/nfts?limit=1&limit=2`), 400, "invalid_parameter");
    await expectRestError(await get(`/collections/${collectionMint}/nfts?cursor=garbage!`), 400, "invalid_parameter");
    const unknown = await expectRestError(
      await get(`/collections/${collectionMint}/nfts?colour=red`),
      400,
      "invalid_parameter",
    );
    expect(unknown.details.field).toBe("colour");
  });
});

describe("GET /v1/{chain}/network/fees", () => {
  it("returns the FeeEstimate bare with numbers, and matches Connect JSON", async () => {
    const body = await okJson(await get("/network/fees"));
    expectShape(body, FEE_ESTIMATE);
    expect(body.baseFee).toEqual({ lamportsPerSignature: 5000, signatures: 1, lamports: 5000 });
    expect(Date.parse(body.updatedAt as string)).not.toBeNaN();
    // The window moves every slot (50 ms here): retry until both reads see the same one.
    for (let attempt = 0; ; attempt++) {
      const rest = await okJson(await get("/network/fees"));
      const connect = (await viaConnect("FeeService/GetFees", {}, GetFeesResponseSchema, "estimate")) as Record<
        string,
        unknown
      >;
      if (connect.slot !== rest.slot && attempt < 20) continue;
      expect(connect).toEqual(rest);
      break;
    }
  });
});

describe("POST /v1/{chain}/network/fees/estimate", () => {
  it("estimates a draft transaction given as base64", async () => {
    const { wire } = await transferTransaction({ payer, blockhash: await blockhash() });
    const body = await okJson(await post("/network/fees/estimate", { transaction: base64(wire) }));
    expectShape(body, FEE_ESTIMATE);
    expect(body.writableAccounts).toContain(payer.address);
    for (let attempt = 0; ; attempt++) {
      const rest = await okJson(await post("/network/fees/estimate", { transaction: base64(wire) }));
      const connect = (await viaConnect(
        "FeeService/EstimateFees",
        { transaction: base64(wire) },
        EstimateFeesResponseSchema,
        "estimate",
      )) as Record<string, unknown>;
      if (connect.slot !== rest.slot && attempt < 20) continue;
      expect(connect).toEqual(rest);
      break;
    }
  });

  it("answers invalid_transaction, and invalid_parameter for bodies that are not JSON or not the request", async () => {
    await expectRestError(await post("/network/fees/estimate", { transaction: "AAAA" }), 400, "invalid_transaction");
    const notJson = await expectRestError(
      await post("/network/fees/estimate", "{transaction:"),
      400,
      "invalid_parameter",
    );
    expect(notJson.details.field).toBe("body");
    await expectRestError(await post("/network/fees/estimate", "[1,2]"), 400, "invalid_parameter");
    await expectRestError(
      await post("/network/fees/estimate", { transaction: "not base64!" }),
      400,
      "invalid_transaction",
    );
    const extra = await expectRestError(
      await post("/network/fees/estimate", { transaction: "AAAA", tip: 1 }),
      400,
      "invalid_parameter",
    );
    expect(extra.details.field).toBe("tip");
  });

  it("answers 413 for an oversized body, without reading it all", async () => {
    const big = JSON.stringify({ transaction: "A".repeat(70 * 1024) });
    const body = await expectRestError(await post("/network/fees/estimate", big), 413, "request_too_large");
    expect(body.details.limit).toBe(64 * 1024);
  });
});

describe("POST /v1/{chain}/transactions/send and GET .../status", () => {
  it("sends with priorityFee as a word or a number and returns the SendResult bare", async () => {
    for (const priorityFee of ["high", 1234, "5678", "auto", undefined]) {
      const { wire, signature } = await transferTransaction({ payer, blockhash: await blockhash() });
      const body = await okJson(await post("/transactions/send", { transaction: base64(wire), priorityFee }));
      expectShape(body, SEND_RESULT);
      expect(body.signature).toBe(signature);
      expect(["confirmed", "finalized"]).toContain(body.status);
      expect(typeof body.slot).toBe("number");
      expect(body.fee).toEqual({ lamports: 5000, sol: 0.000005 });
      expect(body.error).toBeNull();
      if (priorityFee === 1234 || priorityFee === "5678")
        expect(body.requestedComputeUnitPrice).toBe(Number(priorityFee));
    }
  });

  it("returns the status record bare, the same as Connect JSON", async () => {
    const { wire, signature } = await transferTransaction({ payer, blockhash: await blockhash() });
    const sent = await okJson(await post("/transactions/send", { transaction: base64(wire), confirm: true }));
    expect(sent.signature).toBe(signature);
    const record = await okJson(await get(`/transactions/${signature}/status`));
    expectShape(record, STATUS_RECORD);
    expect(record.error).toBeNull();
    expect(record.fee).toEqual({ lamports: 5000, sol: 0.000005 });
    for (let attempt = 0; ; attempt++) {
      const rest = await okJson(await get(`/transactions/${signature}/status`));
      const connect = (await viaConnect(
        "TransactionService/GetTransactionStatus",
        { signature },
        GetTransactionStatusResponseSchema,
        "record",
      )) as Record<string, unknown>;
      if ((connect.status !== rest.status || connect.updatedAt !== rest.updatedAt) && attempt < 40) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      expect(connect).toEqual(rest);
      break;
    }
  });

  it("sends through Connect JSON and REST to the same handler: the same signature and fee", async () => {
    const { wire, signature } = await transferTransaction({ payer, blockhash: await blockhash() });
    const rest = await okJson(await post("/transactions/send", { transaction: base64(wire) }));
    // The same bytes again, over Connect: the service knows the signature and answers for it.
    const connect = (await viaConnect(
      "TransactionService/SendTransaction",
      { transaction: base64(wire) },
      SendTransactionResponseSchema,
      "result",
    )) as Record<string, unknown>;
    expect(connect.signature).toBe(signature);
    expect(rest.signature).toBe(signature);
    for (const key of ["computeUnitPrice", "lastValidBlockHeight", "fee", "error", "slot"])
      expect(connect[key], key).toEqual(rest[key]);
  });

  it("answers simulation_failed with the logs as an array", async () => {
    const poor = await generateKeyPairSigner();
    await rpc.requestAirdrop(poor.address, 10_000_000n as never).send();
    for (
      let i = 0;
      i < 100 && (await rpc.getBalance(poor.address, { commitment: "confirmed" }).send()).value === 0n;
      i++
    ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const { wire } = await transferTransaction({ payer: poor, lamports: 9_000_000_000n, blockhash: await blockhash() });
    const body = await expectRestError(
      await post("/transactions/send", { transaction: base64(wire) }),
      422,
      "simulation_failed",
    );
    expect(Array.isArray(body.details.logs)).toBe(true);
    expect((body.details.logs as unknown[]).every((l) => typeof l === "string")).toBe(true);
    expect((body.details.logs as string[]).some((l) => l.includes("11111111111111111111111111111111"))).toBe(true);
  });

  it("answers blockhash_expired for a blockhash the chain never had", async () => {
    const { wire } = await transferTransaction({
      payer,
      blockhash: {
        blockhash: (await generateKeyPairSigner()).address as unknown as Blockhash,
        lastValidBlockHeight: 1n,
      },
    });
    await expectRestError(await post("/transactions/send", { transaction: base64(wire) }), 409, "blockhash_expired");
  });

  it("answers invalid_transaction, invalid_parameter and not_found", async () => {
    await expectRestError(await post("/transactions/send", { transaction: "AAAA" }), 400, "invalid_transaction");
    await expectRestError(await post("/transactions/send", {}), 400, "invalid_transaction");
    // The spec: "The body is not a decodable base64 transaction" is invalid_transaction, on every path that takes one.
    for (const path of ["/transactions/send", "/transactions/prepare", "/network/fees/estimate"]) {
      const notBase64 = await expectRestError(
        await post(path, { transaction: "not base64!" }),
        400,
        "invalid_transaction",
      );
      expect(notBase64.details.field).toBe("transaction");
    }
    const { wire, signature } = await transferTransaction({ payer, blockhash: await blockhash() });
    const fee = await expectRestError(
      await post("/transactions/send", { transaction: base64(wire), priorityFee: "extreme" }),
      400,
      "invalid_parameter",
    );
    expect(fee.details.field).toBe("priorityFee");
    await expectRestError(
      await post("/transactions/send", { transaction: base64(wire), priorityFee: -5 }),
      400,
      "invalid_parameter",
    );
    await expectRestError(
      await post("/transactions/send", { transaction: base64(wire), confirm: "yes" }),
      400,
      "invalid_parameter",
    );
    // Never sent: the chain does not know it.
    await expectRestError(await get(`/transactions/${signature}/status`), 404, "not_found");
    await expectRestError(await get("/transactions/not-a-signature/status"), 400, "invalid_parameter");
  });
});

describe("POST /v1/{chain}/transactions/prepare", () => {
  it("returns the prepared draft with 64-bit fields as numbers, like Connect JSON", async () => {
    const { wire } = await transferTransaction({ payer, blockhash: await blockhash() });
    const body = await okJson(
      await post("/transactions/prepare", { transaction: base64(wire), priorityFee: "medium" }),
    );
    expectShape(body, {
      transaction: "string",
      blockhash: "string",
      lastValidBlockHeight: "number",
      computeUnitLimit: "number",
      computeUnitPrice: "number",
      estimate: { nullable: FEE_ESTIMATE },
      expectedFee: { lamports: "number", sol: "number" },
      tip: PREPARED_TIP,
      loadedAccountsDataSizeLimit: "number",
    });
    const connect = (await viaConnect(
      "TransactionService/PrepareTransaction",
      { transaction: base64(wire), priorityFee: { level: "PRIORITY_LEVEL_MEDIUM" } },
      PrepareTransactionResponseSchema,
    )) as Record<string, unknown>;
    expect(connect.computeUnitLimit).toEqual(body.computeUnitLimit);
    expect(body.loadedAccountsDataSizeLimit).toBe(96 * 1024);
    expect(connect.loadedAccountsDataSizeLimit).toEqual(body.loadedAccountsDataSizeLimit);
    // The two calls are made a moment apart, so the market's price may move between them: each answer's fee must
    // be its own price's (5,000 lamports a signature plus price x limit, in micro-lamports, rounded up).
    for (const answer of [body, connect] as Record<string, any>[]) {
      const priority = Math.ceil((Number(answer.computeUnitPrice) * Number(answer.computeUnitLimit)) / 1e6);
      expect(Number(answer.expectedFee.lamports)).toBe(5000 + priority);
    }
  });
});

describe("GET /v1/{chain}/programs/{programId}/accounts", () => {
  it("lists token accounts of a mint with size and repeated match filters, parsed, numbers as numbers", async () => {
    const mint = t.manifest.fungibleMints[0];
    const page = await okJson(await get(`/programs/${TOKEN_PROGRAM}/accounts?size=165&match=0:${mint.mint}&limit=5`));
    expectShape(page, PROGRAM_ACCOUNTS_PAGE);
    expect(page.programId).toBe(TOKEN_PROGRAM);
    const items = page.items as {
      address: string;
      space: number;
      data: {
        format: string;
        program: string | null;
        base64: string | null;
        parsed: { info: { mint: string; owner: string; tokenAmount: { decimals: number } } };
      };
    }[];
    expect(items).toHaveLength(5);
    expect(typeof page.nextCursor).toBe("string");
    for (const item of items) {
      expect(item.space).toBe(165);
      expect(item.data.format).toBe("parsed");
      expect(item.data.program).toBe("spl-token");
      expect(item.data.base64).toBeNull();
      expect(item.data.parsed.info.mint).toBe(mint.mint);
      expect(item.data.parsed.info.tokenAmount.decimals).toBe(mint.decimals);
    }
    const owner = items[0].data.parsed.info.owner;
    const both = await okJson(await get(`/programs/${TOKEN_PROGRAM}/accounts?match=0:${mint.mint}&match=32:${owner}`));
    expectShape(both, PROGRAM_ACCOUNTS_PAGE);
    expect((both.items as { address: string }[]).map((i) => i.address)).toContain(items[0].address);
    expect(both.nextCursor).toBeNull();

    const next = await okJson(
      await get(
        `/programs/${TOKEN_PROGRAM}/accounts?size=165&match=0:${mint.mint}&limit=5&cursor=${encodeURIComponent(page.nextCursor as string)}`,
      ),
    );
    expect((next.items as { address: string }[])[0].address > items[4].address).toBe(true);

    const connect = await viaConnect(
      "ProgramService/ListProgramAccounts",
      { programId: TOKEN_PROGRAM, size: "165", match: [`0:${mint.mint}`], limit: 5 },
      ListProgramAccountsResponseSchema,
    );
    expect(connect).toEqual(page);
  });

  it("gives the upgradeable loader's accounts parsed, as the node parses them", async () => {
    const page = await okJson(await get(`/programs/BPFLoaderUpgradeab1e11111111111111111111111/accounts?limit=2`));
    expectShape(page, PROGRAM_ACCOUNTS_PAGE);
    for (const item of page.items as { data: Record<string, unknown> }[]) {
      expect(item.data).toMatchObject({ format: "parsed", program: "bpf-upgradeable-loader", base64: null });
      expect((item.data.parsed as { type: string }).type).toMatch(/^(program|programData|buffer)$/);
    }
  });

  it("gives raw accounts as base64 with program and parsed null", async () => {
    const page = await okJson(await get(`/programs/BPFLoader2111111111111111111111111111111111/accounts?limit=2`));
    expectShape(page, PROGRAM_ACCOUNTS_PAGE);
    const items = page.items as { data: Record<string, unknown> }[];
    expect(items).toHaveLength(2);
    for (const item of items) {
      expect(item.data).toMatchObject({ format: "base64", program: null, parsed: null });
      expect(Buffer.from(item.data.base64 as string, "base64").length).toBeGreaterThan(0);
    }
  });

  it("answers invalid_parameter for limit=abc, match=5, size=x; invalid_address; not_found", async () => {
    await expectRestError(await get(`/programs/${TOKEN_PROGRAM}/accounts?limit=abc`), 400, "invalid_parameter");
    const match = await expectRestError(
      await get(`/programs/${TOKEN_PROGRAM}/accounts?match=5`),
      400,
      "invalid_parameter",
    );
    expect(match.details.field).toBe("match");
    await expectRestError(
      await get(`/programs/${TOKEN_PROGRAM}/accounts?size=x&match=0:${t.manifest.fungibleMints[0].mint}`),
      400,
      "invalid_parameter",
    );
    await expectRestError(await get(`/programs/not-base58!/accounts`), 400, "invalid_address");
    await expectRestError(await get(`/programs/${UNKNOWN_ADDRESS}/accounts`), 404, "not_found");
  });
});

describe("GET /v1/{chain}/accounts/{address}", () => {
  it("returns a token account decoded as program-account items are, the same as Connect JSON", async () => {
    const held = t.manifest.demoWallet.tokenAccounts[0];
    const account = await okJson(await get(`/accounts/${held}`));
    expectShape(account, ACCOUNT);
    expect(account).toMatchObject({
      address: held,
      owner: TOKEN_PROGRAM,
      executable: false,
      space: 165,
      data: { format: "parsed", program: "spl-token", base64: null },
    });
    expectShape((account.data as { parsed: { info: unknown } }).parsed.info, TOKEN_ACCOUNT_INFO);
    expect(
      await viaConnect("AccountService/GetAccount", { address: held }, GetAccountResponseSchema, "account"),
    ).toEqual(account);
  });

  it("returns a mint's info as the node parses it, 64-bit values as strings", async () => {
    const mint = t.manifest.fungibleMints[0];
    const account = await okJson(await get(`/accounts/${mint.mint}`));
    expect(account.data).toMatchObject({
      format: "parsed",
      program: "spl-token",
      parsed: { type: "mint", info: { decimals: mint.decimals, supply: mint.supply } },
    });
    expect(
      await viaConnect("AccountService/GetAccount", { address: mint.mint }, GetAccountResponseSchema, "account"),
    ).toEqual(account);
  });

  it("answers invalid_address and not_found", async () => {
    await expectRestError(await get("/accounts/not-base58!"), 400, "invalid_address");
    await expectRestError(await get(`/accounts/${UNKNOWN_ADDRESS}`), 404, "not_found");
  });
});

describe("GET /v1/{chain}/wallets/{owner}/tokens and /nfts", () => {
  it("lists the demo wallet's fungible balances, named, the same as Connect JSON", async () => {
    const owner = t.manifest.demoWallet.address;
    const page = await okJson(await get(`/wallets/${owner}/tokens`));
    expectShape(page, WALLET_TOKENS_PAGE);
    const items = page.items as { mint: string; symbol: string; amount: { raw: string } }[];
    expect(items.map((i) => i.mint).sort()).toEqual(t.manifest.fungibleMints.map((m) => m.mint).sort());
    for (const item of items)
      expect(item.symbol).toBe(t.manifest.fungibleMints.find((m) => m.mint === item.mint)!.symbol);
    expect(page.nextCursor).toBeNull();
    expect(await viaConnect("WalletService/ListWalletTokens", { owner }, ListWalletTokensResponseSchema)).toEqual(page);
    const one = await okJson(await get(`/wallets/${owner}/tokens?limit=1`));
    expect(typeof one.nextCursor).toBe("string");
  });

  it("lists the demo wallet's NFTs in the wallet-NFT shape with their collection", async () => {
    const owner = t.manifest.demoWallet.address;
    const page = await okJson(await get(`/wallets/${owner}/nfts?limit=1000`));
    expectShape(page, WALLET_NFTS_PAGE);
    const ids = (page.items as { id: string }[]).map((i) => i.id);
    expect(new Set(ids)).toEqual(new Set([...t.manifest.demoWallet.nfts, ...t.manifest.demoWallet.compressedNfts]));
    expect(
      await viaConnect("WalletService/ListWalletNfts", { owner, limit: 1000 }, ListWalletNftsResponseSchema),
    ).toEqual(page);
  });

  it("answers invalid_address and invalid_parameter", async () => {
    await expectRestError(await get("/wallets/nope/tokens"), 400, "invalid_address");
    await expectRestError(await get("/wallets/nope/nfts"), 400, "invalid_address");
    const limit = await expectRestError(
      await get(`/wallets/${t.manifest.demoWallet.address}/tokens?limit=1001`),
      400,
      "invalid_parameter",
    );
    expect(limit.details.field).toBe("limit");
  });
});

describe("GET /v1/{chain}/tokens/{mint}/holders", () => {
  it("pages through every holder, the same as Connect JSON", async () => {
    const mint = t.manifest.fungibleMints[0];
    const page = await okJson(await get(`/tokens/${mint.mint}/holders?limit=3`));
    expectShape(page, TOKEN_HOLDERS_PAGE);
    expect(page.items).toHaveLength(3);
    expect(
      await viaConnect("TokenService/ListTokenHolders", { mint: mint.mint, limit: 3 }, ListTokenHoldersResponseSchema),
    ).toEqual(page);
    let cursor = page.nextCursor as string | null;
    let seen = 3;
    while (cursor !== null) {
      const next = await okJson(
        await get(`/tokens/${mint.mint}/holders?limit=1000&cursor=${encodeURIComponent(cursor)}`),
      );
      seen += (next.items as unknown[]).length;
      cursor = next.nextCursor as string | null;
    }
    expect(seen).toBe(mint.holders + 1); // the seeded holders and the demo wallet
  });

  it("answers invalid_address, not_found and invalid_parameter", async () => {
    await expectRestError(await get("/tokens/nope/holders"), 400, "invalid_address");
    await expectRestError(await get(`/tokens/${UNKNOWN_ADDRESS}/holders`), 404, "not_found");
    await expectRestError(
      await get(`/tokens/${t.manifest.fungibleMints[0].mint}/holders?limit=0x`),
      400,
      "invalid_parameter",
    );
  });
});

describe("the REST layer itself", () => {
  it("needs the API key like every other protocol", async () => {
    await expectRestError(await get("/network/fees", {}), 401, "unauthenticated");
    await expectRestError(await get("/network/fees", { Authorization: "Bearer wrong" }), 401, "unauthenticated");
  });

  it("answers bad paths with 404 and wrong methods with 405, never 500", async () => {
    await expectRestError(await get("/network"), 404, "not_found");
    await expectRestError(await get("/network/fees/"), 404, "not_found");
    await expectRestError(await fetch(`${t.url}/v1`, { headers: t.auth }), 404, "not_found");
    const wrong = await fetch(`${t.base}/network/fees`, { method: "POST", headers: t.auth, body: "{}" });
    expect(wrong.headers.get("allow")).toBe("GET");
    await expectRestError(wrong, 405, "method_not_allowed");
    await expectRestError(await fetch(`${t.base}/transactions/send`, { headers: t.auth }), 405, "method_not_allowed");
    await expectRestError(await get("/collections/%E0%A4%A/nfts"), 400, "invalid_parameter");
  });

  it("runs the RPC through the server's interceptors: one rpc log line with the caller's request id", async () => {
    const requestId = `rest-${Date.now()}`;
    const res = await get("/network/fees", { ...t.auth, "x-request-id": requestId });
    expect(res.headers.get("x-request-id")).toBe(requestId);
    await okJson(res);
    const line = t.logs.find((l) => l.msg === "rpc" && l.requestId === requestId);
    expect(line).toMatchObject({ procedure: "solgate.v1.FeeService/GetFees", protocol: "rest", code: "ok" });
  });

  it("serves the OpenAPI document without a key", async () => {
    const doc = await okJson(await fetch(`${t.url}/openapi.json`));
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths as object)).toContain("/v1/{chain}/network/fees");
  });
});

describe("GET /v1/{chain}/transactions/{signature}/events (SSE)", () => {
  it("streams the same transitions as WatchStatus until the transaction is final", async () => {
    const { wire, signature } = await transferTransaction({ payer, blockhash: await blockhash() });
    const sent = await okJson(await post("/transactions/send", { transaction: base64(wire), confirm: false }));
    // The spec: "With `confirm` false the result contains only `signature` and `status`."
    expect(sent).toEqual({ signature, status: "submitted" });
    const res = await get(`/transactions/${signature}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await res.text(); // ends when the stream ends
    const events = text
      .split("\n\n")
      .filter((block) => block.startsWith("event: status\n"))
      .map((block) => JSON.parse(block.split("\n")[1].slice("data: ".length)) as Record<string, unknown>);
    expect(events.length).toBeGreaterThanOrEqual(1);
    for (const event of events) {
      expectShape(event, STATUS_RECORD);
      expect(event.signature).toBe(signature);
    }
    expect(events[events.length - 1].status).toBe("finalized");
    expect(text.includes("event: error")).toBe(false);
  });

  it("answers a plain JSON error before the stream starts", async () => {
    const { signature } = await transferTransaction({ payer, blockhash: await blockhash() });
    await expectRestError(await get(`/transactions/${signature}/events`), 404, "not_found");
    await expectRestError(await get(`/transactions/${signature}/events`, {}), 401, "unauthenticated");
  });

  it("ends the WatchStatus call when the client goes away", async () => {
    const { wire, signature } = await transferTransaction({
      payer,
      blockhash: await blockhash(),
    });
    await okJson(await post("/transactions/send", { transaction: base64(wire), confirm: true }));
    const requestId = `sse-${Date.now()}`;
    const abort = new AbortController();
    const res = await fetch(`${t.base}/transactions/${signature}/events`, {
      headers: { ...t.auth, "x-request-id": requestId },
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    await reader.read(); // the first event
    abort.abort();
    const deadline = Date.now() + 5000;
    let line: Record<string, unknown> | undefined;
    while (Date.now() < deadline && line === undefined) {
      line = t.logs.find((l) => l.msg === "rpc" && l.requestId === requestId);
      await new Promise((r) => setTimeout(r, 20));
    }
    // The stream either finished on its own first (finalized quickly) or was cancelled: both mean it ended.
    expect(line).toMatchObject({ procedure: "solgate.v1.TransactionService/WatchStatus" });
    expect(["canceled", "ok"]).toContain(line!.code);
  });
});
