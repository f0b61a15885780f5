import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address } from "@solana/kit";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";
import { createProgramAccounts } from "../../src/programs/program-accounts.ts";
import type { ProgramAccountItem, ProgramAccountsQuery } from "../../src/programs/program-accounts.ts";
import { compareAddresses } from "../../src/programs/address-order.ts";
import { tokenAccountInfo } from "../../src/programs/account-mapping.ts";
import { TOKEN_PROGRAM as TOKEN_PROGRAM_ID } from "../../src/solana/program-ids.ts";
import { SolgateError } from "../../src/errors.ts";
import { startSeededLocalnet } from "./localnet-world.ts";
import type { SeededLocalnet } from "./localnet-world.ts";

const tokenInfo = (item: ProgramAccountItem) => tokenAccountInfo(item.data)!;

const HOLDERS = 1200;
let world: SeededLocalnet;
let upstream: Upstream;
let gate: { mint: string; decimals: number };
let bolt: { mint: string; decimals: number };

beforeAll(async () => {
  world = await startSeededLocalnet({ tokenHolders: HOLDERS, smallHolders: 40 });
  upstream = createUpstream({ chain: "localnet", rpcUrls: [world.localnet.rpcUrl] });
  [gate, bolt] = world.manifest.fungibleMints;
});
afterAll(async () => {
  await upstream?.close();
  await world?.stop();
});

async function listAll(query: Omit<ProgramAccountsQuery, "cursor">, programs = createProgramAccounts({ upstream })) {
  const items: ProgramAccountItem[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await programs.list({ ...query, cursor });
    expect(page.programId).toBe(query.programId);
    expect(page.items.length).toBeLessThanOrEqual(query.limit ?? 100);
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
    pages++;
    // A broken order makes a cursor loop forever; fail instead.
    expect(pages).toBeLessThan(1000);
  } while (cursor !== undefined);
  return { items, pages };
}

async function rejection(promise: Promise<unknown>): Promise<SolgateError> {
  const e = await promise.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(SolgateError);
  return e as SolgateError;
}

describe("program accounts against the real localnet", () => {
  it("a token program match the node refuses (a 27-byte mint, as agave 4.4 refuses it) is INVALID_PARAMETER", async () => {
    const e = await rejection(
      createProgramAccounts({ upstream }).list({
        programId: TOKEN_PROGRAM_ID,
        size: 165n,
        match: [`0:${gate.mint.slice(0, 37)}`],
        limit: 3,
      } as ProgramAccountsQuery),
    );
    expect([e.reason, e.details.field]).toEqual(["INVALID_PARAMETER", "match"]);
    expect(e.message).toMatch(/Incorrect byte length \d+ for SPL token mint filter/);
  });

  it("pages through every holder of a mint exactly once, in address order", async () => {
    // The node's own answer, unpaged, is the reference.
    const direct = await upstream.rpc
      .getProgramAccounts(address(TOKEN_PROGRAM_ID), {
        encoding: "base64",
        dataSlice: { offset: 0, length: 0 },
        filters: [{ dataSize: 165n }, { memcmp: { offset: 0n, bytes: gate.mint as never, encoding: "base58" } }],
      })
      .send();
    expect(direct.length).toBeGreaterThanOrEqual(HOLDERS);

    const { items, pages } = await listAll({
      programId: TOKEN_PROGRAM_ID,
      size: 165n,
      match: [`0:${gate.mint}`],
      limit: 97,
    });
    expect(pages).toBe(Math.ceil(direct.length / 97));
    const addresses = items.map((i) => i.address);
    expect(new Set(addresses).size).toBe(addresses.length);
    expect(new Set(addresses)).toEqual(new Set(direct.map((d) => d.pubkey)));
    for (let i = 1; i < addresses.length; i++) expect(compareAddresses(addresses[i - 1], addresses[i])).toBeLessThan(0);

    let total = 0n;
    for (const item of items) {
      expect(item.space).toBe(165n);
      expect(item.data.format).toBe("parsed");
      if (item.data.format !== "parsed") continue;
      expect(item.data.program).toBe("spl-token");
      expect(tokenInfo(item).mint).toBe(gate.mint);
      expect(tokenInfo(item).tokenAmount.decimals).toBe(gate.decimals);
      expect(item.sol).toBeCloseTo(Number(item.lamports) / 1e9, 12);
      total += tokenInfo(item).tokenAmount.raw;
    }
    // The seeded holders hold the whole supply (the demo wallet included).
    expect(total).toBe(BigInt(world.manifest.fungibleMints[0].supply));
  });

  it("returns exactly one owner's token accounts for an owner match", async () => {
    const first = await createProgramAccounts({ upstream }).list({
      programId: TOKEN_PROGRAM_ID,
      match: [`0:${bolt.mint}`],
      limit: 5,
    });
    const owner = first.items[3].data.format === "parsed" ? tokenInfo(first.items[3]).owner : "";
    const byOwner = await upstream.rpc
      .getTokenAccountsByOwner(address(owner), { programId: address(TOKEN_PROGRAM_ID) }, { encoding: "base64" })
      .send();
    const { items } = await listAll({ programId: TOKEN_PROGRAM_ID, match: [`32:${owner}`], limit: 2 });
    expect(items.length).toBeGreaterThan(0);
    expect(new Set(items.map((i) => i.address))).toEqual(new Set(byOwner.value.map((v) => v.pubkey)));
    for (const item of items) expect(item.data.format === "parsed" && tokenInfo(item).owner).toBe(owner);
  });

  it("continues a listing from a cursor on another replica (no shared cache)", async () => {
    const query = { programId: TOKEN_PROGRAM_ID, match: [`0:${gate.mint}`], limit: 50 };
    const a = createProgramAccounts({ upstream });
    const page1 = await a.list(query);
    const page2a = await a.list({ ...query, cursor: page1.nextCursor! });
    const page2b = await createProgramAccounts({ upstream }).list({ ...query, cursor: page1.nextCursor! });
    expect(page2b.items.map((i) => i.address)).toEqual(page2a.items.map((i) => i.address));
    expect(page2b.nextCursor).toBe(page2a.nextCursor);
    expect(compareAddresses(page1.items.at(-1)!.address, page2a.items[0].address)).toBeLessThan(0);
  });

  it("refuses a cursor of another query", async () => {
    const programs = createProgramAccounts({ upstream });
    const page = await programs.list({ programId: TOKEN_PROGRAM_ID, match: [`0:${gate.mint}`], limit: 10 });
    const e = await rejection(
      programs.list({ programId: TOKEN_PROGRAM_ID, match: [`0:${bolt.mint}`], cursor: page.nextCursor! }),
    );
    expect([e.reason, e.details.field]).toEqual(["INVALID_PARAMETER", "cursor"]);
  });

  it("gives NOT_FOUND for an empty address and for an account that is not a program", async () => {
    const programs = createProgramAccounts({ upstream });
    const missing = await rejection(
      programs.list({ programId: "GQCz7hQDBYTvJNPH4nGMtRWFyTDBB5KFf5fAr7ktRLWc", match: [] }),
    );
    expect(missing.reason).toBe("NOT_FOUND");
    const notProgram = await rejection(programs.list({ programId: gate.mint, match: [] }));
    expect(notProgram.reason).toBe("NOT_FOUND");
    expect(notProgram.message).toMatch(/not a program/);
  });

  it("refuses queries matching more accounts than served, and unfiltered token-program queries", async () => {
    const capped = createProgramAccounts({ upstream }, { maxMatchingAccounts: 500 });
    const e = await rejection(capped.list({ programId: TOKEN_PROGRAM_ID, match: [`0:${gate.mint}`] }));
    expect(e.reason).toBe("QUERY_TOO_BROAD");
    expect(e.details.matching).toBeGreaterThan(500);
    const broad = await rejection(
      createProgramAccounts({ upstream }).list({ programId: TOKEN_PROGRAM_ID, size: 165n, match: [] }),
    );
    expect(broad.reason).toBe("QUERY_TOO_BROAD");
  });

  it("gives mints parsed, as the node parses them", async () => {
    // With the token programs not marked broad, a size-only query lists every mint of this small chain.
    const mints = await createProgramAccounts({ upstream }, { broadPrograms: [] }).list({
      programId: TOKEN_PROGRAM_ID,
      size: 82n,
      match: [],
    });
    const seeded = mints.items.filter((i) => i.address === gate.mint || i.address === bolt.mint);
    expect(seeded).toHaveLength(2);
    for (const mint of seeded) {
      expect(mint.space).toBe(82n);
      expect(mint.data).toMatchObject({
        format: "parsed",
        program: "spl-token",
        parsed: { type: "mint", fields: { isInitialized: true } },
      });
      const direct = await upstream.rpc.getAccountInfo(address(mint.address), { encoding: "base64" }).send();
      const bytes = Buffer.from(direct.value!.data[0], "base64");
      // decimals is byte 44 of a mint, the supply the u64 at 36.
      if (mint.data.format === "parsed" && "fields" in mint.data.parsed) {
        expect(mint.data.parsed.fields.decimals).toBe(bytes[44]);
        expect(mint.data.parsed.fields.supply).toBe(bytes.readBigUInt64LE(36).toString());
      }
    }
  });
});
