/**
 * The headers REST forwards to its in-process calls (src/rest/in-process.ts) are copied from the Node
 * request on first use: whichever way they are first read or changed, they must hold exactly the
 * forwarded ones (key, request id, user agent, and the `rest` label), nothing else of the request.
 */
import { describe, expect, it } from "vitest";
import { forwardedHeaders } from "../../src/rest/in-process.ts";
import { VIA_HEADER } from "../../src/server/interceptors.ts";

const node = {
  authorization: "Bearer k",
  "x-request-id": "r-1",
  "user-agent": "ua/1",
  cookie: "not forwarded",
  "x-forwarded-for": ["a", "b"],
  host: "h",
};
const expected = [
  ["authorization", "Bearer k"],
  ["user-agent", "ua/1"],
  [VIA_HEADER, "rest"],
  ["x-request-id", "r-1"],
].sort(([a], [b]) => a.localeCompare(b));

/** The TypeScript lib here types Headers without its iterator, which Node's has. */
const entriesOf = (h: Headers) => [...(h as unknown as Iterable<[string, string]>)];

describe("forwarded headers", () => {
  const firstUses: [string, (h: Headers) => void][] = [
    ["get", (h) => expect(h.get("x-request-id")).toBe("r-1")],
    ["has", (h) => expect(h.has("cookie")).toBe(false)],
    ["iteration", (h) => expect(entriesOf(h)).toEqual(expected)],
    ["entries", (h) => expect([...(h as unknown as { entries(): Iterable<unknown> }).entries()]).toEqual(expected)],
    [
      "keys",
      (h) => expect([...(h as unknown as { keys(): Iterable<unknown> }).keys()]).toEqual(expected.map(([k]) => k)),
    ],
    ["values", (h) => expect([...(h as unknown as { values(): Iterable<unknown> }).values()]).toHaveLength(4)],
    [
      "forEach",
      (h) => {
        const seen: string[] = [];
        h.forEach((_v, k) => seen.push(k));
        expect(seen).toEqual(expected.map(([k]) => k));
      },
    ],
    ["a copy", (h) => expect(entriesOf(new Headers(h))).toEqual(expected)],
    ["set", (h) => h.set("content-type", "application/proto")],
    ["append", (h) => h.append("x-extra", "1")],
    ["delete", (h) => h.delete("user-agent")],
  ];
  for (const [name, use] of firstUses) {
    it(`hold the forwarded headers when first used by ${name}`, () => {
      const headers = forwardedHeaders(node);
      use(headers);
      const all = Object.fromEntries(entriesOf(headers));
      expect(all.authorization).toBe("Bearer k");
      expect(all["x-request-id"]).toBe("r-1");
      expect(all[VIA_HEADER]).toBe("rest");
      expect(all.cookie).toBeUndefined();
      expect(all.host).toBeUndefined();
      if (name === "set") expect(all["content-type"]).toBe("application/proto");
      if (name === "append") expect(all["x-extra"]).toBe("1");
      expect(all["user-agent"]).toBe(name === "delete" ? undefined : "ua/1");
      expect(headers).toBeInstanceOf(Headers);
    });
  }
});
