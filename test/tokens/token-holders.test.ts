/**
 * The token-holders core over a seeded localnet: every holder of a mint once, in token account
 * address order, each amount and owner what the chain holds, the amounts summing to the supply;
 * its errors.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address } from "@solana/kit";
import bs58 from "bs58";
import { SolgateError } from "../../src/errors.ts";
import { compareAddresses } from "../../src/programs/address-order.ts";
import { TOKEN_PROGRAM } from "../../src/solana/program-ids.ts";
import { createTokenHolders, sortedSnapshot } from "../../src/tokens/token-holders.ts";
import type { TokenHolder, TokenHolders } from "../../src/tokens/token-holders.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";
import { startSeededLocalnet } from "../programs/localnet-world.ts";
import type { SeededLocalnet } from "../programs/localnet-world.ts";

const HOLDERS = 1500;
let world: SeededLocalnet;
let upstream: Upstream;
let holders: TokenHolders;

beforeAll(async () => {
  world = await startSeededLocalnet({ tokenHolders: HOLDERS, smallHolders: 30 });
  upstream = createUpstream({ chain: "localnet", rpcUrls: [world.localnet.rpcUrl] });
  holders = createTokenHolders({ upstream });
});
afterAll(async () => {
  await upstream?.close();
  await world?.stop();
});

async function rejection(promise: Promise<unknown>): Promise<SolgateError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SolgateError) return error;
    throw error;
  }
  throw new Error("did not fail");
}

describe("ListTokenHolders' core", () => {
  it("lists every holder of GATE once, in address order, as the chain holds them, summing to the supply", async () => {
    const gate = world.manifest.fungibleMints[0];
    const direct = await upstream.rpc
      .getProgramAccounts(TOKEN_PROGRAM, {
        encoding: "base64",
        filters: [{ dataSize: 165n }, { memcmp: { offset: 0n, bytes: gate.mint as never, encoding: "base58" } }],
      })
      .send();
    const chain = new Map(
      direct.map(({ pubkey, account }) => {
        const bytes = Buffer.from(account.data[0], "base64");
        return [pubkey as string, bytes.readBigUInt64LE(64)];
      }),
    );
    const owners = new Map(
      direct.map(({ pubkey, account }) => [
        pubkey as string,
        bs58.encode(Buffer.from(account.data[0], "base64").subarray(32, 64)),
      ]),
    );
    const items: TokenHolder[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await holders.list({ mint: gate.mint, limit: 97, cursor });
      expect(page).toMatchObject({ mint: gate.mint, program: "spl-token" });
      expect(page.items.length).toBeLessThanOrEqual(97);
      items.push(...page.items);
      cursor = page.nextCursor ?? undefined;
      expect(++pages).toBeLessThan(100);
    } while (cursor !== undefined);

    const held = [...chain].filter(([, raw]) => raw > 0n);
    expect(items.map((i) => i.tokenAccount).sort()).toEqual(held.map(([a]) => a).sort());
    for (let i = 1; i < items.length; i++)
      expect(compareAddresses(items[i - 1].tokenAccount, items[i].tokenAccount)).toBeLessThan(0);
    let total = 0n;
    for (const item of items) {
      expect(item.amount.raw).toBe(chain.get(item.tokenAccount));
      expect(item.owner).toBe(owners.get(item.tokenAccount));
      expect(item.amount.decimals).toBe(gate.decimals);
      total += item.amount.raw;
    }
    expect(total).toBe(BigInt(gate.supply));
    const sample = items[Math.floor(items.length / 2)];
    const { value } = await upstream.rpc
      .getAccountInfo(address(sample.tokenAccount), { encoding: "jsonParsed" })
      .send();
    expect((value!.data as { parsed: { info: { owner: string } } }).parsed.info.owner).toBe(sample.owner);
  });

  it("lists the empty accounts too with includeZero, each once, in address order", async () => {
    const gate = world.manifest.fungibleMints[0];
    const direct = await upstream.getProgramAccountKeys(TOKEN_PROGRAM, {
      filters: [{ dataSize: 165n }, { memcmp: { offset: 0n, bytes: gate.mint as never, encoding: "base58" } }],
    });
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await holders.list({ mint: gate.mint, limit: 1000, cursor, includeZero: true });
      listed.push(...page.items.map((i) => i.tokenAccount));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(listed).toEqual([...direct].sort(compareAddresses));
    expect(listed.length).toBeGreaterThan(HOLDERS);
  });

  it("refuses another mint's cursor, a non-mint, a missing account and a malformed address", async () => {
    const [gate, bolt] = world.manifest.fungibleMints;
    const first = await holders.list({ mint: gate.mint, limit: 5 });
    expect((await rejection(holders.list({ mint: bolt.mint, cursor: first.nextCursor! }))).details.field).toBe(
      "cursor",
    );
    expect((await rejection(holders.list({ mint: world.manifest.demoWallet.address }))).reason).toBe("NOT_FOUND");
    expect((await rejection(holders.list({ mint: world.manifest.demoWallet.tokenAccounts[0] }))).reason).toBe(
      "NOT_FOUND",
    );
    expect((await rejection(holders.list({ mint: "11111111111111111111111111111112" }))).reason).toBe("NOT_FOUND");
    expect((await rejection(holders.list({ mint: "0OIl" }))).reason).toBe("INVALID_ADDRESS");
    expect((await rejection(holders.list({ mint: gate.mint, limit: 1001 }))).details.field).toBe("limit");
  });
});

describe("a holder scan's snapshot", () => {
  it("sorts a scan a node answered out of order, each slice with its account, and drops short slices", () => {
    const n = 500;
    const keys = Array.from({ length: n }, () => bs58.encode(randomBytes(32)));
    const data = randomBytes(n * 40);
    const lengths = new Uint32Array(n).fill(40);
    lengths[7] = 0;
    lengths[300] = 39;
    const snapshot = sortedSnapshot(keys, data, lengths);
    const expected = keys.map((key, i) => ({ key, i })).filter(({ i }) => lengths[i] === 40);
    expected.sort((a, b) => compareAddresses(a.key, b.key));
    expect(snapshot.length).toBe(n - 2);
    expect(snapshot.accounts).toEqual(expected.map((e) => e.key));
    expected.forEach(({ i }, at) => {
      expect(snapshot.slices.subarray(at * 40, at * 40 + 40).equals(data.subarray(i * 40, i * 40 + 40))).toBe(true);
    });
    // In order and whole, as nodes answer: the scan's own arrays are kept.
    const sortedKeys = [...snapshot.accounts];
    const kept = sortedSnapshot(sortedKeys, snapshot.slices, new Uint32Array(sortedKeys.length).fill(40));
    expect(kept.accounts).toBe(sortedKeys);
    expect(kept.slices).toBe(snapshot.slices);
  });
});
