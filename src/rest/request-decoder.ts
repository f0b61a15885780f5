/**
 * Builds an RPC's request message from a REST request: path variables, then the JSON body (per the
 * route's `body`), then query parameters for the fields neither binds. Query parameters use the
 * field's JSON or proto name (`programId` or `program_id`, dotted for nested fields); a repeated
 * field takes the parameter repeated (`?match=0:abc&match=32:def`). Unknown parameters, values
 * that do not fit their field, a singular parameter given twice, and `limit=0` are INVALID_PARAMETER.
 */
import type { DescField, DescMessage } from "@bufbuild/protobuf";
import type { RestRoute } from "./http-rules.ts";
import { fieldByName, invalidField, parseFieldValue, parseMessage, parseScalar } from "./rest-json.ts";

type Init = Record<string, unknown>;

/** Decodes the request of `route` into the init shape of its input message (for `create`). */
export function decodeRequest(
  route: RestRoute,
  pathVariables: Readonly<Record<string, string>>,
  query: URLSearchParams,
  body: unknown,
): Init {
  const input = route.method.input;
  let init: Init = {};
  if (route.body === "*") {
    init = parseMessage(input, body ?? {}, "");
  } else if (route.body !== undefined && body !== undefined) {
    init[route.body.localName] = parseFieldValue(route.body, body, route.body.jsonName);
  }

  // Path variables win over the body: the path names the resource.
  for (const fieldPath in pathVariables) {
    const fields = pathFieldsOf(input, fieldPath);
    const leaf = fields[fields.length - 1];
    if (leaf.fieldKind !== "scalar") throw new Error(`path variable ${fieldPath} is not a scalar field`);
    assign(init, fields, parseScalar(leaf.scalar, pathVariables[fieldPath], leaf.jsonName));
  }

  if (query.size === 0) return init;
  const keys = new Set(query.keys());
  if (keys.size > 0 && route.body === "*") {
    throw invalidField([...keys][0], "is not a query parameter of this path (the request goes in the JSON body)");
  }
  for (const key of keys) {
    const fields = fieldsAt(input, key.split("."), false);
    const leaf = fields?.[fields.length - 1];
    const bound =
      leaf !== undefined &&
      (route.template.variables.some((v) => sameField(input, v, fields!)) ||
        (route.body !== undefined && route.body !== "*" && fields![0] === route.body));
    if (fields === undefined || leaf === undefined || bound)
      throw invalidField(key, "is not a query parameter of this path");
    const values = query.getAll(key);
    let value: unknown;
    if (leaf.fieldKind === "list") {
      value = values;
    } else if (values.length > 1) {
      throw invalidField(key, "is given more than once");
    } else {
      value = values[0];
    }
    if (leaf.fieldKind === "map" || (leaf.fieldKind === "list" && leaf.listKind === "message")) {
      throw invalidField(key, "cannot be given as a query parameter");
    }
    const parsed = parseFieldValue(leaf, value, key);
    assign(init, fields, parsed);
  }
  return init;
}

const pathFields = new WeakMap<DescMessage, Map<string, DescField[]>>();

/** The fields a path variable (a dotted proto path its template binds) names; looked up once per message and path. */
function pathFieldsOf(message: DescMessage, fieldPath: string): DescField[] {
  let byPath = pathFields.get(message);
  if (byPath === undefined) pathFields.set(message, (byPath = new Map()));
  let fields = byPath.get(fieldPath);
  if (fields === undefined) {
    fields = fieldsAt(message, fieldPath.split("."), true);
    // The routes' variables are checked against the input at start (http-rules.ts), so this is a bug.
    if (fields === undefined) throw new Error(`path variable ${fieldPath} names no field of ${message.typeName}`);
    byPath.set(fieldPath, fields);
  }
  return fields;
}

/** The fields along a dotted path (JSON or proto names; proto names only when `protoOnly`). */
function fieldsAt(message: DescMessage, names: string[], protoOnly: boolean): DescField[] | undefined {
  const fields: DescField[] = [];
  let current: DescMessage | undefined = message;
  for (const name of names) {
    if (current === undefined) return undefined;
    const field: DescField | undefined = protoOnly
      ? current.fields.find((f) => f.name === name)
      : fieldByName(current, name);
    if (field === undefined || field.oneof !== undefined) return undefined;
    fields.push(field);
    current = field.fieldKind === "message" ? field.message : undefined;
  }
  return fields;
}

function sameField(message: DescMessage, protoPath: string, fields: DescField[]): boolean {
  const bound = fieldsAt(message, protoPath.split("."), true);
  return bound !== undefined && bound.length === fields.length && bound.every((f, i) => f === fields[i]);
}

/** Sets the leaf of `fields` in `init`, creating the messages on the way. */
function assign(init: Init, fields: DescField[], value: unknown): void {
  let target = init;
  for (let i = 0; i < fields.length - 1; i++) {
    target = (target[fields[i].localName] ??= {}) as Init;
  }
  target[fields[fields.length - 1].localName] = value;
}
