/**
 * Request validation from the contract's own rules: the `buf.validate` annotations in proto/solgate/v1/
 * are the single statement of what a request may hold (address and signature shapes, page-size ranges,
 * filter forms and counts, required transactions). protovalidate (`@bufbuild/protovalidate`) checks a
 * request against them; this module turns its violations into Solgate's catalogue errors, with the
 * reasons and field names clients already see (INVALID_ADDRESS for an address, INVALID_TRANSACTION for a
 * transaction, INVALID_PARAMETER for the rest, `field` naming the field by its JSON name).
 *
 * What the annotations cannot say stays in the cores, after this pass: that base58 decodes to exactly 32
 * bytes (an address) or 64 bytes (a signature), a match offset's upper bound and decoded byte count, cursor
 * contents, priority-fee choices, and the transaction's own structure.
 */
import { getOption, isFieldSet, ScalarType } from "@bufbuild/protobuf";
import type { DescField, DescMessage, Message } from "@bufbuild/protobuf";
import type { Path } from "@bufbuild/protobuf/reflect";
import { createValidator } from "@bufbuild/protovalidate";
import type { Violation } from "@bufbuild/protovalidate";
import {
  BytesRulesSchema,
  field as fieldRulesExt,
  Ignore,
  RepeatedRulesSchema,
  StringRulesSchema,
} from "../gen/buf/validate/validate_pb.js";
import type { FieldRules } from "../gen/buf/validate/validate_pb.js";
import { SolgateError } from "./errors.ts";

/** The base58 alphabet as the annotations write it. */
export const BASE58_PATTERN = "^[1-9A-HJ-NP-Za-km-z]+$";

/** Patterns the annotations use, with the words a message says for them. */
const PATTERN_WORDS: ReadonlyMap<string, string> = new Map([
  [BASE58_PATTERN, "base58"],
  ["^[0-9]{1,8}:[1-9A-HJ-NP-Za-km-z]{1,176}$", "offset:base58"],
]);

const validator = createValidator({ failFast: true });

/** The `buf.validate` rules of a field; undefined when it has none. */
export function fieldRules(field: DescField): FieldRules | undefined {
  const rules = getOption(field, fieldRulesExt);
  return rules.type.case === undefined && !rules.required && rules.cel.length === 0 ? undefined : rules;
}

/**
 * Checks `message` against its annotations.
 * @throws SolgateError with the reason of the first violated rule, naming its field.
 */
export function assertValidRequest(desc: DescMessage, message: Message): void {
  const result = validator.validate(desc, message);
  if (result.kind === "valid") return;
  if (result.kind === "error") throw result.error; // a broken annotation: Solgate's own bug (INTERNAL)
  throw errorOfViolation(result.violations[0], message);
}

/**
 * REST only: a query or body value given explicitly is checked even where the contract reads zero as
 * "unset" (`ignore: IGNORE_IF_ZERO_VALUE`): proto3 cannot tell `limit=0` from no limit once decoded, but
 * the REST request can, and the documented range (1-1000) refuses it.
 * @throws SolgateError as {@link assertValidRequest} would for that value.
 */
export function assertExplicitValues(desc: DescMessage, init: Readonly<Record<string, unknown>>): void {
  // Most inputs have no such field: then this is one lookup, not an option parse per field per request.
  for (const { field, range } of zeroRefusingFieldsOf(desc)) {
    if (!(field.localName in init)) continue;
    const value = init[field.localName];
    if (value === 0 || value === 0n) throw rangeError(field, range, value);
  }
}

interface ZeroRefusingField {
  field: DescField;
  range: Range;
}

const zeroRefusing = new WeakMap<DescMessage, readonly ZeroRefusingField[]>();

/** The scalar fields of `desc` whose rules ignore zero as unset but whose range excludes it; computed once. */
function zeroRefusingFieldsOf(desc: DescMessage): readonly ZeroRefusingField[] {
  const known = zeroRefusing.get(desc);
  if (known !== undefined) return known;
  const fields: ZeroRefusingField[] = [];
  for (const field of desc.fields) {
    if (field.fieldKind !== "scalar") continue;
    const rules = fieldRules(field);
    if (rules?.ignore !== Ignore.IF_ZERO_VALUE) continue;
    const range = rangeOf(rules);
    if (range !== undefined && (range.min > 0n || range.max < 0n)) fields.push({ field, range });
  }
  zeroRefusing.set(desc, fields);
  return fields;
}

function errorOfViolation(violation: Violation, message: Message): SolgateError {
  const at = fieldsOf(violation.field);
  if (at === undefined) {
    // A message-level (CEL) rule: its id names the field it is about, its message says why.
    const field = violation.ruleId === "filter_count" ? "match" : "body";
    const count = violation.ruleId === "filter_count" ? `, got ${filterCount(message)}` : "";
    return new SolgateError("INVALID_PARAMETER", `${violation.message}${count}`, { field });
  }
  const { field, index } = at;
  const name = field.jsonName;
  const value = valueAt(message, field, index);
  const rules = fieldRules(field);
  const itemRules = index === undefined ? rules : rules?.type.case === "repeated" ? rules.type.value.items : undefined;
  const path = index === undefined ? name : `${name}[${index}]`;
  const details: Record<string, unknown> = index === undefined ? { field: name } : { field: name, index };
  const rule = violation.ruleId;

  // A bundle's transaction count has its own reason (BUNDLE_TOO_LARGE), as the bundles core gives it.
  if (
    field.name === "transactions" &&
    (rule === "required" || rule === "repeated.min_items" || rule === "repeated.max_items")
  ) {
    const count = (value as unknown[]).length;
    return new SolgateError("BUNDLE_TOO_LARGE", `a bundle holds 1 to 5 transactions; this one holds ${count}`, {
      count,
    });
  }
  if (
    field.fieldKind === "list" &&
    field.listKind === "scalar" &&
    field.scalar === ScalarType.BYTES &&
    field.name === "transactions" &&
    index !== undefined &&
    rule === "bytes.max_len"
  ) {
    const bytes = value as Uint8Array;
    const max = itemRules?.type.case === "bytes" ? itemRules.type.value.maxLen : undefined;
    return new SolgateError(
      "INVALID_TRANSACTION",
      `transaction ${index}: transaction is ${bytes.length} bytes; the limit is ${max}`,
      { index, size: bytes.length },
    );
  }
  if (field.fieldKind === "scalar" && field.scalar === ScalarType.BYTES && field.name === "transaction") {
    const bytes = value as Uint8Array;
    if (rule === "required") return new SolgateError("INVALID_TRANSACTION", "transaction is empty", {});
    if (rule === "bytes.max_len") {
      const max = itemRules?.type.case === "bytes" ? itemRules.type.value.maxLen : undefined;
      return new SolgateError("INVALID_TRANSACTION", `transaction is ${bytes.length} bytes; the limit is ${max}`, {
        size: bytes.length,
      });
    }
  }
  if (itemRules?.type.case === "string") {
    const s = itemRules.type.value;
    if (isAddressShape(itemRules)) {
      return new SolgateError(
        "INVALID_ADDRESS",
        `${path} must be a base58 address of 32 bytes, got ${quote(value)}`,
        details,
      );
    }
    if (rule === "required") return new SolgateError("INVALID_PARAMETER", `${path} is required`, details);
    const pattern = isFieldSet(s, StringRulesSchema.field.pattern) ? s.pattern : undefined;
    const words = pattern === undefined ? "a string" : (PATTERN_WORDS.get(pattern) ?? `a string matching ${pattern}`);
    const minLen = isFieldSet(s, StringRulesSchema.field.minLen) ? s.minLen : 0n;
    const maxLen = isFieldSet(s, StringRulesSchema.field.maxLen) ? s.maxLen : undefined;
    const lengths = maxLen === undefined ? "" : ` (${minLen}-${maxLen} characters)`;
    const shape = words === "offset:base58" ? "written offset:base58" : `${words}${lengths}`;
    return new SolgateError("INVALID_PARAMETER", `${path} must be ${shape}, got ${quote(value)}`, details);
  }
  if (rule === "repeated.max_items" && rules?.type.case === "repeated") {
    return new SolgateError(
      "INVALID_PARAMETER",
      `${path} takes at most ${rules.type.value.maxItems} items, got ${(value as unknown[]).length}`,
      details,
    );
  }
  const range = itemRules === undefined ? undefined : rangeOf(itemRules);
  if (range !== undefined) return rangeError(field, range, value);
  return new SolgateError("INVALID_PARAMETER", `${path} ${violation.message}`, details);
}

/** Whether the rules are the contract's address shape (base58, 32-44 characters). */
function isAddressShape(rules: FieldRules): boolean {
  return (
    rules.type.case === "string" &&
    rules.type.value.minLen === 32n &&
    rules.type.value.maxLen === 44n &&
    rules.type.value.pattern === BASE58_PATTERN
  );
}

interface Range {
  min: bigint;
  max: bigint;
}

/** The inclusive range of an integer field's rules (gte/gt and lte/lt); undefined for other rules. */
export function rangeOf(rules: FieldRules): Range | undefined {
  const type = rules.type;
  if (type.case !== "uint32" && type.case !== "uint64" && type.case !== "int32" && type.case !== "int64")
    return undefined;
  const r = type.value;
  const unsigned = type.case === "uint32" || type.case === "uint64";
  const bits = type.case.endsWith("32") ? 32n : 64n;
  let min = unsigned ? 0n : -(1n << (bits - 1n));
  let max = unsigned ? (1n << bits) - 1n : (1n << (bits - 1n)) - 1n;
  if (r.greaterThan.case === "gte") min = BigInt(r.greaterThan.value);
  if (r.greaterThan.case === "gt") min = BigInt(r.greaterThan.value) + 1n;
  if (r.lessThan.case === "lte") max = BigInt(r.lessThan.value);
  if (r.lessThan.case === "lt") max = BigInt(r.lessThan.value) - 1n;
  return { min, max };
}

function rangeError(field: DescField, range: Range, value: unknown): SolgateError {
  return new SolgateError(
    "INVALID_PARAMETER",
    `${field.jsonName} must be ${range.min}-${range.max}, got ${String(value)}`,
    { field: field.jsonName },
  );
}

/** The field (and list index) a violation's path ends at; undefined for a message-level rule. */
function fieldsOf(path: Path): { field: DescField; index: number | undefined } | undefined {
  let field: DescField | undefined;
  let index: number | undefined;
  for (const item of path) {
    if (item.kind === "field") {
      field = item;
      index = undefined;
    } else if (item.kind === "list_sub") {
      index = item.index;
    }
  }
  return field === undefined ? undefined : { field, index };
}

function valueAt(message: Message, field: DescField, index: number | undefined): unknown {
  const value = (message as unknown as Record<string, unknown>)[field.localName];
  return index === undefined ? value : (value as unknown[])[index];
}

function filterCount(message: Message): number {
  const m = message as unknown as { match?: unknown[]; size?: unknown };
  return (m.match?.length ?? 0) + (m.size === undefined ? 0 : 1);
}

/** Echoes untrusted input in a message, bounded. */
function quote(value: unknown): string {
  return JSON.stringify(String(value).slice(0, 64));
}

/**
 * The JSON Schema keywords a field's rules stand for, in the REST/JSON form: string lengths and pattern,
 * integer bounds, list size, and for `bytes` (base64 in JSON) the base64 lengths of its byte bounds.
 * The OpenAPI document is built with these (src/rest/openapi-document.ts), so it says what the server checks.
 */
export function schemaConstraints(field: DescField): Record<string, unknown> {
  const rules = fieldRules(field);
  if (rules === undefined) return {};
  if (field.fieldKind === "list") {
    const out: Record<string, unknown> = {};
    if (rules.type.case === "repeated") {
      const r = rules.type.value;
      if (isFieldSet(r, RepeatedRulesSchema.field.minItems)) out.minItems = Number(r.minItems);
      if (isFieldSet(r, RepeatedRulesSchema.field.maxItems)) out.maxItems = Number(r.maxItems);
      if (r.items !== undefined) out.items = scalarConstraints(r.items, field.scalar);
    }
    return out;
  }
  return scalarConstraints(rules, field.fieldKind === "scalar" ? field.scalar : undefined);
}

function scalarConstraints(rules: FieldRules, scalar: ScalarType | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const type = rules.type;
  if (scalar === ScalarType.STRING && type.case === undefined) {
    if (rules.required) out.minLength = 1;
  } else if (type.case === "string") {
    const r = type.value;
    const minLen = isFieldSet(r, StringRulesSchema.field.minLen) ? r.minLen : rules.required ? 1n : undefined;
    if (minLen !== undefined) out.minLength = Number(minLen);
    if (isFieldSet(r, StringRulesSchema.field.maxLen)) out.maxLength = Number(r.maxLen);
    if (isFieldSet(r, StringRulesSchema.field.pattern)) out.pattern = r.pattern;
  } else if (scalar === ScalarType.BYTES) {
    // base64: n bytes are 4*ceil(n/3) characters padded; protobuf JSON also takes them unpadded.
    const r = type.case === "bytes" ? type.value : undefined;
    const minLen =
      r !== undefined && isFieldSet(r, BytesRulesSchema.field.minLen) ? r.minLen : rules.required ? 1n : undefined;
    const maxLen = r !== undefined && isFieldSet(r, BytesRulesSchema.field.maxLen) ? r.maxLen : undefined;
    if (minLen !== undefined) out.minLength = Math.ceil((Number(minLen) * 4) / 3);
    if (maxLen !== undefined) out.maxLength = 4 * Math.ceil(Number(maxLen) / 3);
  } else {
    const range = rangeOf(rules);
    if (range !== undefined) {
      const r = type.value as { greaterThan: { case?: string }; lessThan: { case?: string } };
      // Unsigned fields say their floor of 0 even without a rule: a negative number never fits them.
      if (r.greaterThan.case !== undefined || type.case === "uint32" || type.case === "uint64")
        out.minimum = Number(range.min);
      if (r.lessThan.case !== undefined) out.maximum = Number(range.max);
    }
  }
  return out;
}

/** Whether a request must carry the field (`required`, or a non-empty minimum), for `required` lists. */
export function isRequiredField(field: DescField): boolean {
  const rules = fieldRules(field);
  return rules?.required === true;
}
