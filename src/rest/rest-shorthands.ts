/**
 * Message types whose REST form differs from the generic one (rest-json.ts), keyed by type name,
 * where the spec writes a shape the contract models otherwise. The OpenAPI post-processing
 * (openapi-document.ts) describes the same forms.
 * - `priorityFee` is `"auto"`, `"low"`, `"medium"`, `"high"` or a number of micro-lamports; the
 *   contract models it as `PriorityFee { oneof choice { PriorityLevel level; uint64 micro_lamports } }`.
 * - A fee estimate's `priority` groups the four levels under `levels`, beside `recommended`, `unit`
 *   and (once they can be estimated) `odds`; the contract keeps the five numbers flat in `PriorityFeeLevels`.
 * - `tokenAmount.raw` is a string (an exact integer in base units), where 64-bit numbers are
 *   otherwise JSON numbers.
 * - A send result with `confirm` false (status `submitted`) holds only `signature` and `status`, as the
 *   spec says; the other fields appear once the transaction is in a block.
 * - A parsed account's `info` is the token account's fields or, for any other kind of account, the
 *   decoded fields the contract carries in `ParsedAccount.fields`: the spec has one `info` object.
 */
import type { DescMessage } from "@bufbuild/protobuf";
import {
  LandingOddsSchema,
  PriorityFeeLevelsSchema,
  PriorityFeeSchema,
  PriorityLevel,
} from "../../gen/solgate/v1/fee_pb.js";
import { ParsedAccountSchema, TokenAccountInfoSchema, TokenAmountSchema } from "../../gen/solgate/v1/program_pb.js";
import { SolgateError } from "../errors.ts";
import { PRIORITY_LEVELS } from "../fees/fee-estimate.ts";
import type { PriorityLevelName } from "../fees/fee-estimate.ts";
import { SendResultSchema, TransactionStatus } from "../../gen/solgate/v1/transaction_pb.js";
import { renderField, renderMessage } from "./rest-json.ts";

/** How one message type reads and renders on the REST surface. */
export interface RestShorthand {
  readonly desc: DescMessage;
  /** Reads the REST form into the message's init shape; throws INVALID_PARAMETER naming `path`. */
  parse(json: unknown, path: string): Record<string, unknown>;
  /** Renders a message of this type. */
  render(message: Record<string, unknown>): unknown;
  /** The JSON Schema of the REST form, for the OpenAPI document; absent: the generic form's schema, with `note`. */
  readonly schema?: Record<string, unknown>;
  /** Added to the generic schema's description when `schema` is absent. */
  readonly note?: string;
}

const LEVELS: Record<string, PriorityLevel> = Object.fromEntries(
  PRIORITY_LEVELS.map((name) => [name, PriorityLevel[name.toUpperCase() as Uppercase<PriorityLevelName>]]),
);
const LEVEL_WORDS = new Map(Object.entries(LEVELS).map(([word, level]) => [level, word]));
const U64_MAX = 2n ** 64n - 1n;
const U64_SCHEMA = { type: "integer", format: "int64", minimum: 0 };
const ODDS_SCHEMA = { type: "number", minimum: 0, maximum: 1 };

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
    if (micro !== undefined && micro >= 0n && micro <= U64_MAX)
      return { choice: { case: "microLamports", value: micro } };
    throw new SolgateError(
      "INVALID_PARAMETER",
      `${path} must be ${PRIORITY_LEVELS.map((name) => `"${name}"`).join(", ")} or a whole number of micro-lamports per compute unit`,
      { field: path },
    );
  },
  render(message) {
    const choice = message.choice as { case?: string; value?: unknown };
    if (choice.case === "level") return LEVEL_WORDS.get(choice.value as PriorityLevel) ?? "auto";
    if (choice.case === "microLamports") return u64Number(choice.value);
    return null;
  },
  schema: {
    description: 'A named level (`"auto"` = the recommended level) or an exact compute-unit price in micro-lamports.',
    oneOf: [{ type: "string", enum: Object.keys(LEVELS) }, U64_SCHEMA],
  },
};

/** A 64-bit number as the generic REST form writes one: a JSON number while exact, else its digits. */
function u64Number(value: unknown): number | string {
  const n = BigInt(value as bigint);
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString();
}

function outputOnly(desc: DescMessage): (json: unknown, path: string) => never {
  return (_json, path) => {
    throw new SolgateError("INVALID_PARAMETER", `${path} is output only (${desc.name})`, { field: path });
  };
}

const priorityFeeLevels: RestShorthand = {
  desc: PriorityFeeLevelsSchema,
  parse: outputOnly(PriorityFeeLevelsSchema),
  render(message) {
    return {
      levels: {
        low: u64Number(message.low),
        medium: u64Number(message.medium),
        high: u64Number(message.high),
        veryHigh: u64Number(message.veryHigh),
      },
      recommended: u64Number(message.recommended),
      unit: message.unit,
      // Absent in the contract while it cannot be estimated; null here, like every absent REST field.
      odds: message.odds === undefined ? null : renderMessage(LandingOddsSchema, message.odds as never),
    };
  },
  schema: {
    description:
      "Compute-unit price levels in micro-lamports per compute unit: the market at four percentiles, and the level recommended now.",
    type: "object",
    required: ["levels", "recommended", "unit", "odds"],
    properties: {
      levels: {
        type: "object",
        description: "The 25th, 50th, 75th and 95th percentiles of recent compute-unit prices.",
        required: ["low", "medium", "high", "veryHigh"],
        properties: { low: U64_SCHEMA, medium: U64_SCHEMA, high: U64_SCHEMA, veryHigh: U64_SCHEMA },
      },
      recommended: {
        ...U64_SCHEMA,
        description:
          "The cheapest price whose odds of landing within `odds.withinSlots` slots reach the configured target (default 0.9); before odds can be estimated, the medium level. Raised to a configured floor (and capped by a ceiling, if set).",
      },
      unit: { type: "string", enum: ["microLamportsPerComputeUnit"] },
      odds: {
        type: ["object", "null"],
        description:
          "The probability (0 to 1) that a transaction paying each level lands within `withinSlots` slots; null while too few blocks were seen to estimate it (never guessed).",
        required: ["withinSlots", "low", "medium", "high", "veryHigh", "recommended"],
        properties: {
          withinSlots: { type: "integer", minimum: 1 },
          low: ODDS_SCHEMA,
          medium: ODDS_SCHEMA,
          high: ODDS_SCHEMA,
          veryHigh: ODDS_SCHEMA,
          recommended: ODDS_SCHEMA,
        },
      },
    },
  },
};

const tokenAmount: RestShorthand = {
  desc: TokenAmountSchema,
  parse: outputOnly(TokenAmountSchema),
  render(message) {
    return { raw: String(message.raw), decimals: message.decimals, ui: message.ui, uiString: message.uiString };
  },
  schema: {
    description: "A token amount: exact in base units (`raw`, a string), and in whole tokens for display.",
    type: "object",
    required: ["raw", "decimals", "ui", "uiString"],
    properties: {
      raw: {
        type: "string",
        pattern: "^[0-9]+$",
        description: "The amount in base units, as an exact integer string.",
      },
      decimals: { type: "integer", minimum: 0, maximum: 255 },
      ui: { type: "number", description: "raw / 10^decimals, for display; may round." },
      uiString: { type: "string", description: "raw / 10^decimals as an exact decimal string." },
    },
  },
};

const parsedAccount: RestShorthand = {
  desc: ParsedAccountSchema,
  parse: outputOnly(ParsedAccountSchema),
  render(message) {
    // protobuf-es gives a Struct field as its plain JSON object.
    const info =
      message.fields !== undefined
        ? message.fields
        : message.info === undefined
          ? null
          : renderMessage(TokenAccountInfoSchema, message.info as Record<string, unknown> as never);
    return { type: message.type, info };
  },
  schema: {
    description: "A decoded account: its kind and its fields.",
    type: "object",
    required: ["type", "info"],
    properties: {
      type: {
        type: "string",
        description:
          "`account` for a token account; otherwise the decoder's name for the kind (`mint`, `initialized`, `lookupTable`, `program`, `metadata`, ...).",
      },
      info: {
        type: "object",
        description:
          "For a token account: `mint`, `owner`, `tokenAmount` and `state`. For other accounts: the fields as a Solana node's jsonParsed encoding gives them (integers beyond 2^53 as strings).",
        additionalProperties: true,
      },
    },
  },
};

const sendResult: RestShorthand = {
  desc: SendResultSchema,
  parse: outputOnly(SendResultSchema),
  render(message) {
    if (message.status === TransactionStatus.SUBMITTED) return { signature: message.signature, status: "submitted" };
    return Object.fromEntries(
      SendResultSchema.fields.map((field) => [field.jsonName, renderField(field, message[field.localName])]),
    );
  },
  note: "With `confirm` false (status `submitted`) it holds only `signature` and `status`, as the spec writes it.",
};

/** The shorthands, by message type name. */
export const SHORTHANDS: ReadonlyMap<string, RestShorthand> = new Map(
  [priorityFee, priorityFeeLevels, tokenAmount, parsedAccount, sendResult].map((shorthand) => [
    shorthand.desc.typeName,
    shorthand,
  ]),
);
