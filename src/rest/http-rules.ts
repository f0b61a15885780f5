/**
 * The REST route table, read from the contract: every unary RPC with a `google.api.http` option
 * (and its `additional_bindings`) becomes a route. Nothing here names a Solgate service, so an RPC
 * annotated in proto/ gains its REST path when gen/ is regenerated, with no hand-written route.
 */
import { getOption, hasOption } from "@bufbuild/protobuf";
import type { DescField, DescMessage, DescMethod } from "@bufbuild/protobuf";
import { http } from "../../gen/google/api/annotations_pb.js";
import type { HttpRule } from "../../gen/google/api/http_pb.js";
import { compilePathTemplate } from "./path-template.ts";
import type { PathTemplate } from "./path-template.ts";

/** One REST route: an HTTP method and path template bound to an RPC. */
export interface RestRoute {
  /** `GET`, `POST`, `PUT`, `DELETE`, `PATCH`, or a custom verb's method. */
  readonly httpMethod: string;
  readonly template: PathTemplate;
  /** The RPC (always unary). */
  readonly method: DescMethod & { methodKind: "unary" };
  /** Where the JSON body goes: `"*"` the whole request, a field name that field, undefined no body. */
  readonly body: "*" | DescField | undefined;
  /** The response field returned bare (`response_body`), or undefined for the whole response. */
  readonly responseBody: DescField | undefined;
}

/** Builds the routes of `methods`; throws at start for an annotation the transcoder cannot serve. */
export function restRoutesOf(methods: Iterable<DescMethod>): RestRoute[] {
  const routes: RestRoute[] = [];
  const seen = new Set<string>();
  for (const method of methods) {
    if (!hasOption(method, http)) continue;
    const rule = getOption(method, http);
    for (const binding of [rule, ...rule.additionalBindings]) {
      const route = routeOf(method, binding);
      const key = `${route.httpMethod} ${route.template.source}`;
      if (seen.has(key)) throw new Error(`${key} is bound twice (again by ${method.parent.typeName}.${method.name})`);
      seen.add(key);
      routes.push(route);
    }
  }
  return routes;
}

function routeOf(method: DescMethod, rule: HttpRule): RestRoute {
  const where = `${method.parent.typeName}.${method.name}`;
  const fail = (why: string): never => {
    throw new Error(`google.api.http on ${where}: ${why}`);
  };
  if (method.methodKind !== "unary") fail(`a ${method.methodKind} RPC cannot be transcoded (only unary RPCs are)`);
  let httpMethod: string;
  let path: string;
  switch (rule.pattern.case) {
    case "get":
    case "put":
    case "post":
    case "delete":
    case "patch":
      httpMethod = rule.pattern.case.toUpperCase();
      path = rule.pattern.value;
      break;
    case "custom":
      httpMethod = rule.pattern.value.kind.toUpperCase();
      path = rule.pattern.value.path;
      break;
    default:
      return fail("no HTTP method and path");
  }
  const template = compilePathTemplate(path);
  for (const variable of template.variables) {
    const field = fieldAt(method.input, variable);
    if (field === undefined || field.fieldKind !== "scalar")
      fail(`path variable {${variable}} is not a singular scalar field`);
  }
  let body: RestRoute["body"];
  if (rule.body === "*") body = "*";
  else if (rule.body !== "") {
    body = method.input.fields.find((f) => f.name === rule.body) ?? fail(`body field ${rule.body} does not exist`);
  }
  if (body !== undefined && httpMethod === "GET") fail("a GET route cannot take a body");
  const responseBody =
    rule.responseBody === ""
      ? undefined
      : (method.output.fields.find((f) => f.name === rule.responseBody) ??
        fail(`response_body ${rule.responseBody} does not exist`));
  return { httpMethod, template, method: method as RestRoute["method"], body, responseBody };
}

/** The field at a dotted path of proto names (`a.b`), through singular message fields. */
export function fieldAt(message: DescMessage, path: string): DescField | undefined {
  const names = path.split(".");
  let current: DescMessage | undefined = message;
  let field: DescField | undefined;
  for (const name of names) {
    if (current === undefined) return undefined;
    field = current.fields.find((f) => f.name === name);
    if (field === undefined) return undefined;
    current = field.fieldKind === "message" ? field.message : undefined;
  }
  return field;
}
