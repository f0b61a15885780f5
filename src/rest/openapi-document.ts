/**
 * Turns protoc-gen-connect-openapi's document (written from the contract's `google.api.http`
 * annotations, in canonical proto JSON terms) into the document of the REST surface as it really
 * answers, by the same rules as rest-json.ts: 64-bit integers are integers, enums are lowercase
 * words, fields with presence are nullable (OpenAPI 3.1 style), shorthands have their own schema.
 * The plugin copies the `buf.validate` rules into the schemas; this step sets them again from the same
 * descriptors (request-validation.ts `schemaConstraints`), which also gives `bytes` fields their base64
 * lengths and parameters of the SSE watch their rules.
 * It adds what the plugin cannot know: the bearer-key security scheme, the error body and its
 * statuses (from the error catalogue), and the SSE watch. Pure: document in, document out.
 */
import type { DescEnum, DescField, DescMessage, DescService } from "@bufbuild/protobuf";
import { ScalarType } from "@bufbuild/protobuf";
import { ERROR_REASONS } from "../errors.ts";
import { fieldRules, isRequiredField, schemaConstraints } from "../request-validation.ts";
import { enumWords } from "./rest-json.ts";
import { SHORTHANDS } from "./rest-shorthands.ts";
import { SSE_WATCHES } from "./sse-watch.ts";

type Json = Record<string, unknown>;

/** The component name of the REST error body. */
export const ERROR_SCHEMA = "solgate.rest.Error";

/** Builds the REST document from the plugin's `raw` document and the services it describes. */
export function buildOpenApiDocument(raw: Json, services: readonly DescService[]): Json {
  const doc = structuredClone(raw);
  const types = reachableTypes(services);
  const schemas = ((doc.components ??= {}) as Json).schemas as Record<string, Json>;

  for (const [name, schema] of Object.entries(schemas)) {
    const desc = types.get(name);
    const shorthand = SHORTHANDS.get(name);
    if (shorthand?.schema !== undefined) {
      schemas[name] = {
        title: schema.title,
        ...shorthand.schema,
        description: shorthand.schema.description ?? schema.description,
      };
    } else if (desc?.kind === "enum") {
      schema.enum = [...enumWords(desc).byWord.keys()];
    } else if (desc?.kind === "message" && !name.startsWith("google.protobuf.")) {
      fixMessageSchema(schema, desc);
      if (shorthand?.note !== undefined) schema.description = `${schema.description ?? ""} ${shorthand.note}`.trim();
    }
  }
  // Only what the server serves: a service in the contract but not served is left out.
  const paths = doc.paths as Record<string, Record<string, Json>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [verb, operation] of Object.entries(item))
      if (methodOf(services, operation.operationId as string) === undefined) delete item[verb];
    if (Object.keys(item).length === 0) delete paths[path];
  }
  for (const item of Object.values(doc.paths as Record<string, Record<string, Json>>)) {
    for (const operation of Object.values(item)) {
      const method = methodOf(services, operation.operationId as string);
      const body = ((operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined)?.[
        "application/json"
      ];
      if (method !== undefined && body?.schema !== undefined && !("$ref" in (body.schema as Json))) {
        fixMessageSchema(body.schema as Json, method.input);
        applyRules(body.schema as Json, method.input);
      }
      if (method !== undefined) applyParameterRules(operation, method.input);
      operation.responses = { ...(operation.responses as Json), ...errorResponses() };
    }
  }
  addWatchEvents(doc, schemas, services);
  schemas[ERROR_SCHEMA] = errorSchema();
  (doc.components as Json).securitySchemes = {
    bearer: { type: "http", scheme: "bearer", description: "An API key: `Authorization: Bearer <key>`." },
  };
  doc.security = [{ bearer: [] }];
  doc.info = {
    title: "Solgate REST API",
    version: "v1",
    description:
      "The REST surface of Solgate, transcoded from its gRPC contract (solgate.v1). `{chain}` selects the chain " +
      "(an unknown one is `unknown_chain`, 404, naming those served). 64-bit integers are JSON numbers; enums are " +
      "lowercase words; absent resources and optional fields are `null`; errors are `{code, message, details}`.",
  };
  walk(doc, normalizeSchemaNode);
  trimUnreachable(doc);
  return doc;
}

/**
 * Applies message rules to a message's schema: oneofs become nullable properties, at most one of them set;
 * presence means nullable.
 */
function fixMessageSchema(schema: Json, desc: DescMessage): void {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  // The plugin models a oneof as `oneOf` (or `allOf` of groups); the REST form has every member as a nullable property.
  const groups = [...((schema.oneOf as Json[] | undefined) ?? []), ...((schema.allOf as Json[] | undefined) ?? [])];
  for (const group of groups) {
    Object.assign(properties, group.properties ?? {});
    for (const member of (group.oneOf as Json[] | undefined) ?? []) Object.assign(properties, member.properties ?? {});
  }
  delete schema.oneOf;
  delete schema.allOf;
  schema.type = "object";
  schema.properties = properties;
  for (const field of desc.fields) {
    const property = properties[field.jsonName];
    if (property !== undefined && hasPresence(field)) property.nullable = true;
    // An unsigned field takes no negative number (the REST parser refuses one), whatever its rules say.
    if (property !== undefined && isUnsigned(field) && property.minimum === undefined) property.minimum = 0;
  }
  // At most one member of a oneof is set (a null member is absent): two set together are refused
  // (`invalid_parameter`), so the schema says so.
  const exclusive: Json[] = [];
  for (const oneof of desc.oneofs) {
    const names = oneof.fields.map((f) => f.jsonName).filter((name) => properties[name] !== undefined);
    for (let i = 0; i < names.length; i++)
      for (let j = i + 1; j < names.length; j++) {
        const both = [names[i]!, names[j]!];
        exclusive.push({
          required: both,
          properties: Object.fromEntries(both.map((name) => [name, { not: { type: "null" } }])),
        });
      }
  }
  if (exclusive.length > 0) schema.not = exclusive.length === 1 ? exclusive[0] : { anyOf: exclusive };
}

/** The request body's properties carry their fields' rules; fields a request must carry are `required`. */
function applyRules(schema: Json, desc: DescMessage): void {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required: string[] = [];
  for (const field of desc.fields) {
    const property = properties[field.jsonName];
    if (property === undefined) continue;
    setConstraints(property, schemaConstraints(field));
    excludeEnumValues(property, field);
    if (isRequiredField(field)) required.push(field.jsonName);
  }
  if (required.length > 0) schema.required = required;
  else delete schema.required;
}

/** Path and query parameters carry their fields' rules (a parameter is named by its JSON or proto name). */
function applyParameterRules(operation: Json, desc: DescMessage): void {
  for (const parameter of (operation.parameters ?? []) as Json[]) {
    const field = desc.fields.find((f) => f.jsonName === parameter.name || f.name === parameter.name);
    if (field !== undefined && parameter.schema !== undefined) {
      setConstraints(parameter.schema as Json, schemaConstraints(field));
      excludeEnumValues(parameter.schema as Json, field);
    }
  }
}

/**
 * A repeated enum field whose items the contract refuses some values of (`not_in`, e.g. the UNSPECIFIED zero):
 * its items say so (`not` the excluded REST words), beside the enum's own schema.
 */
function excludeEnumValues(schema: Json, field: DescField): void {
  if (field.fieldKind !== "list" || field.listKind !== "enum") return;
  const rules = fieldRules(field);
  const items = rules?.type.case === "repeated" ? rules.type.value.items?.type : undefined;
  if (items?.case !== "enum" || items.value.notIn.length === 0 || typeof schema.items !== "object") return;
  const words = enumWords(field.enum).byNumber;
  (schema.items as Json).not = { enum: items.value.notIn.map((n) => words.get(n) ?? n) };
}

const CONSTRAINT_KEYWORDS = ["minLength", "maxLength", "pattern", "minimum", "maximum", "minItems", "maxItems"];

/** Replaces a schema's constraint keywords (the plugin's included) with `constraints`. */
function setConstraints(schema: Json, constraints: Record<string, unknown>): void {
  for (const key of CONSTRAINT_KEYWORDS) delete schema[key];
  const { items, ...own } = constraints;
  Object.assign(schema, own);
  if (schema.items !== undefined && typeof schema.items === "object") {
    for (const key of CONSTRAINT_KEYWORDS) delete (schema.items as Json)[key];
    if (items !== undefined) Object.assign(schema.items as Json, items);
  }
  // The plugin appends rules it cannot map to the description (`bytes.const = []`); the keywords say them.
  if (typeof schema.description === "string")
    schema.description = schema.description.replace(/\n[a-z0-9_]+\.[a-z_]+ = .*$/s, "");
}

const UNSIGNED: ReadonlySet<ScalarType> = new Set([
  ScalarType.UINT32,
  ScalarType.UINT64,
  ScalarType.FIXED32,
  ScalarType.FIXED64,
]);

/** Whether a singular field is an unsigned integer. */
function isUnsigned(field: DescField): boolean {
  return field.fieldKind === "scalar" && UNSIGNED.has(field.scalar);
}

/** Whether the REST form renders the field as `null` when absent. */
function hasPresence(field: DescField): boolean {
  return field.fieldKind === "message" || field.oneof !== undefined || field.proto.proto3Optional === true;
}

/** Every schema node: 64-bit integers as integers, `nullable` the OpenAPI 3.1 way. */
function normalizeSchemaNode(node: Json): void {
  if (Array.isArray(node.type) && node.format === "int64" && node.type.includes("integer")) node.type = "integer";
  if (node.nullable === true) {
    delete node.nullable;
    if (typeof node.$ref === "string") {
      const ref = node.$ref;
      delete node.$ref;
      node.anyOf = [{ $ref: ref }, { type: "null" }];
    } else if (typeof node.type === "string") {
      node.type = [node.type, "null"];
    } else if (Array.isArray(node.type) && !node.type.includes("null")) {
      node.type = [...(node.type as string[]), "null"];
    }
  }
}

/** Error responses, one per HTTP status in the catalogue, each listing its codes. */
function errorResponses(): Json {
  const byStatus = new Map<number, string[]>();
  for (const [reason, spec] of Object.entries(ERROR_REASONS)) {
    byStatus.set(spec.httpStatus, [...(byStatus.get(spec.httpStatus) ?? []), reason.toLowerCase()]);
  }
  const out: Json = {};
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: `An error: ${codes.map((c) => `\`${c}\``).join(", ")}.`,
      content: { "application/json": { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } } },
    };
  }
  return out;
}

function errorSchema(): Json {
  return {
    type: "object",
    title: "Error",
    description: "Every REST error. `code` is the error catalogue's reason in lower case; `details` holds its facts.",
    required: ["code", "message", "details"],
    additionalProperties: false,
    properties: {
      code: {
        type: "string",
        description: Object.entries(ERROR_REASONS)
          .map(([reason, spec]) => `\`${reason.toLowerCase()}\` (${spec.httpStatus}): ${spec.description}`)
          .join("\n"),
        enum: Object.keys(ERROR_REASONS).map((r) => r.toLowerCase()),
      },
      message: { type: "string", description: "A short English message saying what to do." },
      details: {
        type: "object",
        additionalProperties: true,
        description:
          "Machine-readable facts: `field` for invalid input, `logs` (an array) for `simulation_failed`, `served` for `unknown_chain`, `retryAfterMs` for retryable errors.",
      },
    },
  };
}

/** The SSE watches, each described from its request's field docs. */
function addWatchEvents(doc: Json, schemas: Record<string, Json>, services: readonly DescService[]): void {
  for (const watch of SSE_WATCHES) {
    const input = watch.method.input;
    const request = schemas[input.typeName]?.properties as Record<string, Json> | undefined;
    const param = (name: string) => ({
      name,
      in: "path",
      required: true,
      description: request?.[name]?.description,
      schema: { type: "string" },
    });
    const served = services.flatMap((s) => s.methods).some((m) => m === watch.method);
    if (!served) continue;
    const parameters = watch.template.variables.map(param);
    applyParameterRules({ parameters }, input);
    (doc.paths as Json)[watch.template.source] = {
      get: {
        tags: [watch.method.parent.name],
        summary: watch.doc.summary,
        description: watch.doc.description,
        operationId: watch.doc.operationId,
        parameters,
        responses: {
          "200": {
            description: watch.doc.data,
            content: {
              "text/event-stream": {
                schema: { type: "string" },
                // Each item is an SSE event (OpenAPI 3.2's reading of itemSchema for text/event-stream): its
                // `data` is the JSON the schema describes.
                itemSchema: {
                  type: "object",
                  required: ["data"],
                  properties: {
                    event: { type: "string" },
                    id: { type: "string" },
                    retry: { type: "integer" },
                    data: {
                      type: "string",
                      contentMediaType: "application/json",
                      contentSchema: { $ref: `#/components/schemas/${watch.doc.dataSchema}` },
                    },
                  },
                },
              },
            },
          },
          ...errorResponses(),
        },
      },
    };
  }
}

function methodOf(services: readonly DescService[], operationId: string) {
  const [service, method] = operationId.split("_");
  return services.find((s) => s.name === service)?.methods.find((m) => m.name === method);
}

/** Every message and enum the services use, by full name. */
function reachableTypes(services: readonly DescService[]): Map<string, DescMessage | DescEnum> {
  const types = new Map<string, DescMessage | DescEnum>();
  const visit = (desc: DescMessage) => {
    if (types.has(desc.typeName)) return;
    types.set(desc.typeName, desc);
    for (const field of desc.fields) {
      if (field.message !== undefined) visit(field.message);
      if (field.enum !== undefined) types.set(field.enum.typeName, field.enum);
    }
  };
  for (const service of services) {
    for (const method of service.methods) {
      visit(method.input);
      visit(method.output);
    }
  }
  return types;
}

/** Drops component schemas no path refers to, directly or through other schemas. */
function trimUnreachable(doc: Json): void {
  const schemas = (doc.components as Json).schemas as Record<string, Json>;
  const reached = new Set<string>();
  const follow = (node: unknown) =>
    walk(node, (n) => {
      const ref = n.$ref;
      if (typeof ref !== "string" || !ref.startsWith("#/components/schemas/")) return;
      const name = ref.slice("#/components/schemas/".length);
      if (reached.has(name)) return;
      reached.add(name);
      follow(schemas[name]);
    });
  follow(doc.paths);
  for (const name of Object.keys(schemas)) if (!reached.has(name)) delete schemas[name];
}

/** Calls `visit` on every object in `node`, depth first. */
function walk(node: unknown, visit: (node: Json) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, visit);
  } else if (typeof node === "object" && node !== null) {
    visit(node as Json);
    for (const value of Object.values(node)) walk(value, visit);
  }
}
