/**
 * The PubSub endpoint's framing and dispatch (src/rpc/pubsub.ts) on a launched localnet: JSON-RPC
 * errors for unparsable and malformed messages, unknown methods, params that are not a list, binary
 * frames, and ids that count up across families.
 */
import WebSocket from "ws";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestLocalnet, type TestLocalnet } from "../helpers.ts";
import { connect, type WsClient } from "../pubsub/ws-client.ts";

let net: TestLocalnet;
let ws: WsClient;
beforeAll(async () => {
  net = await startTestLocalnet({ slotMs: 50 });
  ws = await connect(net.handle.wsUrl);
});
afterAll(async () => {
  ws?.close();
  await net?.stop();
});

/** Sends raw text on a fresh socket; resolves to the first message (or the close code). */
async function raw(text: string | Buffer): Promise<unknown> {
  const socket = new WebSocket(net.handle.wsUrl);
  await new Promise((resolve) => socket.once("open", resolve));
  const answer = new Promise((resolve) => {
    socket.once("message", (data) => resolve(JSON.parse(data.toString())));
    socket.once("close", (code) => resolve({ closed: code }));
  });
  socket.send(text);
  const result = await answer;
  socket.close();
  return result;
}

it("answers malformed messages as JSON-RPC does", async () => {
  expect(await raw("{not json")).toEqual({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null });
  expect(await raw(JSON.stringify({ jsonrpc: "2.0", id: 3 }))).toEqual({
    jsonrpc: "2.0",
    error: { code: -32600, message: "Invalid request" },
    id: null,
  });
  expect(await raw(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "slotSubscribe", params: { a: 1 } }))).toEqual({
    jsonrpc: "2.0",
    error: { code: -32602, message: "Invalid params: invalid type: map, expected a tuple." },
    id: 4,
  });
  expect(await raw(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "getSlot" }))).toEqual({
    jsonrpc: "2.0",
    error: { code: -32601, message: "Method not found" },
    id: 5,
  });
  expect(await raw(Buffer.from([1, 2, 3]))).toEqual({ closed: 1003 });
});

it("gives every subscription of every family its own id, and ends each with its own unsubscribe", async () => {
  const ids = [
    await ws.subscribe("slotSubscribe"),
    await ws.subscribe("rootSubscribe"),
    await ws.subscribe("slotsUpdatesSubscribe"),
    await ws.subscribe("logsSubscribe", ["all"]),
    await ws.subscribe("blockSubscribe", ["all"]),
    await ws.subscribe("accountSubscribe", ["11111111111111111111111111111111"]),
    await ws.subscribe("programSubscribe", ["11111111111111111111111111111111"]),
  ];
  expect(new Set(ids).size).toBe(ids.length);
  const methods = ["slot", "root", "slotsUpdates", "logs", "block", "account", "program"].map((f) => `${f}Unsubscribe`);
  for (const [i, id] of ids.entries()) expect(await ws.request(methods[i]!, [id])).toMatchObject({ result: true });
  for (const [i, id] of ids.entries()) {
    expect((await ws.request(methods[i]!, [id])).error).toEqual({ code: -32602, message: "Invalid subscription id." });
  }
  expect((await ws.request("rootUnsubscribe", [])).error).toEqual({
    code: -32602,
    message: "`params` should have at least 1 argument(s)",
  });
});
