import { describe, expect, it } from "vitest";
import { jitoEndpointOf } from "../../src/solana/jito-endpoint.ts";

describe("jitoEndpointOf", () => {
  it("takes the host, the API root or an endpoint, with or without a trailing slash", () => {
    for (const url of [
      "https://mainnet.block-engine.jito.wtf",
      "https://mainnet.block-engine.jito.wtf/",
      "https://mainnet.block-engine.jito.wtf/api/v1",
      "https://mainnet.block-engine.jito.wtf/api/v1/",
      "https://mainnet.block-engine.jito.wtf/api/v1/transactions",
      "https://mainnet.block-engine.jito.wtf/api/v1/bundles",
    ])
      expect(jitoEndpointOf(url)).toEqual({ api: "https://mainnet.block-engine.jito.wtf/api/v1" });
  });

  it("takes the uuid from the query as auth and drops it from the URL; an auth given apart wins", () => {
    expect(jitoEndpointOf("http://127.0.0.1:1234/api/v1/transactions?uuid=abc")).toEqual({
      api: "http://127.0.0.1:1234/api/v1",
      auth: "abc",
    });
    expect(jitoEndpointOf("http://127.0.0.1:1234?uuid=abc", "given")).toEqual({
      api: "http://127.0.0.1:1234/api/v1",
      auth: "given",
    });
  });
});
