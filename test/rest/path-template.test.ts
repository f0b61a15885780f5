/** google.api.http path templates: matching, decoding, and the forms refused at start. */
import { describe, expect, it } from "vitest";
import { compilePathTemplate, PathDecodeError } from "../../src/rest/path-template.ts";

describe("compilePathTemplate", () => {
  const t = compilePathTemplate("/v1/{chain}/collections/{address}/nfts");

  it("binds variables, percent-decoded", () => {
    expect(t.variables).toEqual(["chain", "address"]);
    expect(t.match("/v1/localnet/collections/abc/nfts")).toEqual({ chain: "localnet", address: "abc" });
    expect(t.match("/v1/a%20b/collections/%C3%A9/nfts")).toEqual({ chain: "a b", address: "é" });
  });

  it("does not match other paths, empty segments or trailing slashes", () => {
    for (const path of [
      "/v1/localnet/collections/abc",
      "/v1/localnet/collections/abc/nfts/",
      "/v1//collections/abc/nfts",
      "/v2/l/collections/a/nfts",
      "v1/l/collections/a/nfts",
    ]) {
      expect(t.match(path), path).toBeUndefined();
    }
  });

  it("throws PathDecodeError for a bad escape only when the path fits", () => {
    expect(() => t.match("/v1/localnet/collections/%E0%A4%A/nfts")).toThrow(PathDecodeError);
    expect(t.match("/v1/localnet/other/%E0%A4%A/nfts")).toBeUndefined();
  });

  it("supports {field=*}, nested fields, wildcards and a verb", () => {
    const v = compilePathTemplate("/v1/{a.b=*}/*/x:run");
    expect(v.variables).toEqual(["a.b"]);
    expect(v.match("/v1/q/anything/x:run")).toEqual({ "a.b": "q" });
    expect(v.match("/v1/q/anything/x")).toBeUndefined();
  });

  it("counts the segments of the paths it matches (the router tries only templates of a path's count)", () => {
    const cases: [string, string][] = [
      ["/v1/{chain}/collections/{address}/nfts", "/v1/localnet/collections/abc/nfts"],
      ["/v1/{a.b=*}/*/x:run", "/v1/q/anything/x:run"],
      ["/v1/{chain}/network/fees", "/v1/localnet/network/fees"],
      ["/v1/{chain}/network/fees:estimate", "/v1/localnet/network/fees:estimate"],
    ];
    for (const [source, path] of cases) {
      const template = compilePathTemplate(source);
      expect(template.match(path), path).toBeDefined();
      expect(template.segmentCount, source).toBe(path.slice(1).split("/").length);
    }
  });

  it("refuses templates it cannot serve", () => {
    for (const bad of ["v1/x", "/v1/**", "/v1/{name=things/*}", "/v1/{a}/{a}", "/v1/x{a}", "/v1//x", "/v1/{1a}"]) {
      expect(() => compilePathTemplate(bad), bad).toThrow(/unsupported google.api.http path template/);
    }
  });
});
