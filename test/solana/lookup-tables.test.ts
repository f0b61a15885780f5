import { describe, expect, it } from "vitest";
import type { Address } from "@solana/kit";
import { createLookupTableResolver, decodeLookupTable } from "../../src/solana/lookup-tables.ts";
import { ADDRESS_LOOKUP_TABLE_PROGRAM } from "../../src/solana/program-ids.ts";
import { decodeWireTransaction } from "../../src/solana/wire-transaction.ts";
import { createScriptedNode, lookupTableData, pricedTransaction, randomAddress } from "../fees/scripted-node.ts";

describe("lookup tables", () => {
  it("decodes the 56-byte header then 32-byte addresses, and refuses anything else", () => {
    const addresses = [randomAddress(), randomAddress(), randomAddress()];
    expect(decodeLookupTable(lookupTableData(addresses))).toEqual(addresses);
    expect(decodeLookupTable(lookupTableData([]))).toEqual([]);
    expect(() => decodeLookupTable(new Uint8Array(55))).toThrow(/56 \+ 32/);
    expect(() => decodeLookupTable(lookupTableData(addresses).subarray(0, 56 + 40))).toThrow(/56 \+ 32/);
    const uninitialized = lookupTableData(addresses);
    uninitialized[0] = 0;
    expect(() => decodeLookupTable(uninitialized)).toThrow(/not an initialized lookup table/);
  });

  it("resolves loaded write locks in order, caches tables, and refetches a table that grew", async () => {
    const node = createScriptedNode();
    const resolver = createLookupTableResolver({ rpc: node.rpc });
    const [a, b, c, d] = [randomAddress(), randomAddress(), randomAddress(), randomAddress()];
    const t1 = randomAddress();
    const t2 = randomAddress();
    node.accounts.set(t1, { owner: ADDRESS_LOOKUP_TABLE_PROGRAM, data: lookupTableData([a, b]) });
    node.accounts.set(t2, { owner: ADDRESS_LOOKUP_TABLE_PROGRAM, data: lookupTableData([c]) });
    const tables = { [t1]: [a, b], [t2]: [c] } as Record<Address, Address[]>;
    const message = decodeWireTransaction(pricedTransaction({ writable: [b, c], tables })).message;
    expect(await resolver.writableOf(message)).toEqual(expect.arrayContaining([b, c]));
    expect(node.calls.getMultipleAccounts).toBe(1); // both tables in one call
    await resolver.writableOf(message);
    expect(node.calls.getMultipleAccounts).toBe(1);

    // t2 is extended with d; a draft using the new index makes the resolver look again once.
    node.accounts.set(t2, { owner: ADDRESS_LOOKUP_TABLE_PROGRAM, data: lookupTableData([c, d]) });
    const grown = decodeWireTransaction(
      pricedTransaction({ writable: [d], tables: { [t2]: [c, d] } as Record<Address, Address[]> }),
    ).message;
    expect(await resolver.writableOf(grown)).toEqual([d]);
    expect(node.calls.getMultipleAccounts).toBe(2);
  });

  it("shares one upstream call between concurrent estimates of the same table, and expires entries", async () => {
    const node = createScriptedNode();
    let clock = 0;
    const resolver = createLookupTableResolver({ rpc: node.rpc, ttlMs: 1000, now: () => clock });
    const t = randomAddress();
    node.accounts.set(t, { owner: ADDRESS_LOOKUP_TABLE_PROGRAM, data: lookupTableData([randomAddress()]) });
    await Promise.all(Array.from({ length: 10 }, () => resolver.tableAddresses(t)));
    expect(node.calls.getMultipleAccounts).toBe(1);
    clock += 1001;
    await resolver.tableAddresses(t);
    expect(node.calls.getMultipleAccounts).toBe(2);
  });

  it("legacy messages load nothing and make no call", async () => {
    const node = createScriptedNode();
    const resolver = createLookupTableResolver({ rpc: node.rpc });
    expect(
      await resolver.writableOf(decodeWireTransaction(pricedTransaction({ writable: [randomAddress()] })).message),
    ).toEqual([]);
    expect(node.calls.getMultipleAccounts).toBeUndefined();
  });
});
