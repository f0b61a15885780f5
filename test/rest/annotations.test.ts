/**
 * The route table comes from annotations alone: a service the transcoder has never seen, built
 * here from a descriptor with a `google.api.http` option, is served on its path with no route
 * written for it. And the contract's own annotations all become routes, each in the OpenAPI document.
 */
import { SSE_WATCHES } from "../../src/rest/sse-watch.ts";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, createFileRegistry, hasOption, setExtension } from "@bufbuild/protobuf";
import type { DescMessage, DescService } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { file_google_api_annotations, http } from "../../gen/google/api/annotations_pb.js";
import { HttpRuleSchema } from "../../gen/google/api/http_pb.js";
import { restRoutesOf } from "../../src/rest/http-rules.ts";
import { createRestHandler, OPENAPI_PATH } from "../../src/rest/rest-handler.ts";
import { API_KEY, startTestServer } from "../server/helpers.ts";
import type { TestServer } from "../server/helpers.ts";
import { SOLGATE_SERVICES } from "../../src/server/routes.ts";

const { OPTIONAL, REPEATED } = FieldDescriptorProto_Label;
const { STRING, UINT64, ENUM, MESSAGE } = FieldDescriptorProto_Type;

/** `test.v1.ThingService.GetThing`, GET /v1/{chain}/things/{id}, returning `thing` bare. */
function thingService(): DescService {
  const options = create(MethodOptionsSchema);
  setExtension(
    options,
    http,
    create(HttpRuleSchema, { pattern: { case: "get", value: "/v1/{chain}/things/{id}" }, responseBody: "thing" }),
  );
  const field = (
    name: string,
    number: number,
    type: FieldDescriptorProto_Type,
    extra: Record<string, unknown> = {},
  ) => ({
    name,
    number,
    type,
    label: OPTIONAL,
    jsonName: name.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase()),
    ...extra,
  });
  const file = create(FileDescriptorProtoSchema, {
    name: "test/v1/thing.proto",
    package: "test.v1",
    syntax: "proto3",
    dependency: ["google/api/annotations.proto"],
    enumType: [
      {
        name: "ThingKind",
        value: [
          { name: "THING_KIND_UNSPECIFIED", number: 0 },
          { name: "THING_KIND_VERY_BIG", number: 1 },
        ],
      },
    ],
    messageType: [
      {
        name: "GetThingRequest",
        field: [
          field("chain", 1, STRING),
          field("id", 2, STRING),
          field("min_size", 3, UINT64),
          field("tags", 4, STRING, { label: REPEATED }),
        ],
      },
      { name: "GetThingResponse", field: [field("thing", 1, MESSAGE, { typeName: ".test.v1.Thing" })] },
      {
        name: "Thing",
        field: [
          field("id", 1, STRING),
          field("size", 2, UINT64),
          field("kind", 3, ENUM, { typeName: ".test.v1.ThingKind" }),
          field("tags", 4, STRING, { label: REPEATED }),
          field("parent", 5, MESSAGE, { typeName: ".test.v1.Thing" }),
        ],
      },
    ],
    service: [
      {
        name: "ThingService",
        method: [
          { name: "GetThing", inputType: ".test.v1.GetThingRequest", outputType: ".test.v1.GetThingResponse", options },
        ],
      },
    ],
  });
  const registry = createFileRegistry(file, (name) =>
    name === "google/api/annotations.proto" ? file_google_api_annotations : undefined,
  );
  return registry.getService("test.v1.ThingService")!;
}

let t: TestServer;
beforeAll(async () => {
  const service = thingService();
  const thing = registryMessage(service, "test.v1.Thing");
  t = await startTestServer({
    routes: (router: ConnectRouter) =>
      router.service(service, {
        getThing: (req: Record<string, unknown>) => ({
          thing: create(thing, { id: req.id, size: (req.minSize as bigint) * 2n, kind: 1, tags: req.tags as string[] }),
        }),
      } as never),
    inProcessHandlers: (context) => [createRestHandler({ ...context, openapi: "{}" }).handle],
  });
});
afterAll(() => t.listening.close({ timeoutMs: 500 }));

function registryMessage(service: DescService, typeName: string): DescMessage {
  const found = service.methods[0].output.fields[0].message;
  if (found?.typeName !== typeName) throw new Error(`no ${typeName}`);
  return found;
}

describe("routes from annotations", () => {
  it("serves an annotated RPC of a service it has never seen, in REST form", async () => {
    const res = await fetch(`${t.url}/v1/anything/things/t1?min_size=21&tags=a&tags=b`, {
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: "t1", size: 42, kind: "very-big", tags: ["a", "b"], parent: null });
  });

  it("makes a route of every annotated RPC of the contract, and the OpenAPI document lists each", () => {
    const services = SOLGATE_SERVICES;
    const methods = services.flatMap((s) => s.methods);
    const routes = restRoutesOf(methods);
    expect(routes.map((r) => r.method)).toEqual(methods.filter((m) => hasOption(m, http)));
    expect(routes.length).toBeGreaterThanOrEqual(8);
    const doc = JSON.parse(readFileSync(OPENAPI_PATH, "utf8")) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    for (const route of routes) {
      const operation = doc.paths[route.template.source]?.[route.httpMethod.toLowerCase()];
      expect(
        operation,
        `${route.httpMethod} ${route.template.source} in gen/openapi (run node src/rest/generate-openapi.ts)`,
      ).toBeDefined();
      expect(operation.operationId).toBe(`${route.method.parent.name}_${route.method.name}`);
    }
    for (const watch of SSE_WATCHES)
      expect(doc.paths[watch.template.source]?.get.operationId).toBe(watch.doc.operationId);
    expect(Object.keys(doc.paths).length).toBe(new Set(routes.map((r) => r.template.source)).size + SSE_WATCHES.length);
  });

  it("describes the REST form in the OpenAPI document, not canonical proto JSON", () => {
    const text = readFileSync(OPENAPI_PATH, "utf8");
    expect(text).not.toMatch(/"TRANSACTION_STATUS_|"nullable"/);
    const doc = JSON.parse(text) as {
      components: { schemas: Record<string, { enum?: string[]; properties?: Record<string, { type?: unknown }> }> };
    };
    expect(doc.components.schemas["solgate.v1.TransactionStatus"].enum).toContain("confirmed");
    expect(doc.components.schemas["solgate.v1.Collection"].properties!.itemCount.type).toBe("integer");
    expect(doc.components.schemas["solgate.rest.Error"]).toBeDefined();
  });
});
