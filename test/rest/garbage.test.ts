/**
 * Client input never makes a 500: every REST route of the contract, on the real gateway and its
 * localnet, with garbage path segments, query parameters and bodies (every field of the request
 * given values of every wrong kind, integers past 2^64 included). Each answer is a 4xx JSON error
 * with a code, or a 2xx; a wrong key is 401 whatever the body.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DescMessage } from "@bufbuild/protobuf";
import { SOLGATE_SERVICES } from "../../src/server/routes.ts";
import { restRoutesOf } from "../../src/rest/http-rules.ts";
import { startRestGateway } from "./rest-gateway.ts";
import type { RestGateway } from "./rest-gateway.ts";

// Every service of the contract (accounts, wallets and token holders included).
const routes = restRoutesOf(SOLGATE_SERVICES.flatMap((s) => s.methods));

const SEGMENTS = ["x", "0", "%00", "%E2%82", "%F0%9F%92%A5", "a".repeat(400), "11111111111111111111111111111111"];
const VALUES = [
  "18446744073709551616",
  "-18446744073709551617",
  "1e400",
  "-1",
  "1.5",
  '"x"',
  '"18446744073709551616"',
  "[18446744073709551616]",
  '{"a":[18446744073709551616]}',
  "true",
  "[]",
  "{}",
  '""',
];
const BODIES = [
  "{",
  "[1,2]",
  '"x"',
  "null",
  "18446744073709551616",
  '{"unknown":1}',
  "[".repeat(5000) + "]".repeat(5000),
  `${'{"a":'.repeat(200)}1${"}".repeat(200)}`,
];

/** Every top-level field of `message` given each wrong value in turn. */
function fieldBodies(message: DescMessage): string[] {
  return message.fields.flatMap((f) => VALUES.map((v) => `{"${f.jsonName}":${v}}`));
}

let t: RestGateway;
beforeAll(async () => {
  t = await startRestGateway();
}, 240_000);
afterAll(() => t?.stop());

async function expectClientError(
  method: string,
  url: string,
  body: string | undefined,
  headers: Record<string, string> = t.auth,
): Promise<number> {
  const res = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body,
  });
  const text = await res.text();
  expect(
    res.status,
    `${method} ${url} ${body?.slice(0, 80) ?? ""} -> ${res.status} ${text.slice(0, 200)}`,
  ).toBeLessThan(500);
  if (res.status >= 400) expect((JSON.parse(text) as { code?: unknown }).code, text).toEqual(expect.any(String));
  return res.status;
}

describe("garbage on every REST route", () => {
  for (const route of routes) {
    const { httpMethod, template } = route;
    const withVars = (value: string) =>
      template.source.replace(/\{(\w+)\}/g, (_m, name: string) => (name === "chain" ? "localnet" : value));
    const fill = (value: string) => `${t.url}${withVars(value)}`;

    it(`${httpMethod} ${template.source}`, async () => {
      const ok = fill("11111111111111111111111111111111");
      expect(
        await expectClientError(
          httpMethod,
          ok,
          httpMethod === "GET" ? undefined : '{"confirm":[18446744073709551616]}',
          {},
        ),
      ).toBe(401);
      for (const segment of SEGMENTS)
        await expectClientError(httpMethod, fill(segment), httpMethod === "GET" ? undefined : "{}");
      await expectClientError(
        httpMethod,
        `${t.url}${template.source.replace("{chain}", "%ZZ")}`,
        httpMethod === "GET" ? undefined : "{}",
      );
      if (httpMethod === "GET") {
        for (const field of route.method.input.fields) {
          for (const v of ["18446744073709551616", "-1", "1e400", "x", "", "%00", "%E2%82"]) {
            await expectClientError("GET", `${ok}?${field.jsonName}=${v}`, undefined);
          }
        }
      } else {
        for (const body of [...BODIES, ...fieldBodies(route.method.input)])
          await expectClientError(httpMethod, ok, body);
      }
    }, 120_000);
  }
});
