import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { getAddressDecoder, getAddressEncoder } from "@solana/kit";
import type { Address } from "@solana/kit";
import { compareAddresses, indexAfter, sortAddresses } from "../../src/programs/address-order.ts";

const decoder = getAddressDecoder();
const encoder = getAddressEncoder();

/** Addresses of random bytes, some with leading zero bytes (base58 '1's), plus the extremes. */
function sampleAddresses(count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const bytes = randomBytes(32);
    bytes.fill(0, 0, i % 5 === 0 ? i % 4 : 0);
    if (i % 7 === 0) bytes[0] = 1;
    out.push(decoder.decode(bytes));
  }
  out.push(decoder.decode(new Uint8Array(32)), decoder.decode(new Uint8Array(32).fill(255)));
  return out;
}

describe("address order", () => {
  it("orders base58 strings exactly as their 32 bytes compare", () => {
    const addresses = sampleAddresses(2000);
    const bytesOf = new Map(addresses.map((a) => [a, Buffer.from(encoder.encode(a as Address))]));
    const byBytes = [...addresses].sort((a, b) => Buffer.compare(bytesOf.get(a)!, bytesOf.get(b)!));
    expect(sortAddresses([...addresses])).toEqual(byBytes);
    expect(byBytes[0]).toBe("11111111111111111111111111111111");
  });

  it("finds the first address after a given one, present or not", () => {
    const sorted = sortAddresses(sampleAddresses(500));
    for (const i of [0, 1, 250, sorted.length - 1]) {
      expect(indexAfter(sorted, sorted[i])).toBe(i + 1);
    }
    expect(indexAfter(sorted, "11111111111111111111111111111111")).toBe(1);
    const absent = sampleAddresses(20).filter((a) => !sorted.includes(a));
    for (const a of absent) {
      const i = indexAfter(sorted, a);
      expect(i === 0 || compareAddresses(sorted[i - 1], a) < 0).toBe(true);
      expect(i === sorted.length || compareAddresses(sorted[i], a) > 0).toBe(true);
    }
  });
});
