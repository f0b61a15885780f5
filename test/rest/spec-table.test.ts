/**
 * The REST spec (../shared/spec, sections 2 and 8), written out as a table: one row per field of
 * each resource, with the type and rule the spec gives, checked against what the real gateway
 * answers on its embedded localnet. Rows the localnet cannot show (a floor price needs a
 * marketplace) name the test that covers them instead. Errors per endpoint are in rest-localnet.test.ts.
 */
import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyPairSignerFromBytes, createSolanaRpc, devnet } from "@solana/kit";
import { transferTransaction } from "../transactions/chain-fixture.ts";
import { startRestGateway } from "./rest-gateway.ts";
import type { RestGateway } from "./rest-gateway.ts";

/** A JSON type as the spec writes it. */
type SpecType =
  | "string"
  | "number"
  | "integer"
  | "boolean"
  | "object"
  | "array"
  | "timestamp"
  | "object or null"
  | "string or null";

interface Row {
  /** The spec's resource (section 2) or endpoint (section 4). */
  resource: string;
  /** The field, dotted from the resource's root. */
  field: string;
  type: SpecType;
  /** A further rule the spec states for the value. */
  rule?: (value: unknown, resource: Record<string, unknown>) => void;
  /** Where a field the localnet cannot show is checked instead. */
  elsewhere?: string;
}

const STATES = ["submitted", "confirmed", "finalized", "failed", "expired"];
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const base58 = (v: unknown) => expect(v).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,88}$/);
const url = (v: unknown) => expect(() => new URL(v as string)).not.toThrow();
const solOf = (v: unknown, r: Record<string, unknown>) => expect(v).toBeCloseTo(Number(r.lamports) / 1e9, 12);

const SPEC: Row[] = [
  // Collection
  { resource: "Collection", field: "address", type: "string", rule: base58 },
  { resource: "Collection", field: "name", type: "string" },
  { resource: "Collection", field: "symbol", type: "string" },
  { resource: "Collection", field: "description", type: "string" },
  // Empty when the collection's metadata JSON cannot be had (docs/calls.md); the test world's collection NFT points at a host that does not exist.
  { resource: "Collection", field: "image", type: "string", rule: (v) => (v === "" ? undefined : url(v)) },
  { resource: "Collection", field: "itemCount", type: "number", rule: (v) => expect(Number.isInteger(v)).toBe(true) },
  { resource: "Collection", field: "floorPrice", type: "object or null" },
  // FloorPrice object
  {
    resource: "FloorPrice",
    field: "lamports",
    type: "integer",
    elsewhere: "test/collections/market/floor-prices.test.ts",
  },
  { resource: "FloorPrice", field: "sol", type: "number", elsewhere: "test/collections/market/floor-prices.test.ts" },
  {
    resource: "FloorPrice",
    field: "updatedAt",
    type: "timestamp",
    elsewhere: "test/collections/market/floor-prices.test.ts",
  },
  // NFT item
  { resource: "NFT item", field: "id", type: "string", rule: base58 },
  { resource: "NFT item", field: "name", type: "string" },
  { resource: "NFT item", field: "image", type: "string", rule: url },
  { resource: "NFT item", field: "standard", type: "string" },
  { resource: "NFT item", field: "compressed", type: "boolean" },
  { resource: "NFT item", field: "owner", type: "string", rule: base58 },
  // Collection NFT page
  { resource: "Collection NFT page", field: "address", type: "string", rule: base58 },
  {
    resource: "Collection NFT page",
    field: "items",
    type: "array",
    rule: (v) => expect((v as unknown[]).length).toBeLessThanOrEqual(100),
  },
  { resource: "Collection NFT page", field: "nextCursor", type: "string" },
  {
    resource: "Collection NFT last page",
    field: "nextCursor",
    type: "string or null",
    rule: (v) => expect(v).toBeNull(),
  },
  // Fee estimate
  {
    resource: "Fee estimate",
    field: "baseFee.lamportsPerSignature",
    type: "number",
    rule: (v) => expect(v).toBe(5000),
  },
  {
    resource: "Fee estimate",
    field: "priority.unit",
    type: "string",
    rule: (v) => expect(v).toBe("microLamportsPerComputeUnit"),
  },
  { resource: "Fee estimate", field: "priority.recommended", type: "number" },
  {
    resource: "Fee estimate",
    field: "priority.levels",
    type: "object",
    rule: (v) => expect(Object.keys(v as object).sort()).toEqual(["high", "low", "medium", "veryHigh"]),
  },
  { resource: "Fee estimate", field: "priority.levels.low", type: "number" },
  { resource: "Fee estimate", field: "priority.levels.medium", type: "number" },
  { resource: "Fee estimate", field: "priority.levels.high", type: "number" },
  { resource: "Fee estimate", field: "priority.levels.veryHigh", type: "number" },
  { resource: "Fee estimate", field: "updatedAt", type: "timestamp" },
  // 4.4: the same priority shape for a draft transaction
  {
    resource: "Fee estimate of a draft",
    field: "priority.unit",
    type: "string",
    rule: (v) => expect(v).toBe("microLamportsPerComputeUnit"),
  },
  { resource: "Fee estimate of a draft", field: "priority.recommended", type: "number" },
  {
    resource: "Fee estimate of a draft",
    field: "priority.levels",
    type: "object",
    rule: (v) => expect(Object.keys(v as object).sort()).toEqual(["high", "low", "medium", "veryHigh"]),
  },
  // Send result, confirm true
  { resource: "Send result", field: "signature", type: "string", rule: base58 },
  { resource: "Send result", field: "status", type: "string", rule: (v) => expect(v).toBe("confirmed") },
  { resource: "Send result", field: "slot", type: "number" },
  { resource: "Send result", field: "fee", type: "object" },
  { resource: "Send result", field: "fee.lamports", type: "number", rule: (v) => expect(v).toBe(5000) },
  { resource: "Send result", field: "fee.sol", type: "number", rule: (v) => expect(v).toBe(0.000005) },
  // Send result, confirm false: only signature and status
  {
    resource: "Send result, confirm false",
    field: "signature",
    type: "string",
    rule: (_v, r) => expect(Object.keys(r).sort()).toEqual(["signature", "status"]),
  },
  { resource: "Send result, confirm false", field: "status", type: "string", rule: (v) => expect(v).toBe("submitted") },
  // Transaction status record
  { resource: "Transaction status record", field: "signature", type: "string", rule: base58 },
  { resource: "Transaction status record", field: "status", type: "string", rule: (v) => expect(STATES).toContain(v) },
  { resource: "Transaction status record", field: "slot", type: "number" },
  { resource: "Transaction status record", field: "error", type: "object or null", rule: (v) => expect(v).toBeNull() },
  // Program account item (a token account)
  { resource: "Program account item", field: "address", type: "string", rule: base58 },
  { resource: "Program account item", field: "lamports", type: "number" },
  { resource: "Program account item", field: "sol", type: "number", rule: solOf },
  { resource: "Program account item", field: "space", type: "number", rule: (v) => expect(v).toBe(165) },
  { resource: "Program account item", field: "data", type: "object" },
  { resource: "Program account item", field: "data.format", type: "string", rule: (v) => expect(v).toBe("parsed") },
  { resource: "Program account item", field: "data.program", type: "string" },
  { resource: "Program account item", field: "data.parsed", type: "object" },
  { resource: "Program account item", field: "data.parsed.type", type: "string" },
  { resource: "Program account item", field: "data.parsed.info", type: "object" },
  { resource: "Program account item", field: "data.parsed.info.mint", type: "string", rule: base58 },
  { resource: "Program account item", field: "data.parsed.info.owner", type: "string", rule: base58 },
  { resource: "Program account item", field: "data.parsed.info.tokenAmount", type: "object" },
  { resource: "Program account item", field: "data.parsed.info.state", type: "string" },
  {
    resource: "Program account item",
    field: "data.parsed.info.tokenAmount.raw",
    type: "string",
    rule: (v) => expect(v).toMatch(/^\d+$/),
  },
  { resource: "Program account item", field: "data.parsed.info.tokenAmount.decimals", type: "number" },
  { resource: "Program account item", field: "data.parsed.info.tokenAmount.ui", type: "number" },
  { resource: "Program account item", field: "data.parsed.info.tokenAmount.uiString", type: "string" },
  // Program account page
  { resource: "Program account page", field: "programId", type: "string", rule: base58 },
  {
    resource: "Program account page",
    field: "items",
    type: "array",
    rule: (v) => expect((v as unknown[]).length).toBeLessThanOrEqual(100),
  },
  { resource: "Program account page", field: "nextCursor", type: "string or null" },
];

let t: RestGateway;
const samples = new Map<string, Record<string, unknown>>();

async function getJson(path: string, init?: RequestInit): Promise<Record<string, unknown>> {
  const res = await fetch(`${t.base}${path}`, {
    ...init,
    headers: { ...t.auth, "content-type": "application/json", ...init?.headers },
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as Record<string, unknown>;
}
const post = (path: string, body: unknown) => getJson(path, { method: "POST", body: JSON.stringify(body) });

beforeAll(async () => {
  t = await startRestGateway();
  const collection = t.manifest.collections.find((c) => c.seeded)!.mint;
  const mint = t.manifest.fungibleMints[0].mint;
  const rpc = createSolanaRpc(devnet(t.gateway.localnetUrl!));
  const payer = await createKeyPairSignerFromBytes(t.demoWalletSecret);
  const blockhash = async () => (await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value;

  // Fee levels exist once the window holds priced transactions (the localnet's traffic starts with it).
  const started = Date.now();
  while ((await getJson("/network/fees")).priority === null && Date.now() - started < 60_000)
    await new Promise((r) => setTimeout(r, 100));
  samples.set("Collection", await getJson(`/collections/${collection}`));
  const page = await getJson(`/collections/${collection}/nfts?limit=2`);
  samples.set("Collection NFT page", page);
  samples.set("NFT item", (page.items as Record<string, unknown>[])[0]);
  samples.set("Collection NFT last page", await getJson(`/collections/${collection}/nfts?limit=1000`));
  samples.set("Fee estimate", await getJson("/network/fees"));
  const draft = await transferTransaction({ payer, blockhash: await blockhash() });
  samples.set(
    "Fee estimate of a draft",
    await post("/network/fees/estimate", { transaction: Buffer.from(draft.wire).toString("base64") }),
  );
  const confirmed = await transferTransaction({ payer, blockhash: await blockhash() });
  samples.set(
    "Send result",
    await post("/transactions/send", { transaction: Buffer.from(confirmed.wire).toString("base64") }),
  );
  samples.set("Transaction status record", await getJson(`/transactions/${confirmed.signature}/status`));
  const submitted = await transferTransaction({ payer, blockhash: await blockhash() });
  samples.set(
    "Send result, confirm false",
    await post("/transactions/send", { transaction: Buffer.from(submitted.wire).toString("base64"), confirm: false }),
  );
  const accounts = await getJson(
    `/programs/TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA/accounts?size=165&match=0:${mint}`,
  );
  samples.set("Program account page", accounts);
  samples.set("Program account item", (accounts.items as Record<string, unknown>[])[0]);
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

function at(resource: Record<string, unknown>, field: string): unknown {
  let value: unknown = resource;
  for (const key of field.split(".")) {
    expect(value, `${field}: no object at ${key}`).toBeTypeOf("object");
    expect(Object.hasOwn(value as object, key), `${field} is missing`).toBe(true);
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function expectType(value: unknown, type: SpecType): void {
  switch (type) {
    case "array":
      expect(Array.isArray(value)).toBe(true);
      return;
    case "object":
      expect(value !== null && typeof value === "object" && !Array.isArray(value)).toBe(true);
      return;
    case "object or null":
      if (value !== null) expectType(value, "object");
      return;
    case "string or null":
      if (value !== null) expect(value).toBeTypeOf("string");
      return;
    case "integer":
      expect(Number.isInteger(value)).toBe(true);
      return;
    case "timestamp":
      expect(value).toMatch(ISO_UTC);
      return;
    default:
      expect(value).toBeTypeOf(type);
  }
}

describe("the spec's resources, field by field", () => {
  const checked = SPEC.filter((row) => row.elsewhere === undefined);
  it.each(checked.map((row) => [`${row.resource}: ${row.field} (${row.type})`, row] as const))("%s", (_name, row) => {
    const resource = samples.get(row.resource);
    expect(resource, `no sample of ${row.resource}`).toBeDefined();
    const value = at(resource!, row.field);
    expectType(value, row.type);
    row.rule?.(value, resource!);
  });

  it("names where each field the localnet cannot show is checked, a test file that reads that field", () => {
    const rows = SPEC.filter((r) => r.elsewhere !== undefined);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.elsewhere).toMatch(/^test\/.+\.test\.ts$/);
      const file = new URL(`../../${row.elsewhere}`, import.meta.url);
      expect(existsSync(file), `${row.elsewhere} does not exist`).toBe(true);
      // The field's last name, read (`.updatedAt`) or matched (`updatedAt:`) in an assertion of that file.
      const leaf = row.field.split(".").at(-1)!;
      const read = new RegExp(`expect\\(.*(\\.${leaf}\\b|\\b${leaf}\\s*:)`);
      const lines = readFileSync(file, "utf8").split("\n");
      expect(
        lines.some((line) => read.test(line)),
        `${row.elsewhere} checks no ${row.resource} ${row.field}`,
      ).toBe(true);
    }
  });
});

describe("the spec's limits (section 8)", () => {
  it("collection listing: limit 1-1000, default 100", async () => {
    const collection = t.manifest.collections.find((c) => c.seeded)!.mint;
    for (const limit of [0, 1001]) {
      const res = await fetch(`${t.base}/collections/${collection}/nfts?limit=${limit}`, { headers: t.auth });
      expect(res.status).toBe(400);
    }
    expect(((await getJson(`/collections/${collection}/nfts?limit=1000`)).items as unknown[]).length).toBeGreaterThan(
      0,
    );
  });

  it("program accounts: limit 1-500, default 100", async () => {
    const mint = t.manifest.fungibleMints[0].mint;
    const path = `/programs/TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA/accounts?match=0:${mint}`;
    expect((await fetch(`${t.base}${path}&limit=501`, { headers: t.auth })).status).toBe(400);
    expect(((await getJson(`${path}&limit=500`)).items as unknown[]).length).toBeGreaterThan(0);
  });
});
