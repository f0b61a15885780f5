/** The REST JSON form: rendering and reading, field kind by field kind, on the contract's own messages. */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { CollectionSchema, NftSchema, TokenStandard } from "../../gen/solgate/v1/collection_pb.js";
import { FeeSource, PriorityFeeSchema, PriorityLevel } from "../../gen/solgate/v1/fee_pb.js";
import { SendTransactionRequestSchema } from "../../gen/solgate/v1/transaction_service_pb.js";
import { TransactionStatus, TransactionStatusRecordSchema } from "../../gen/solgate/v1/transaction_pb.js";
import { FeeEstimateSchema } from "../../gen/solgate/v1/fee_pb.js";
import { parseMessage, renderMessage } from "../../src/rest/rest-json.ts";
import { isSolgateError } from "../../src/errors.ts";

const render = (schema: Parameters<typeof renderMessage>[0], message: unknown) =>
  JSON.parse(JSON.stringify(renderMessage(schema, message as Record<string, unknown>))) as Record<string, unknown>;

describe("renderMessage", () => {
  it("writes u64 as numbers, exactly beyond 2^53, and absent messages as null", () => {
    const collection = create(CollectionSchema, { address: "a", itemCount: 2n ** 64n - 1n });
    const text = JSON.stringify(renderMessage(CollectionSchema, collection as never));
    expect(text).toBe(
      '{"address":"a","name":"","symbol":"","description":"","image":"","itemCount":18446744073709551615,"floorPrice":null}',
    );
    expect(render(CollectionSchema, create(CollectionSchema, { itemCount: 42n })).itemCount).toBe(42);
  });

  it("writes enums as lowercase words with hyphens, timestamps as ISO 8601 UTC, optionals as null", () => {
    expect(render(NftSchema, create(NftSchema, { standard: TokenStandard.PROGRAMMABLE_NON_FUNGIBLE })).standard).toBe(
      "programmable-non-fungible",
    );
    const record = render(
      TransactionStatusRecordSchema,
      create(TransactionStatusRecordSchema, {
        signature: "s",
        status: TransactionStatus.CONFIRMED,
        slot: 7n,
        updatedAt: timestampFromMs(Date.UTC(2026, 0, 2, 3, 4, 5, 678)),
      }),
    );
    expect(record).toEqual({
      signature: "s",
      status: "confirmed",
      slot: 7,
      error: null,
      fee: null,
      lastValidBlockHeight: null,
      updatedAt: "2026-01-02T03:04:05.678Z",
      waiting: null,
    });
    const fees = render(FeeEstimateSchema, create(FeeEstimateSchema, { source: FeeSource.RECENT_PRIORITIZATION_FEES }));
    expect(fees.source).toBe("recent-prioritization-fees");
    expect(fees.priority).toBeNull();
    expect(fees.writableAccounts).toEqual([]);
  });
});

describe("priority.odds and a waiting send over REST", () => {
  it("renders the odds beside the levels, the seed's fields unchanged, and null while there are none", () => {
    const priority = {
      low: 1n,
      medium: 2n,
      high: 3n,
      veryHigh: 4n,
      recommended: 3n,
      unit: "microLamportsPerComputeUnit",
    };
    const odds = { withinSlots: 4, low: 0.31, medium: 0.74, high: 0.93, veryHigh: 0.99, recommended: 0.91 };
    const fees = render(
      FeeEstimateSchema,
      create(FeeEstimateSchema, { source: FeeSource.BLOCKS, priority: { ...priority, odds } }),
    );
    expect(fees.priority).toEqual({
      levels: { low: 1, medium: 2, high: 3, veryHigh: 4 },
      recommended: 3,
      unit: "microLamportsPerComputeUnit",
      odds: { withinSlots: 4, low: 0.31, medium: 0.74, high: 0.93, veryHigh: 0.99, recommended: 0.91 },
    });
    const none = render(FeeEstimateSchema, create(FeeEstimateSchema, { source: FeeSource.BLOCKS, priority }));
    expect((none.priority as { odds: unknown }).odds).toBeNull();
  });

  it("renders a waiting send's odds and landing price", () => {
    const record = render(
      TransactionStatusRecordSchema,
      create(TransactionStatusRecordSchema, {
        signature: "s",
        status: TransactionStatus.SUBMITTED,
        waiting: { odds: 0.12, withinSlots: 4, landingComputeUnitPrice: 52_000n, computeUnitPrice: 10n },
      }),
    );
    expect(record.waiting).toEqual({
      odds: 0.12,
      withinSlots: 4,
      landingComputeUnitPrice: 52_000,
      computeUnitPrice: 10,
    });
  });
});

describe("parseMessage", () => {
  const parse = (json: unknown) =>
    create(SendTransactionRequestSchema, parseMessage(SendTransactionRequestSchema, json, "") as never);
  const fails = (json: unknown, field: string) => {
    let caught: unknown;
    try {
      parse(json);
    } catch (e) {
      caught = e;
    }
    // A `transaction` that is not base64 is the spec's invalid_transaction; any other bad field is invalid_parameter.
    const reason = field === "transaction" ? "INVALID_TRANSACTION" : "INVALID_PARAMETER";
    expect(isSolgateError(caught) && caught.reason === reason, `${inspect(json)}: ${String(caught)}`).toBe(true);
    expect((caught as { details: { field: string } }).details.field).toBe(field);
  };

  it("reads base64 bytes, booleans, and the priorityFee shorthands", () => {
    const req = parse({ transaction: "AQID", confirm: false, priorityFee: "high", skip_preflight: true });
    expect([...req.transaction]).toEqual([1, 2, 3]);
    expect(req.confirm).toBe(false);
    expect(req.skipPreflight).toBe(true);
    expect(req.priorityFee?.choice).toEqual({ case: "level", value: PriorityLevel.HIGH });
    expect(parse({ priorityFee: 1500 }).priorityFee?.choice).toEqual({ case: "microLamports", value: 1500n });
    expect(parse({ priorityFee: "18446744073709551615" }).priorityFee?.choice).toEqual({
      case: "microLamports",
      value: 2n ** 64n - 1n,
    });
    expect(parse({ priorityFee: 2n ** 60n }).priorityFee?.choice).toEqual({ case: "microLamports", value: 2n ** 60n });
    expect(parse({ priorityFee: null, confirm: null }).priorityFee).toBeUndefined();
  });

  it("names the field that does not fit", () => {
    fails({ transaction: 5 }, "transaction");
    fails({ transaction: "a" }, "transaction");
    fails({ confirm: "yes" }, "confirm");
    fails({ priorityFee: "fast" }, "priorityFee");
    fails({ priorityFee: 1.5 }, "priorityFee");
    fails({ priorityFee: -1 }, "priorityFee");
    fails({ unknown: 1 }, "unknown");
    fails([], "body");
  });

  it("names the field when a value holds integers beyond 2^53 (read exactly, as bigints)", () => {
    fails({ confirm: [2n ** 64n] }, "confirm");
    fails({ confirm: { a: [2n ** 64n] } }, "confirm");
    fails({ transaction: [2n ** 70n, 1] }, "transaction");
    fails({ priorityFee: { big: 2n ** 64n } }, "priorityFee");
  });

  it("renders a PriorityFee back in its shorthand", () => {
    expect(
      renderMessage(
        PriorityFeeSchema,
        create(PriorityFeeSchema, { choice: { case: "level", value: PriorityLevel.LOW } }) as never,
      ),
    ).toBe("low");
    expect(
      renderMessage(
        PriorityFeeSchema,
        create(PriorityFeeSchema, { choice: { case: "microLamports", value: 9n } }) as never,
      ),
    ).toBe(9);
  });
});
