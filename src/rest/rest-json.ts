/**
 * The REST surface's JSON form of protobuf messages, as the seed writes it. It differs from
 * canonical proto JSON (what Connect JSON speaks) in four ways, all mechanical, all driven by the
 * descriptors so a new field needs no code here:
 * - 64-bit integers are JSON numbers, not strings (beyond 2^53 they are written digit for digit);
 * - enum values are lowercase words without their prefix, `_` as `-`
 *   (`TOKEN_STANDARD_PROGRAMMABLE_NON_FUNGIBLE` -> `"programmable-non-fungible"`);
 * - fields with presence (message fields, `optional` scalars, oneof members) are `null` when
 *   absent instead of left out; other fields always appear, defaults included;
 * - a few types have a shorthand (`rest-shorthands.ts`: `priorityFee: "high"` or a number).
 * Reading is lenient where the seed is: 64-bit fields take numbers or numeric strings, enums take
 * the word or the proto name, bytes take base64 (standard or URL-safe). Anything else is an
 * INVALID_PARAMETER naming the field.
 */
import { ScalarType, toJson, fromJson } from "@bufbuild/protobuf";
import { base64Decode, base64Encode } from "@bufbuild/protobuf/wire";
import type { DescEnum, DescField, DescMessage, JsonValue } from "@bufbuild/protobuf";
import { SolgateError, isSolgateError } from "../errors.ts";
import { SHORTHANDS } from "./rest-shorthands.ts";

/** A message as protobuf-es holds it: a plain object keyed by field local names. */
type MessageObject = Record<string, unknown>;

// `JSON.rawJSON` (Node >= 21) lets a u64 above 2^53 be written exactly as a JSON number.
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

/** Renders a message in REST form; pass the result to `JSON.stringify`. */
export function renderMessage(desc: DescMessage, message: MessageObject): unknown {
  const shorthand = SHORTHANDS.get(desc.typeName);
  if (shorthand !== undefined) return shorthand.render(message);
  if (desc.typeName.startsWith("google.protobuf.")) return renderWellKnown(desc, message);
  const out: Record<string, unknown> = {};
  for (const field of desc.fields) {
    if (field.oneof !== undefined) {
      const group = message[field.oneof.localName] as { case?: string; value?: unknown };
      out[field.jsonName] = group.case === field.localName ? renderSingular(field, group.value) : null;
      continue;
    }
    out[field.jsonName] = renderField(field, message[field.localName]);
  }
  return out;
}

/** Renders one field's value (as found on its message) in REST form. */
export function renderField(field: DescField, value: unknown): unknown {
  switch (field.fieldKind) {
    case "list": {
      const list = value as unknown[];
      if (field.listKind === "message") return list.map((m) => renderMessage(field.message, m as MessageObject));
      if (field.listKind === "enum") return list.map((n) => enumWord(field.enum, n as number));
      return list.map((v) => renderScalar(field.scalar, v));
    }
    case "map": {
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
        out[key] =
          field.mapKind === "message"
            ? renderMessage(field.message, v as MessageObject)
            : field.mapKind === "enum"
              ? enumWord(field.enum, v as number)
              : renderScalar(field.scalar, v);
      }
      return out;
    }
    default:
      return value === undefined ? null : renderSingular(field, value);
  }
}

function renderSingular(field: DescField, value: unknown): unknown {
  if (field.fieldKind === "message") return renderMessage(field.message, value as MessageObject);
  if (field.fieldKind === "enum") return enumWord(field.enum, value as number);
  if (field.fieldKind === "scalar") return renderScalar(field.scalar, value);
  return renderField(field, value);
}

function renderScalar(type: ScalarType, value: unknown): unknown {
  switch (type) {
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64: {
      const n = typeof value === "bigint" ? value : BigInt(value as string);
      return n <= MAX_SAFE && n >= MIN_SAFE ? Number(n) : rawJSON(n.toString());
    }
    case ScalarType.BYTES:
      return base64Encode(value as Uint8Array);
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      // JSON has no NaN or infinities; canonical proto JSON's strings are the least surprising.
      return Number.isFinite(value) ? value : String(value);
    default:
      return value;
  }
}

function renderWellKnown(desc: DescMessage, message: MessageObject): unknown {
  // Wrappers render as their value (64-bit ones as numbers, like every other 64-bit field).
  if (
    desc.fields.length === 1 &&
    desc.fields[0].name === "value" &&
    desc.typeName.endsWith("Value") &&
    desc.fields[0].fieldKind === "scalar"
  ) {
    return renderScalar(desc.fields[0].scalar, message.value);
  }
  // Timestamp (RFC 3339 UTC), Duration, Struct, Value, FieldMask...: canonical JSON is already the seed's form.
  return toJson(desc, message as never);
}

const wordsCache = new WeakMap<DescEnum, { byNumber: Map<number, string>; byWord: Map<string, number> }>();

/** The REST words of an enum: `TRANSACTION_STATUS_CONFIRMED` -> `confirmed`, both ways. */
export function enumWords(desc: DescEnum): { byNumber: Map<number, string>; byWord: Map<string, number> } {
  let words = wordsCache.get(desc);
  if (words === undefined) {
    words = { byNumber: new Map(), byWord: new Map() };
    for (const value of desc.values) {
      const word = value.localName.toLowerCase().replace(/_/g, "-");
      words.byNumber.set(value.number, word);
      words.byWord.set(word, value.number);
    }
    wordsCache.set(desc, words);
  }
  return words;
}

/** The REST word of an enum number (an unknown number stays a number). */
export function enumWord(desc: DescEnum, value: number): string | number {
  return enumWords(desc).byNumber.get(value) ?? value;
}

/** Thrown for input that does not fit its field. */
export function invalidField(path: string, why: string): SolgateError {
  return new SolgateError("INVALID_PARAMETER", `${path} ${why}`, { field: path });
}

/**
 * Reads a REST JSON object into the init shape of `desc` (for `create`). `path` names the object
 * in error messages (`body`, `priorityFee`). Fields named in `skip` are left for the caller.
 */
export function parseMessage(
  desc: DescMessage,
  json: unknown,
  path: string,
  skip?: ReadonlySet<string>,
): MessageObject {
  const shorthand = SHORTHANDS.get(desc.typeName);
  if (shorthand !== undefined) return shorthand.parse(json, path);
  if (desc.typeName.startsWith("google.protobuf.")) {
    try {
      return fromJson(desc, json as JsonValue) as unknown as MessageObject;
    } catch (e) {
      throw invalidField(path, `is not a valid ${desc.typeName}: ${(e as Error).message}`);
    }
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw path === ""
      ? new SolgateError("INVALID_PARAMETER", "the request body must be a JSON object", { field: "body" })
      : invalidField(path, "must be a JSON object");
  }
  const out: MessageObject = {};
  for (const [key, value] of Object.entries(json)) {
    const field = fieldByName(desc, key);
    const at = path === "" ? key : `${path}.${key}`;
    if (field === undefined) throw invalidField(at, `is not a field of ${desc.name}`);
    if (skip?.has(field.name) || value === null) continue;
    const parsed = parseFieldValue(field, value, at);
    if (field.oneof !== undefined) {
      if (out[field.oneof.localName] !== undefined)
        throw invalidField(at, `cannot be set together with another ${field.oneof.name} field`);
      out[field.oneof.localName] = { case: field.localName, value: parsed };
    } else {
      out[field.localName] = parsed;
    }
  }
  return out;
}

/** The field named `name` (JSON name or proto name). */
export function fieldByName(desc: DescMessage, name: string): DescField | undefined {
  return desc.fields.find((f) => f.jsonName === name || f.name === name);
}

/**
 * Fields whose bad value has a reason of its own: the contract's `bytes transaction` fields carry a
 * wire transaction, and one that is not base64 is not a decodable transaction (`invalid_transaction`,
 * as the spec says), not a generic bad parameter.
 */
const FIELD_REASONS: ReadonlyMap<string, "INVALID_TRANSACTION"> = new Map([["transaction", "INVALID_TRANSACTION"]]);

/** Reads one field's value from JSON (or from a query-string string). */
export function parseFieldValue(field: DescField, value: unknown, path: string): unknown {
  const reason =
    field.fieldKind === "scalar" && field.scalar === ScalarType.BYTES ? FIELD_REASONS.get(field.name) : undefined;
  if (reason === undefined) return parseFieldValueAs(field, value, path);
  try {
    return parseFieldValueAs(field, value, path);
  } catch (error) {
    if (isSolgateError(error))
      throw new SolgateError(
        reason,
        `${path} is not a transaction: it ${error.message.slice(path.length + 1)}`,
        error.details,
      );
    throw error;
  }
}

function parseFieldValueAs(field: DescField, value: unknown, path: string): unknown {
  switch (field.fieldKind) {
    case "list": {
      if (!Array.isArray(value)) throw invalidField(path, "must be an array");
      return value.map((v, i) => {
        const at = `${path}[${i}]`;
        if (field.listKind === "message") return parseMessage(field.message, v, at);
        if (field.listKind === "enum") return parseEnum(field.enum, v, at);
        return parseScalar(field.scalar, v, at);
      });
    }
    case "map": {
      if (typeof value !== "object" || value === null || Array.isArray(value))
        throw invalidField(path, "must be a JSON object");
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) {
        const at = `${path}.${key}`;
        out[key] =
          field.mapKind === "message"
            ? parseMessage(field.message, v, at)
            : field.mapKind === "enum"
              ? parseEnum(field.enum, v, at)
              : parseScalar(field.scalar, v, at);
      }
      return out;
    }
    case "message":
      return parseMessage(field.message, value, path);
    case "enum":
      return parseEnum(field.enum, value, path);
    default:
      return parseScalar(field.scalar, value, path);
  }
}

/** Reads an enum value: its REST word, its proto name, or its number. */
export function parseEnum(desc: DescEnum, value: unknown, path: string): number {
  if (typeof value === "number" && Number.isInteger(value) && desc.values.some((v) => v.number === value)) return value;
  if (typeof value === "string") {
    const byWord = enumWords(desc).byWord.get(value.toLowerCase());
    if (byWord !== undefined) return byWord;
    const byName = desc.values.find((v) => v.name === value);
    if (byName !== undefined) return byName.number;
  }
  const words = [...enumWords(desc).byWord.keys()].filter((w) => w !== "unspecified");
  throw invalidField(path, `must be one of ${words.map((w) => `"${w}"`).join(", ")}, got ${preview(value)}`);
}

const INTEGER = /^-?\d+$/;

/** Reads a scalar: numbers or numeric strings for numeric types, base64 for bytes. */
export function parseScalar(type: ScalarType, value: unknown, path: string): unknown {
  switch (type) {
    case ScalarType.STRING:
      if (typeof value !== "string") throw invalidField(path, `must be a string, got ${preview(value)}`);
      return value;
    case ScalarType.BOOL:
      if (value === true || value === "true") return true;
      if (value === false || value === "false") return false;
      throw invalidField(path, `must be true or false, got ${preview(value)}`);
    case ScalarType.BYTES: {
      if (
        typeof value !== "string" ||
        !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value) ||
        value.replace(/=+$/, "").length % 4 === 1
      ) {
        throw invalidField(path, "must be base64");
      }
      return base64Decode(value);
    }
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT: {
      const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
      if (typeof n !== "number" || Number.isNaN(n)) throw invalidField(path, `must be a number, got ${preview(value)}`);
      return n;
    }
    default:
      return parseInteger(type, value, path);
  }
}

const RANGES: Partial<Record<ScalarType, [bigint, bigint]>> = {
  [ScalarType.INT32]: [-(2n ** 31n), 2n ** 31n - 1n],
  [ScalarType.SINT32]: [-(2n ** 31n), 2n ** 31n - 1n],
  [ScalarType.SFIXED32]: [-(2n ** 31n), 2n ** 31n - 1n],
  [ScalarType.UINT32]: [0n, 2n ** 32n - 1n],
  [ScalarType.FIXED32]: [0n, 2n ** 32n - 1n],
  [ScalarType.INT64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [ScalarType.SINT64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [ScalarType.SFIXED64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [ScalarType.UINT64]: [0n, 2n ** 64n - 1n],
  [ScalarType.FIXED64]: [0n, 2n ** 64n - 1n],
};

function parseInteger(type: ScalarType, value: unknown, path: string): number | bigint {
  let n: bigint | undefined;
  if (typeof value === "bigint") n = value;
  else if (typeof value === "number" && Number.isSafeInteger(value)) n = BigInt(value);
  else if (typeof value === "string" && INTEGER.test(value.trim())) n = BigInt(value.trim());
  const [min, max] = RANGES[type]!;
  if (n === undefined || n < min || n > max)
    throw invalidField(path, `must be an integer from ${min} to ${max}, got ${preview(value)}`);
  return max > 2n ** 32n ? n : Number(n);
}

/** A short, safe rendering of a bad input value for an error message. */
export function preview(value: unknown): string {
  // Bodies are read with exact integers, so a bigint may sit anywhere inside `value`.
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? rawJSON(v.toString()) : v));
  return text === undefined ? String(value) : text.length > 64 ? `${text.slice(0, 61)}...` : text;
}
