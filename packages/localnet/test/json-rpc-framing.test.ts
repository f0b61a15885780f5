/**
 * JSON-RPC 2.0 framing as an agave node answers it: parse errors, invalid requests, unknown
 * methods, parameter errors, batches and notifications, body limits, /health, and u64 values
 * beyond 2^53 kept exact in both directions.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { generateKeyPairSigner } from "@solana/kit";
import { startTestLocalnet, waitFor, type TestLocalnet } from "./helpers.ts";

let net: TestLocalnet;
beforeAll(async () => {
  net = await startTestLocalnet();
});
afterAll(async () => {
  await net?.stop();
});

it("answers unparsable bodies with -32700 and malformed calls with -32600", async () => {
  expect((await net.post("{", { raw: true })).json).toEqual({
    jsonrpc: "2.0",
    error: { code: -32700, message: "Parse error" },
    id: null,
  });
  for (const body of [
    5,
    "x",
    null,
    {},
    { jsonrpc: "1.0", id: 1, method: "getSlot" },
    { jsonrpc: "2.0", id: 1, method: 7 },
    { jsonrpc: "2.0", id: {}, method: "getSlot" },
  ]) {
    expect((await net.post(body)).json).toEqual({
      jsonrpc: "2.0",
      error: { code: -32600, message: "Invalid request" },
      id: null,
    });
  }
  expect((await net.post([])).json).toEqual({
    jsonrpc: "2.0",
    error: { code: -32600, message: "Invalid request" },
    id: null,
  });
});

it("answers unknown methods with -32601 and bad parameters with -32602, keeping the id", async () => {
  expect((await net.post({ jsonrpc: "2.0", id: "abc", method: "getNothing" })).json).toEqual({
    jsonrpc: "2.0",
    error: { code: -32601, message: "Method not found" },
    id: "abc",
  });
  expect((await net.call("getTransaction")).error).toEqual({
    code: -32602,
    message: "`params` should have at least 1 argument(s)",
  });
  expect((await net.call("getSlot", ["finalized"])).error).toEqual({
    code: -32602,
    message: 'Invalid params: invalid type: string "finalized", expected struct config.',
  });
  expect((await net.call("getSlot", [{ commitment: "recent" }])).error).toEqual({
    code: -32602,
    message: "Invalid params: unknown variant `recent`, expected one of `processed`, `confirmed`, `finalized`.",
  });
  expect((await net.call("getBlock", [-1])).error).toEqual({
    code: -32602,
    message: "Invalid params: invalid value: integer `-1`, expected u64.",
  });
  expect((await net.call("sendTransaction", ["AQID", { encoding: "base64" }])).error.message).toMatch(
    /^failed to deserialize solana_transaction::versioned::VersionedTransaction: /,
  );
  expect((await net.call("sendTransaction", ["AQ=I", { encoding: "base64" }])).error.message).toMatch(
    /^invalid base64 encoding: /,
  );
  expect((await net.call("sendTransaction", ["AQID", { encoding: "json" }])).error.message).toBe(
    "unsupported encoding: json. Supported encodings: base58, base64",
  );
  expect((await net.call("getSignatureStatuses", [["abc"]])).error).toEqual({
    code: -32602,
    message: "Invalid param: WrongSize",
  });
  expect(
    (await net.post({ jsonrpc: "2.0", id: 1, method: "getSlot", params: { commitment: "processed" } })).json.error.code,
  ).toBe(-32602);
});

it("runs batches in order, omitting notifications", async () => {
  const { json } = await net.post([
    { jsonrpc: "2.0", id: 1, method: "getHealth" },
    { jsonrpc: "2.0", method: "getHealth" },
    { jsonrpc: "2.0", id: 2, method: "nope" },
    7,
    { jsonrpc: "2.0", id: 3, method: "getVersion" },
  ]);
  expect(json.map((r: any) => r.id)).toEqual([1, 2, null, 3]);
  expect(json[0].result).toBe("ok");
  expect(json[1].error.code).toBe(-32601);
  expect(json[2].error.code).toBe(-32600);
  const notificationsOnly = await net.post([{ jsonrpc: "2.0", method: "getHealth" }]);
  expect(notificationsOnly.status).toBe(200);
  expect(notificationsOnly.text).toBe("");
});

it("refuses bodies over 50 kB and serves GET /health", async () => {
  const big = await net.post({ jsonrpc: "2.0", id: 1, method: "getSlot", params: ["x".repeat(60_000)] });
  expect(big.status).toBe(413);
  const health = await fetch(`${net.handle.rpcUrl}/health`);
  expect(await health.text()).toBe("ok");
});

it("keeps u64 values beyond 2^53 exact in requests and responses", async () => {
  const who = await generateKeyPairSigner();
  const lamports = 2n ** 58n + 12_345n; // not representable as a double
  const sent = await net.post(
    `{"jsonrpc":"2.0","id":1,"method":"requestAirdrop","params":["${who.address}",${lamports}]}`,
    { raw: true },
  );
  const signature = sent.json.result;
  await waitFor("airdrop", async () => (await net.call("getSignatureStatuses", [[signature]])).result.value[0]);
  const { text } = await net.post({
    jsonrpc: "2.0",
    id: 2,
    method: "getBalance",
    params: [who.address, { commitment: "processed" }],
  });
  expect(text).toContain(`"value":${lamports}`);
});
