/**
 * The `load` hook (localnet.ts): accounts written after the server answers. While it runs, the clock,
 * blocks and fees are served, and every call that could see an account (reads, scans, sends, DAS) and
 * every PubSub handshake waits; afterwards they are answered from the whole world, never from part of it.
 * The load here is held open by the test, so "still waiting" is a fact, not a race.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import bs58 from "bs58";
import type { Address } from "@solana/kit";
import WebSocket from "ws";
import { DEFAULT_LOCALNET_CONFIG } from "../src/config.ts";
import { startLocalnetInProcess, type Localnet } from "../src/localnet.ts";

const SYSTEM = "11111111111111111111111111111111" as Address;
const key = (byte: number) => new Uint8Array(32).fill(byte);
const FIRST = bs58.encode(key(7)) as Address;
const SECOND = bs58.encode(key(9)) as Address;

let net: Localnet;
let release: () => void = () => {};
let loadRan = false;

async function call(method: string, params: unknown[] = []): Promise<any> {
  const response = await fetch(net.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return response.json();
}

/** Whether `promise` is still pending after `ms`. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const pending = Symbol("pending");
  const first = await Promise.race([promise, new Promise((r) => setTimeout(() => r(pending), ms))]);
  return first === pending;
}

beforeAll(async () => {
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  net = await startLocalnetInProcess(
    { ...DEFAULT_LOCALNET_CONFIG, port: 0, slotMs: 20 },
    {
      async load({ index }) {
        loadRan = true;
        // Half the "world", then a wait the test ends, then the other half.
        index.seedAccount({ address: FIRST, owner: SYSTEM, lamports: 1_000_000n, data: new Uint8Array(0) });
        await held;
        index.seedAccount({ address: SECOND, owner: SYSTEM, lamports: 2_000_000n, data: new Uint8Array(0) });
      },
    },
  );
});

afterAll(async () => {
  release();
  await net?.close();
});

describe("a localnet while its load hook runs", () => {
  // The calls made while loading, answered once it is done (the last test checks what they say).
  let accountRead: Promise<any>;
  let scan: Promise<any>;
  let handshake: Promise<unknown>;
  let arrivedAt: number;

  it("serves the clock, blocks and fees, and says it is not loaded", async () => {
    expect(loadRan).toBe(true);
    const first = (await call("getSlot", [{ commitment: "processed" }])).result as number;
    await new Promise((r) => setTimeout(r, 150));
    const later = (await call("getSlot", [{ commitment: "processed" }])).result as number;
    expect(later).toBeGreaterThan(first);
    expect((await call("getLatestBlockhash")).result.value.blockhash).toEqual(expect.any(String));
    expect((await call("getRecentPrioritizationFees")).result).toEqual(expect.any(Array));
    expect((await call("getBlock", [later - 1, { maxSupportedTransactionVersion: 0 }])).result).not.toBeNull();
    expect((await call("localnet_status")).result.loaded).toBe(false);
  });

  it("holds account reads, scans and PubSub handshakes while loading", async () => {
    arrivedAt = (await call("getSlot", [{ commitment: "processed" }])).result as number;
    accountRead = call("getMultipleAccounts", [[FIRST, SECOND], { encoding: "base64", commitment: "processed" }]);
    scan = call("getProgramAccounts", [SYSTEM, { encoding: "base64", filters: [{ dataSize: 0 }] }]);
    const ws = new WebSocket(net.wsUrl);
    handshake = new Promise((resolve, reject) => {
      ws.once("open", () => {
        ws.close();
        resolve("open");
      });
      ws.once("error", reject);
    });
    // Ten slots and more go by; none of them is answered (the first account is already written).
    expect(await pendingAfter(accountRead, 300)).toBe(true);
    expect(await pendingAfter(scan, 10)).toBe(true);
    expect(await pendingAfter(handshake, 10)).toBe(true);
  });

  it("answers them from the whole world once loaded, and says so", async () => {
    release();
    await net.loaded;
    const read = await accountRead;
    expect(read.result.value.map((a: { lamports: number } | null) => a?.lamports)).toEqual([1_000_000, 2_000_000]);
    const found = (await scan).result.map((a: { pubkey: string }) => a.pubkey);
    expect(found).toEqual(expect.arrayContaining([FIRST, SECOND]));
    expect(await handshake).toBe("open");
    expect((await call("localnet_status")).result.loaded).toBe(true);
    // Its context is the slot it ran at (300 ms and more of 20 ms slots later), not the one it arrived at.
    expect(read.result.context.slot).toBeGreaterThan(arrivedAt + 5);
  });
});
