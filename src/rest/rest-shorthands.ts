/**
 * Message types whose REST form is a shorthand rather than an object, keyed by type name. The
 * seed writes `priorityFee` as `"auto"`, `"low"`, `"medium"`, `"high"` or a number of
 * micro-lamports; the contract models it as `PriorityFee { oneof choice { PriorityLevel level;
 * uint64 micro_lamports } }`. The OpenAPI post-processing (openapi-document.ts) describes the same forms.
 */
import type { DescMessage } from "@bufbuild/protobuf";
import { PriorityFeeSchema, PriorityLevel } from "../../gen/solgate/v1/fee_pb.js";
import { SolgateError } from "../errors.ts";
import { PRIORITY_LEVELS } from "../fees/fee-estimate.ts";
import type { PriorityLevelName } from "../fees/fee-estimate.ts";

/** How one message type reads and renders on the REST surface. */
export interface RestShorthand {
  readonly desc: DescMessage;
  /** Reads the REST form into the message's init shape; throws INVALID_PARAMETER naming `path`. */
  parse(json: unknown, path: string): Record<string, unknown>;
  /** Renders a message of this type. */
  render(message: Record<string, unknown>): unknown;
  /** The JSON Schema of the REST form, for the OpenAPI document. */
  readonly schema: Record<string, unknown>;
}

const LEVELS: Record<string, PriorityLevel> = Object.fromEntries(
  PRIORITY_LEVELS.map((name) => [name, PriorityLevel[name.toUpperCase() as Uppercase<PriorityLevelName>]]),
);
const LEVEL_WORDS = new Map(Object.entries(LEVELS).map(([word, level]) => [level, word]));
const U64_MAX = 2n ** 64n - 1n;

const priorityFee: RestShorthand = {
  desc: PriorityFeeSchema,
  parse(json, path) {
    if (typeof json === "string" && Object.hasOwn(LEVELS, json.toLowerCase())) {
      return { choice: { case: "level", value: LEVELS[json.toLowerCase()] } };
    }
    let micro: bigint | undefined;
    if (typeof json === "bigint") micro = json;
    else if (typeof json === "number" && Number.isSafeInteger(json)) micro = BigInt(json);
    else if (typeof json === "string" && /^\d+$/.test(json)) micro = BigInt(json);
    if (micro !== undefined && micro >= 0n && micro <= U64_MAX) return { choice: { case: "microLamports", value: micro } };
    throw new SolgateError(
      "INVALID_PARAMETER",
      `${path} must be ${PRIORITY_LEVELS.map((name) => `"${name}"`).join(", ")} or a whole number of micro-lamports per compute unit`,
      { field: path },
    );
  },
  render(message) {
    const choice = message.choice as { case?: string; value?: unknown };
    if (choice.case === "level") return LEVEL_WORDS.get(choice.value as PriorityLevel) ?? "auto";
    if (choice.case === "microLamports") {
      const n = choice.value as bigint;
      return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString();
    }
    return null;
  },
  schema: {
    description: 'A named level (`"auto"` = the recommended level) or an exact compute-unit price in micro-lamports.',
    oneOf: [
      { type: "string", enum: Object.keys(LEVELS) },
      { type: "integer", format: "int64", minimum: 0 },
    ],
  },
};

/** The shorthands, by message type name. */
export const SHORTHANDS: ReadonlyMap<string, RestShorthand> = new Map([[priorityFee.desc.typeName, priorityFee]]);
