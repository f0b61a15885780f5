import { afterEach, describe, expect, it } from "vitest";
import { isSolanaError, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS } from "@solana/kit";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";
import { SolgateError } from "../../src/errors.ts";
import { fixtureText, startFaultServer } from "./fault-server.ts";
import type { FaultServer } from "./fault-server.ts";

const TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const recorded = JSON.parse(fixtureText("getProgramAccounts.json")) as { result: { value: { pubkey: string }[] } };
const recordedKeys = recorded.result.value.map((v) => v.pubkey);

let node: FaultServer | undefined;
let upstream: Upstream | undefined;
afterEach(async () => {
  await upstream?.close();
  await node?.close();
});

async function setup(...args: Parameters<typeof startFaultServer>) {
  node = await startFaultServer(...args);
  upstream = createUpstream({ chain: "test", rpcUrls: [node.url], baseDelayMs: 10, maxRetries: 2 });
  return { node, upstream };
}

describe("streamed key scans (getProgramAccountKeys)", () => {
  it("extracts every pubkey of a recorded getProgramAccounts answer, split into tiny chunks", async () => {
    expect(recordedKeys.length).toBeGreaterThan(10);
    for (const chunkBytes of [undefined, 7, 61]) {
      const { node, upstream } = await setup({ kind: "fixture", name: "getProgramAccounts.json", chunkBytes });
      expect(await upstream.getProgramAccountKeys(TOKEN, { filters: [{ dataSize: 165n }] })).toEqual(recordedKeys);
      await upstream.close();
      await node.close();
    }
  });

  it("sends the filters, an empty data slice and the commitment as the node expects them", async () => {
    const { node, upstream } = await setup({ kind: "fixture", name: "getProgramAccounts.json" });
    const bodies: string[] = [];
    node.onBody = (b) => bodies.push(b);
    await upstream.getProgramAccountKeys(TOKEN, {
      filters: [
        { dataSize: 165n },
        { memcmp: { offset: 32n, bytes: "vines1vzrYbzLMRdu58ou5XTby4qAqVRLmqo36NKPTg", encoding: "base58" } },
      ],
      limit: 1000,
    });
    const sent = JSON.parse(bodies[0]);
    expect(sent).toMatchObject({ jsonrpc: "2.0", method: "getProgramAccounts" });
    expect(sent.params).toEqual([
      TOKEN,
      {
        encoding: "base64",
        dataSlice: { offset: 0, length: 0 },
        commitment: "confirmed",
        filters: [
          { dataSize: 165 },
          { memcmp: { offset: 32, bytes: "vines1vzrYbzLMRdu58ou5XTby4qAqVRLmqo36NKPTg", encoding: "base58" } },
        ],
      },
    ]);
    expect(Object.keys(sent)).not.toContain("__solgateKeyLimit");
  });

  it("stops reading past the limit, returning limit + 1 keys", async () => {
    const { upstream } = await setup({ kind: "fixture", name: "getProgramAccounts.json", chunkBytes: 512 });
    expect(await upstream.getProgramAccountKeys(TOKEN, { limit: 3 })).toEqual(recordedKeys.slice(0, 4));
  });

  it("throws the node's JSON-RPC error as a kit SolanaError", async () => {
    const { upstream } = await setup({ kind: "fixture", name: "error_-32602_invalid_param_WrongSize.json" });
    const e = await upstream.getProgramAccountKeys(TOKEN).catch((x: unknown) => x);
    expect(isSolanaError(e, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS)).toBe(true);
  });

  it("does not repeat a scan that timed out", async () => {
    node = await startFaultServer({ kind: "stall" });
    upstream = createUpstream({ chain: "test", rpcUrls: [node.url], timeoutMs: 150, maxRetries: 3 });
    const e = await upstream.getProgramAccountKeys(TOKEN).catch((x: unknown) => x);
    expect((e as SolgateError).reason).toBe("UPSTREAM_UNAVAILABLE");
    expect((e as SolgateError).details.failure).toBe("timeout");
    expect(node.seen).toHaveLength(1);
  });

  it("retries like any other call, then maps the failure", async () => {
    const { node, upstream } = await setup({ kind: "fixture", name: "getProgramAccounts.json" });
    node.queue.push({ kind: "status", status: 503 }, { kind: "reset" });
    expect(await upstream.getProgramAccountKeys(TOKEN)).toEqual(recordedKeys);
    expect(node.seen).toHaveLength(3);
    node.fallback = { kind: "status", status: 429, headers: { "retry-after": "0" } };
    const e = await upstream.getProgramAccountKeys(TOKEN).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SolgateError);
    expect((e as SolgateError).reason).toBe("RATE_LIMITED");
  });
});
