/**
 * The committed OpenAPI document says what the server checks: every request field with `buf.validate`
 * rules in the contract carries the matching JSON Schema keywords, as a path or query parameter or as a
 * body property. The rules are read here straight from the descriptors with protobuf-es, not through
 * the code that wrote the document.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { getOption, isFieldSet, ScalarType } from "@bufbuild/protobuf";
import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { field as fieldRules, StringRulesSchema } from "../../gen/buf/validate/validate_pb.js";
import { OPENAPI_PATH } from "../../src/rest/rest-handler.ts";
import { parseMessage } from "../../src/rest/rest-json.ts";
import { SOLGATE_SERVICES } from "../../src/server/routes.ts";

type Json = Record<string, any>;
const doc = JSON.parse(readFileSync(OPENAPI_PATH, "utf8")) as Json;

/** The keywords a field's rules call for, derived here independently. */
function expected(field: DescField): Json {
  const rules = getOption(field, fieldRules);
  const out: Json = {};
  const type = rules.type;
  if (type.case === "string") {
    if (isFieldSet(type.value, StringRulesSchema.field.minLen)) out.minLength = Number(type.value.minLen);
    if (isFieldSet(type.value, StringRulesSchema.field.maxLen)) out.maxLength = Number(type.value.maxLen);
    if (isFieldSet(type.value, StringRulesSchema.field.pattern)) out.pattern = type.value.pattern;
  } else if (type.case === "uint32" || type.case === "uint64") {
    out.minimum = type.value.greaterThan.case === "gte" ? Number(type.value.greaterThan.value) : 0;
    if (type.value.lessThan.case === "lte") out.maximum = Number(type.value.lessThan.value);
  } else if (type.case === "bytes" && field.fieldKind === "scalar" && field.scalar === ScalarType.BYTES) {
    out.maxLength = 4 * Math.ceil(Number(type.value.maxLen) / 3);
    if (rules.required) out.minLength = 2;
  } else if (type.case === "repeated") {
    out.maxItems = Number(type.value.maxItems);
    const items = type.value.items?.type;
    if (items?.case === "string") out.items = { pattern: items.value.pattern };
  }
  return out;
}

/** The field of `input` a parameter or property names (JSON or proto name). */
const fieldOf = (input: DescMessage, name: string) => input.fields.find((f) => f.jsonName === name || f.name === name);

const operations = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
  Object.entries(item as Json).map(([verb, op]) => ({ path, verb, op: op as Json })),
);
const methodOf = (operationId: string) => {
  const [service, name] = operationId.replace(/Events$/, "").split("_");
  return SOLGATE_SERVICES.find((s) => s.name === service)?.methods.find((m) => m.name === name);
};

describe("the OpenAPI document carries the contract's validation rules", () => {
  const checked: string[] = [];
  for (const { path, verb, op } of operations) {
    const method = methodOf(op.operationId);
    if (method === undefined) continue;
    it(`${verb.toUpperCase()} ${path}`, () => {
      for (const parameter of (op.parameters ?? []) as Json[]) {
        const field = fieldOf(method.input, parameter.name);
        if (field === undefined) continue;
        const want = expected(field);
        if (Object.keys(want).length === 0) continue;
        expect(parameter.schema, `${parameter.name} of ${path}`).toMatchObject(want);
        checked.push(`${path} ${parameter.name}`);
      }
      const body = op.requestBody?.content?.["application/json"]?.schema as Json | undefined;
      if (body?.properties !== undefined) {
        for (const field of method.input.fields) {
          const want = expected(field);
          if (Object.keys(want).length === 0 || body.properties[field.jsonName] === undefined) continue;
          expect(body.properties[field.jsonName], `${field.jsonName} of ${path}`).toMatchObject(want);
          if (getOption(field, fieldRules).required) expect(body.required).toContain(field.jsonName);
          checked.push(`${path} ${field.jsonName}`);
        }
      }
    });
  }

  it('covers every annotated request field the REST surface takes, e.g. an address refuses "0"', () => {
    const address = (doc.paths["/v1/{chain}/accounts/{address}"].get.parameters as Json[]).find(
      (p) => p.name === "address",
    )!;
    expect(address.schema).toMatchObject({ minLength: 32, maxLength: 44, pattern: "^[1-9A-HJ-NP-Za-km-z]+$" });
    expect(new RegExp(address.schema.pattern).test("0")).toBe(false);
    const limit = (doc.paths["/v1/{chain}/collections/{address}/nfts"].get.parameters as Json[]).find(
      (p) => p.name === "limit",
    )!;
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: 1000 });
    // addresses (7 paths incl. the watch's signature), limits (5), size, match, 3 transactions
    expect(checked.length).toBeGreaterThanOrEqual(18);
  });
});

/** Every message the services take or answer, by type name (walked from the methods' inputs and outputs). */
function messagesOfServices(): Map<string, DescMessage> {
  const out = new Map<string, DescMessage>();
  const visit = (desc: DescMessage) => {
    if (out.has(desc.typeName)) return;
    out.set(desc.typeName, desc);
    for (const field of desc.fields) if (field.message !== undefined) visit(field.message);
  };
  for (const service of SOLGATE_SERVICES)
    for (const method of service.methods) {
      visit(method.input);
      visit(method.output);
    }
  return out;
}

describe("a oneof's members are exclusive in the document as in the REST parser", () => {
  const schemas = doc.components.schemas as Json;
  const messages = messagesOfServices();
  const withOneofs = Object.keys(schemas)
    .map((name) => ({ name, desc: messages.get(name) }))
    // Messages the REST form writes as objects (shorthands such as PriorityFee's "auto" | number are not).
    .filter((m) => m.desc !== undefined && schemas[m.name].properties !== undefined)
    .filter((m) => m.desc!.oneofs.some((o) => o.fields.length > 1));

  it("finds the request oneofs (Tip's level or lamports)", () => {
    expect(withOneofs.map((m) => m.name)).toContain("solgate.v1.Tip");
  });

  for (const { name, desc } of withOneofs) {
    it(`${name}: two members set together violate the schema and are refused`, () => {
      for (const oneof of desc!.oneofs) {
        const [a, b] = oneof.fields;
        const clauses: Json[] = schemas[name].not?.anyOf ?? (schemas[name].not ? [schemas[name].not] : []);
        const forbids = clauses.some(
          (c) =>
            [a!.jsonName, b!.jsonName].every((n) => c.required?.includes(n)) &&
            [a!.jsonName, b!.jsonName].every((n) => c.properties?.[n]?.not?.type === "null"),
        );
        expect(forbids, `${name}: ${a!.jsonName} with ${b!.jsonName}`).toBe(true);
      }
    });
  }

  it("the REST parser refuses Tip with both members, and takes one with the other null", () => {
    const tip = messages.get("solgate.v1.Tip")!;
    expect(() => parseMessage(tip, { lamports: 5000, level: "p50" }, "tip")).toThrow(/cannot be set together/);
    expect(parseMessage(tip, { lamports: 5000, level: null }, "tip")).toEqual({
      choice: { case: "lamports", value: 5000n },
    });
  });
});

describe("an unsigned field takes no negative number, in the document as in the REST parser", () => {
  const schemas = doc.components.schemas as Json;
  const unsigned = [...messagesOfServices()].flatMap(([name, desc]) =>
    desc.fields
      .filter((f) => f.fieldKind === "scalar" && [ScalarType.UINT32, ScalarType.UINT64].includes(f.scalar))
      .filter((f) => schemas[name]?.properties?.[f.jsonName] !== undefined)
      .map((f) => ({ name, field: f })),
  );

  it("finds them (Tip.lamports among them)", () => {
    expect(unsigned.map((u) => `${u.name}.${u.field.jsonName}`)).toContain("solgate.v1.Tip.lamports");
  });

  it("every one says minimum 0 or more, and the parser refuses -1", () => {
    for (const { name, field } of unsigned) {
      const property = schemas[name].properties[field.jsonName];
      // A shorthand may write it as a string of digits (TokenAmount.raw), which no negative number matches.
      if (property.type === "string") expect(property.pattern, `${name}.${field.jsonName}`).toBe("^[0-9]+$");
      else expect(property.minimum ?? -1, `${name}.${field.jsonName}`).toBeGreaterThanOrEqual(0);
    }
    const tip = messagesOfServices().get("solgate.v1.Tip")!;
    expect(() => parseMessage(tip, { lamports: -1 }, "tip")).toThrow(/must be an integer from 0/);
  });
});
