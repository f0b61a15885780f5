import { randomBytes } from "node:crypto";
import v8 from "node:v8";
import vm from "node:vm";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import { getBase58Decoder } from "@solana/kit";
import { base58OfKey } from "../../src/solana/base58-key.ts";

describe("base58 of 32-byte keys", () => {
  it("matches kit's codec on random keys, leading zeros and the extremes", () => {
    const kit = getBase58Decoder();
    const keys = [
      new Uint8Array(32),
      new Uint8Array(32).fill(255),
      Uint8Array.from({ length: 32 }, (_, i) => (i === 31 ? 1 : 0)),
    ];
    for (let i = 0; i < 3000; i++) {
      const key = new Uint8Array(randomBytes(32));
      key.fill(0, 0, i % 34); // 0..32 leading zero bytes
      keys.push(key);
    }
    for (const key of keys) expect(base58OfKey(key)).toBe(kit.decode(key));
    expect(base58OfKey(new Uint8Array(32))).toBe("11111111111111111111111111111111");
    const framed = new Uint8Array(40);
    framed.set(keys[5], 3);
    expect(base58OfKey(framed, 3)).toBe(kit.decode(keys[5]));
    expect(() => base58OfKey(framed, 9)).toThrow(RangeError);
  });

  it("makes flat strings: an order of magnitude less memory per kept address than bs58", () => {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as () => void;
    const raw = Array.from({ length: 20_000 }, () => new Uint8Array(randomBytes(32)));
    const bytesPer = (encode: (key: Uint8Array) => string) => {
      gc();
      const before = process.memoryUsage().heapUsed;
      const kept = raw.map(encode);
      gc();
      const per = (process.memoryUsage().heapUsed - before) / kept.length;
      expect(kept.length).toBe(raw.length);
      return per;
    };
    const ours = bytesPer((k) => base58OfKey(k));
    const theirs = bytesPer((k) => bs58.encode(k));
    expect(ours).toBeLessThan(200);
    expect(theirs).toBeGreaterThan(ours * 4);
  });
});
