/**
 * The abuse bench's fuzz cases: from one valid request per RPC (real addresses of the seeded world, a
 * real signed transfer), case `i` of seed `s` is one protocol's request with its bytes, headers, path or
 * query mutated, chosen by a seeded PRNG so that any case can be made again from `(s, i)`.
 */
import { fromJson, toBinary, toJsonString } from "@bufbuild/protobuf";
import type { DescMessage, DescMethod, JsonValue } from "@bufbuild/protobuf";
import { createPrng } from "../../../packages/localnet/src/prng.ts";
import { restRoutesOf } from "../../../src/rest/http-rules.ts";
import { SOLGATE_SERVICES } from "../../../src/server/routes.ts";

/** The five ways in. */
export const PROTOCOLS = ["grpc", "grpc-web", "connect-proto", "connect-json", "rest"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** One request as bytes on the wire. */
export interface FuzzCase {
  index: number;
  protocol: Protocol;
  /** `Service/Method` of the RPC it started from. */
  rpc: string;
  /** What was done to it, for the report. */
  mutation: string;
  /** HTTP/2 (h2c prior knowledge) or HTTP/1.1. */
  http2: boolean;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Uint8Array | undefined;
  /** A server stream: the first message is the answer, then the stream is cancelled. */
  streaming: boolean;
}

/** A valid request of each RPC, as proto JSON, and what the bench knows of the world. */
export interface FuzzWorld {
  apiKey: string;
  /** Proto JSON of a valid request, by `Service/Method`. */
  requests: Map<string, JsonValue>;
}

interface Rpc {
  name: string;
  method: DescMethod;
  valid: JsonValue;
  rest: { httpMethod: string; path: string; query: [string, string][]; body: string | undefined } | undefined;
}

const CONTENT_TYPES = [
  "text/plain",
  "application/grpc+json",
  "application/json; charset=latin1",
  "application/proto",
  "application/grpc",
  "application/grpc-web-text",
  "application/connect+json",
  "multipart/form-data; boundary=x",
  "",
  "application/grpc-web+thrift",
];
const NASTY_VALUES = [
  "0",
  "-1",
  "18446744073709551616",
  "1e400",
  "NaN",
  "%zz",
  "%00",
  "%C3%28",
  "%ED%A0%80",
  "x".repeat(3000),
  "[]",
  "true",
  "",
];

/** Builds the generator of cases over `world`; `seed` fixes every choice. */
export function createFuzzCases(world: FuzzWorld, seed: number) {
  const rpcs: Rpc[] = [];
  const routes = restRoutesOf(SOLGATE_SERVICES.flatMap((s) => s.methods));
  for (const service of SOLGATE_SERVICES) {
    for (const method of service.methods) {
      const name = `${service.typeName}/${method.name}`;
      const valid = world.requests.get(name);
      if (valid === undefined) throw new Error(`no valid request for ${name}`);
      rpcs.push({ name, method, valid, rest: restForm(method, valid, routes) });
    }
  }

  function make(index: number): FuzzCase {
    const random = createPrng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
    const chance = (p: number) => random() < p;
    const rpc = rpcs[Math.floor(index / PROTOCOLS.length) % rpcs.length];
    const drawn = PROTOCOLS[index % PROTOCOLS.length];
    const protocol = drawn === "rest" && rpc.rest === undefined ? "grpc" : drawn;
    const streaming = rpc.method.methodKind === "server_streaming";
    const input = rpc.method.input as DescMessage;
    const notes: string[] = [];
    const headers: Record<string, string> = { authorization: `Bearer ${world.apiKey}` };
    if (chance(0.04)) {
      notes.push("wrong key");
      headers.authorization = pick(["Bearer nope", "Basic eA==", "Bearer ", `Bearer ${world.apiKey}x`]);
    }

    if (protocol === "rest") return restCase();

    // The message: valid proto JSON, then (binary) bytes mutated or (JSON) text mutated.
    const json = protocol === "connect-json";
    let payload: Uint8Array = json
      ? new TextEncoder().encode(toJsonString(input, fromJson(input, rpc.valid)))
      : toBinary(input, fromJson(input, rpc.valid));
    if (chance(0.92)) payload = mutatePayload(payload, input, json);
    else notes.push("valid");

    let path = `/${rpc.name}`;
    if (chance(0.05)) path = mutatePath(path);
    const enveloped = protocol === "grpc" || protocol === "grpc-web" || streaming;
    let body = enveloped ? envelope(payload) : payload;
    if (enveloped && chance(0.2)) body = mutateEnvelope(body);
    switch (protocol) {
      case "grpc":
        headers["content-type"] = "application/grpc";
        headers.te = "trailers";
        if (chance(0.05))
          (headers["grpc-timeout"] = pick(["1000000000H", "-1S", "abc", "1n", "99999999S"])),
            notes.push("grpc-timeout");
        if (chance(0.03)) (headers["grpc-encoding"] = pick(["gzip", "br", "zstd", "x"])), notes.push("grpc-encoding");
        break;
      case "grpc-web":
        headers["content-type"] = pick(["application/grpc-web", "application/grpc-web+proto"]);
        headers["x-grpc-web"] = "1";
        break;
      default:
        headers["content-type"] = streaming
          ? `application/connect+${json ? "json" : "proto"}`
          : `application/${json ? "json" : "proto"}`;
        headers["connect-protocol-version"] = "1";
        if (chance(0.05))
          (headers["connect-timeout-ms"] = pick(["-5", "abc", "99999999999", "0"])), notes.push("connect-timeout-ms");
        if (chance(0.03)) (headers["content-encoding"] = pick(["gzip", "br", "x"])), notes.push("content-encoding");
    }
    if (chance(0.06)) {
      headers["content-type"] = pick(CONTENT_TYPES);
      notes.push(`content-type ${headers["content-type"] || "(empty)"}`);
    }
    // gRPC needs HTTP/2; the others go either way.
    const http2 = protocol === "grpc" || chance(0.3);
    return {
      index,
      protocol,
      rpc: rpc.name,
      mutation: notes.join(", "),
      http2,
      method: "POST",
      path,
      headers,
      body,
      streaming,
    };

    function restCase(): FuzzCase {
      const rest = rpc.rest!;
      let path = rest.path;
      let query = rest.query.map(([k, v]) => [k, v] as [string, string]);
      let body: Uint8Array | undefined = rest.body === undefined ? undefined : new TextEncoder().encode(rest.body);
      const kind = random();
      if (kind < 0.25) {
        // A path segment of garbage.
        const segments = path.split("/");
        const at = 2 + Math.floor(random() * (segments.length - 2));
        segments[at] = pick([...NASTY_VALUES, randomPercent()]);
        path = segments.join("/");
        notes.push(`segment ${at}`);
      } else if (kind < 0.55 || body === undefined) {
        // Query parameters: the request's own with bad values, repeated, or unknown ones.
        const names = [...input.fields.map((f) => f.jsonName), "limit", "cursor", "match", "size", "x"];
        for (let n = 1 + Math.floor(random() * 3); n > 0; n--)
          query.push([pick(names), pick([...NASTY_VALUES, randomPercent()])]);
        if (chance(0.1)) query = Array.from({ length: 200 }, () => ["match", "0:x"]);
        notes.push("query");
      } else {
        body = mutatePayload(body, input, true);
      }
      if (chance(0.05)) path = mutatePath(path);
      const search = query.map(([k, v]) => `${k}=${v}`).join("&");
      if (body !== undefined) headers["content-type"] = chance(0.06) ? pick(CONTENT_TYPES) : "application/json";
      return {
        index,
        protocol,
        rpc: rpc.name,
        mutation: notes.join(", "),
        http2: chance(0.3),
        method: chance(0.03)
          ? pick(["PUT", "DELETE", "PATCH", rest.httpMethod === "GET" ? "POST" : "GET"])
          : rest.httpMethod,
        path: search === "" ? path : `${path}?${search}`,
        headers,
        body,
        streaming,
      };
    }

    function randomPercent(): string {
      return Array.from(
        { length: 1 + Math.floor(random() * 6) },
        () =>
          `%${Math.floor(random() * 256)
            .toString(16)
            .padStart(2, "0")}`,
      ).join("");
    }

    function mutatePath(p: string): string {
      const how = pick(["upper", "slash", "unknown", "encoded", "long", "dot"]);
      notes.push(`path ${how}`);
      switch (how) {
        case "upper":
          return p.toUpperCase();
        case "slash":
          return p.replace("/", "//");
        case "unknown":
          return `${p}X`;
        case "encoded":
          return p.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
        case "long":
          return `${p}/${"a".repeat(8000)}`;
        default:
          return `/..${p}`;
      }
    }

    function mutatePayload(bytes: Uint8Array, message: DescMessage, isJson: boolean): Uint8Array {
      const how = pick(["flip", "insert", "delete", "truncate", "varint", "utf8", "append", "structure"]);
      notes.push(how);
      const out = [...bytes];
      const at = () => Math.floor(random() * (out.length + 1));
      switch (how) {
        case "flip":
          for (let n = 1 + Math.floor(random() * 4); n > 0 && out.length > 0; n--)
            out[Math.min(at(), out.length - 1)] ^= 1 << Math.floor(random() * 8);
          break;
        case "insert":
          out.splice(
            at(),
            0,
            ...Array.from({ length: 1 + Math.floor(random() * 8) }, () => Math.floor(random() * 256)),
          );
          break;
        case "delete": {
          const from = at();
          out.splice(from, 1 + Math.floor(random() * 8));
          break;
        }
        case "truncate":
          out.length = Math.floor(random() * out.length);
          break;
        case "varint":
          // A field (number 1-15, varint) whose value runs on for 11+ bytes, or a 10-byte maximum.
          out.splice(
            at(),
            0,
            ((1 + Math.floor(random() * 15)) << 3) | 0,
            ...Array(chance(0.5) ? 11 : 9).fill(0xff),
            0x01,
          );
          break;
        case "utf8":
          return invalidUtf8(message, isJson) ?? Uint8Array.from(out);
        case "append":
          out.push(...out.slice(0, Math.floor(random() * out.length)));
          break;
        default:
          if (isJson) return new TextEncoder().encode(jsonStructure(message));
          out.splice(at(), 0, 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f); // a string field claiming 4 GB
      }
      return Uint8Array.from(out);
    }

    /** The valid message with a string field's bytes made invalid UTF-8 (a lone 0xff, an overlong form). */
    function invalidUtf8(message: DescMessage, isJson: boolean): Uint8Array | undefined {
      const strings = message.fields.filter((f) => f.fieldKind === "scalar" && f.scalar === 9);
      if (strings.length === 0) return undefined;
      const field = pick(strings);
      const marker = "\u0001\u0002\u0003";
      const base = { ...(rpc.valid as Record<string, JsonValue>), [field.jsonName]: marker };
      const bytes = isJson
        ? new TextEncoder().encode(toJsonString(message, fromJson(message, base)))
        : toBinary(message, fromJson(message, base));
      const i = Buffer.from(bytes).indexOf(Buffer.from(isJson ? "\\u0001\\u0002\\u0003" : marker));
      if (i < 0) return undefined;
      const bad = pick([
        [0xff, 0xfe, 0xfd],
        [0xc0, 0xaf, 0x41],
        [0xed, 0xa0, 0x80],
      ]);
      const out = [...bytes];
      out.splice(i, isJson ? 18 : 3, ...bad);
      return Uint8Array.from(out);
    }

    /** A JSON body of the right fields with values of every wrong kind. */
    function jsonStructure(message: DescMessage): string {
      const base = { ...(rpc.valid as Record<string, unknown>) };
      const field = pick(message.fields);
      const values = [
        "18446744073709551616",
        "-1",
        "1e400",
        '"\\ud800"',
        "[[[[[]]]]]",
        '{"a":{"b":1}}',
        "null",
        '"x"',
        "[18446744073709551616]",
        "true",
      ];
      const text = JSON.stringify({ ...base, [field.jsonName]: "__V__" });
      notes.push(field.jsonName);
      return text.replace('"__V__"', pick(values));
    }

    function mutateEnvelope(bytes: Uint8Array): Uint8Array {
      const how = pick(["length+", "length-", "length-max", "cut-prefix", "flags", "two", "empty"]);
      notes.push(`envelope ${how}`);
      const out = Buffer.from(bytes);
      switch (how) {
        case "length+":
          out.writeUInt32BE(out.readUInt32BE(1) + 1 + Math.floor(random() * 100), 1);
          return out;
        case "length-":
          out.writeUInt32BE(Math.max(0, out.readUInt32BE(1) - 1 - Math.floor(random() * 10)), 1);
          return out;
        case "length-max":
          out.writeUInt32BE(0xffffffff, 1);
          return out;
        case "cut-prefix":
          return out.subarray(0, Math.floor(random() * 5));
        case "flags":
          out[0] = pick([1, 2, 0x80, 0xff, 3]);
          return out;
        case "two":
          return Buffer.concat([out, out]);
        default:
          return new Uint8Array(0);
      }
    }
  }

  return { make, rpcs: rpcs.map((r) => r.name) };
}

/** A gRPC length-prefixed message. */
export function envelope(payload: Uint8Array): Uint8Array {
  const out = Buffer.alloc(5 + payload.length);
  out.writeUInt32BE(payload.length, 1);
  out.set(payload, 5);
  return out;
}

/** The REST request of `method` for the valid request `valid`. */
function restForm(method: DescMethod, valid: JsonValue, routes: ReturnType<typeof restRoutesOf>): Rpc["rest"] {
  const fields = valid as Record<string, JsonValue>;
  if (method.name === "WatchStatus") {
    return {
      httpMethod: "GET",
      path: `/v1/${String(fields.chain)}/transactions/${String(fields.signature)}/events`,
      query: [],
      body: undefined,
    };
  }
  if (method.name === "WatchBundle") {
    return {
      httpMethod: "GET",
      path: `/v1/${String(fields.chain)}/bundles/${String(fields.bundleId)}/events`,
      query: [],
      body: undefined,
    };
  }
  if (method.name === "WatchCollection") {
    const path = `/v1/${String(fields.chain)}/collections/${String(fields.address)}/events`;
    return { httpMethod: "GET", path, query: [], body: undefined };
  }
  if (method.name === "WatchFees") {
    return { httpMethod: "GET", path: `/v1/${String(fields.chain)}/network/fees/stream`, query: [], body: undefined };
  }
  // A stream with no REST or SSE form (WatchLadder): its REST share of cases goes to gRPC.
  if (method.methodKind === "server_streaming" && !routes.some((r) => r.method === method)) return undefined;
  const route = routes.find((r) => r.method === method);
  if (route === undefined) throw new Error(`no REST route for ${method.name}`);
  const bound = new Set<string>();
  const path = route.template.source.replace(/\{([\w.]+)\}/g, (_m, name: string) => {
    bound.add(name);
    const jsonName = method.input.fields.find((f) => f.name === name)?.jsonName ?? name;
    return encodeURIComponent(String(fields[jsonName]));
  });
  const rest = Object.entries(fields).filter(
    ([k]) => !method.input.fields.some((f) => f.jsonName === k && bound.has(f.name)),
  );
  if (route.body === undefined) {
    const query = rest.flatMap(([k, v]) =>
      Array.isArray(v) ? v.map((x) => [k, String(x)] as [string, string]) : [[k, String(v)] as [string, string]],
    );
    return { httpMethod: route.httpMethod, path, query, body: undefined };
  }
  return { httpMethod: route.httpMethod, path, query: [], body: JSON.stringify(Object.fromEntries(rest)) };
}
