/**
 * The seed's JSON shapes, field by field, and a checker that fails on a missing field, an extra
 * field, or a value of the wrong JSON type (a 64-bit value as a string, an absent field instead of
 * null). Shapes follow the contract through the REST rules; a new field makes these tests fail
 * until it is added here, on purpose.
 */
import { expect } from "vitest";

/** A shape: a JSON type name, an object of field shapes, `[item]` for arrays, or a nullable/choice wrapper. */
export type Shape =
  | "string"
  | "number"
  | "boolean"
  | "any"
  | { readonly nullable: Shape }
  | { readonly oneOf: readonly string[] }
  | readonly [Shape]
  | { readonly [field: string]: Shape };

export const nullable = (shape: Shape): Shape => ({ nullable: shape });
export const oneOf = (...words: string[]): Shape => ({ oneOf: words });

/** Checks `value` against `shape`; `path` names it in failure messages. */
export function expectShape(value: unknown, shape: Shape, path = "$"): void {
  if (typeof shape === "string") {
    if (shape === "any") return;
    expect(typeof value, `${path} should be a ${shape}: ${JSON.stringify(value)}`).toBe(shape);
    if (shape === "number") expect(Number.isFinite(value), `${path} is a finite number`).toBe(true);
    return;
  }
  if (Array.isArray(shape)) {
    expect(Array.isArray(value), `${path} should be an array`).toBe(true);
    (value as unknown[]).forEach((item, i) => expectShape(item, shape[0] as Shape, `${path}[${i}]`));
    return;
  }
  if ("nullable" in shape && Object.keys(shape).length === 1) {
    if (value !== null) expectShape(value, shape.nullable as Shape, path);
    return;
  }
  if ("oneOf" in shape && Object.keys(shape).length === 1) {
    expect(shape.oneOf as string[], `${path} should be one of ${String(shape.oneOf)}`).toContain(value);
    return;
  }
  expect(
    typeof value === "object" && value !== null && !Array.isArray(value),
    `${path} should be an object: ${JSON.stringify(value)}`,
  ).toBe(true);
  const fields = shape as Record<string, Shape>;
  expect(Object.keys(value as object).sort(), `${path} fields`).toEqual(Object.keys(fields).sort());
  for (const [name, fieldShape] of Object.entries(fields))
    expectShape((value as Record<string, unknown>)[name], fieldShape, `${path}.${name}`);
}

const ISO = "string";

export const FLOOR_PRICE: Shape = { lamports: "number", sol: "number", updatedAt: ISO, source: "string" };
export const COLLECTION: Shape = {
  address: "string",
  name: "string",
  symbol: "string",
  description: "string",
  image: "string",
  itemCount: "number",
  floorPrice: nullable(FLOOR_PRICE),
};
export const TOKEN_STANDARDS = [
  "unspecified",
  "non-fungible",
  "programmable-non-fungible",
  "edition",
  "fungible-asset",
  "fungible",
  "core",
];
export const NFT: Shape = {
  id: "string",
  name: "string",
  image: "string",
  standard: oneOf(...TOKEN_STANDARDS),
  compressed: "boolean",
  owner: "string",
};
export const NFT_PAGE: Shape = { address: "string", items: [NFT], nextCursor: nullable("string") };

export const FEE_ESTIMATE: Shape = {
  priority: nullable({
    levels: { low: "number", medium: "number", high: "number", veryHigh: "number" },
    recommended: "number",
    unit: "string",
    odds: nullable({
      withinSlots: "number",
      low: "number",
      medium: "number",
      high: "number",
      veryHigh: "number",
      recommended: "number",
    }),
  }),
  baseFee: { lamportsPerSignature: "number", signatures: "number", lamports: "number" },
  updatedAt: nullable(ISO),
  source: oneOf("blocks", "recent-prioritization-fees", "none"),
  slot: "number",
  windowSlots: "number",
  sampleSize: "number",
  writableAccounts: ["string"],
  // EstimateFees' odds answers (null unless the request asked an odds question).
  oddsAnswer: nullable({
    withinSlots: "number",
    priceOdds: nullable("number"),
    cheapestPrice: nullable("number"),
    cheapestPriceOdds: nullable("number"),
    curve: [{ price: "number", odds: "number" }],
  }),
  tips: nullable({
    p25: "number",
    p50: "number",
    p75: "number",
    p95: "number",
    p99: "number",
    source: oneOf("block-engine", "blocks"),
    sampleSize: "number",
    updatedAt: nullable(ISO),
  }),
};

/** PrepareTransaction's `tip`: what it added (null when no tip was asked for). */
export const PREPARED_TIP: Shape = nullable({
  account: "string",
  lamports: "number",
  level: oneOf("unspecified", "p25", "p50", "p75", "p95", "p99"),
  levelLamports: "number",
  clamped: "boolean",
  raisedToMinimum: "boolean",
});

export const STATUSES = ["submitted", "confirmed", "finalized", "failed", "expired"];
export const LAMPORTS: Shape = { lamports: "number", sol: "number" };
export const TRANSACTION_ERROR: Shape = {
  code: "string",
  message: "string",
  instructionIndex: nullable("number"),
  customCode: nullable("number"),
  raw: "any",
};
export const SEND_RESULT: Shape = {
  signature: "string",
  status: oneOf(...STATUSES),
  slot: nullable("number"),
  fee: nullable(LAMPORTS),
  error: nullable(TRANSACTION_ERROR),
  computeUnitPrice: "number",
  requestedComputeUnitPrice: nullable("number"),
  lastValidBlockHeight: "number",
};
export const STATUS_RECORD: Shape = {
  signature: "string",
  status: oneOf(...STATUSES),
  slot: nullable("number"),
  error: nullable(TRANSACTION_ERROR),
  fee: nullable(LAMPORTS),
  lastValidBlockHeight: nullable("number"),
  updatedAt: nullable(ISO),
  waiting: nullable({
    odds: "number",
    withinSlots: "number",
    landingComputeUnitPrice: "number",
    computeUnitPrice: "number",
  }),
};

export const TOKEN_AMOUNT: Shape = { raw: "string", decimals: "number", ui: "number", uiString: "string" };
export const ACCOUNT_DATA: Shape = {
  format: oneOf("parsed", "base64"),
  program: nullable("string"),
  parsed: nullable({ type: "string", info: "any" }),
  base64: nullable("string"),
};
export const PROGRAM_ACCOUNT: Shape = {
  address: "string",
  lamports: "number",
  sol: "number",
  space: "number",
  data: nullable(ACCOUNT_DATA),
};
export const TOKEN_ACCOUNT_INFO: Shape = {
  mint: "string",
  owner: "string",
  tokenAmount: TOKEN_AMOUNT,
  state: "string",
};
export const ACCOUNT: Shape = {
  address: "string",
  lamports: "number",
  sol: "number",
  space: "number",
  owner: "string",
  executable: "boolean",
  data: ACCOUNT_DATA,
};
export const WALLET_TOKEN: Shape = {
  tokenAccount: "string",
  mint: "string",
  program: oneOf("spl-token", "spl-token-2022"),
  amount: TOKEN_AMOUNT,
  state: "string",
  name: nullable("string"),
  symbol: nullable("string"),
};
export const WALLET_TOKENS_PAGE: Shape = { owner: "string", items: [WALLET_TOKEN], nextCursor: nullable("string") };
export const WALLET_NFT: Shape = {
  id: "string",
  name: "string",
  image: "string",
  standard: oneOf(...TOKEN_STANDARDS),
  compressed: "boolean",
  collection: nullable("string"),
};
export const WALLET_NFTS_PAGE: Shape = { owner: "string", items: [WALLET_NFT], nextCursor: nullable("string") };
export const TOKEN_HOLDER: Shape = { tokenAccount: "string", owner: "string", amount: TOKEN_AMOUNT };
export const TOKEN_HOLDERS_PAGE: Shape = {
  mint: "string",
  program: oneOf("spl-token", "spl-token-2022"),
  items: [TOKEN_HOLDER],
  nextCursor: nullable("string"),
};
export const PROGRAM_ACCOUNTS_PAGE: Shape = {
  programId: "string",
  items: [PROGRAM_ACCOUNT],
  nextCursor: nullable("string"),
};

export const ERROR_BODY: Shape = { code: "string", message: "string", details: "any" };

/** Checks a REST error response: status, seed code, and the `{code, message, details}` shape. */
export async function expectRestError(
  res: Response,
  status: number,
  code: string,
): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  const text = await res.text();
  expect(res.status, `status of ${text}`).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const body = JSON.parse(text) as { code: string; message: string; details: Record<string, unknown> };
  expectShape(body, ERROR_BODY);
  expect(body.code, body.message).toBe(code);
  expect(body.message.length).toBeGreaterThan(0);
  expect(typeof body.details === "object" && body.details !== null && !Array.isArray(body.details)).toBe(true);
  return body;
}
