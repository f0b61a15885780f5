/** Unit tests: JSON u64 edge, base58 pubkeys and memcmp bytes, strict base64, UI amounts. */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import bs58 from "bs58";
import { decodeBase58, encodeBase58, parsePubkey } from "../../src/accounts/base58.ts";
import { decodeBase64Strict } from "../../src/accounts/base64.ts";
import { jsonI64, jsonU64, parseJson, toJson } from "../../src/accounts/json.ts";
import { formatFixed, realNumberStringTrimmed, uiTokenAmount } from "../../src/accounts/ui-amount.ts";

describe("JSON at the edge", () => {
  it("writes u64 values exactly as bare numbers, with or without bigints in the tree", () => {
    expect(toJson({ a: jsonU64(18446744073709551615n), b: jsonU64(5n), c: jsonI64(-(2n ** 60n)) })).toBe(
      '{"a":18446744073709551615,"b":5,"c":-1152921504606846976}',
    );
    expect(toJson({ big: 2n ** 64n - 2n, list: [1n, "x"] })).toBe('{"big":18446744073709551614,"list":[1,"x"]}');
    expect(parseJson('{"r":18446744073709551615,"s":1.5,"t":7}')).toEqual({ r: 18446744073709551615n, s: 1.5, t: 7 });
  });
});

describe("base58", () => {
  it("encodes 32-byte keys exactly like bs58 (fast path), including leading zero bytes", () => {
    const keys = [
      new Uint8Array(32),
      new Uint8Array(32).fill(255),
      Uint8Array.from({ length: 32 }, (_, i) => (i < 7 ? 0 : i)),
    ];
    for (let i = 0; i < 2000; i++) keys.push(randomBytes(32).fill(0, 0, i % 9));
    for (const key of keys) expect(encodeBase58(key)).toBe(bs58.encode(key));
    expect(encodeBase58(Uint8Array.of(0, 1, 2))).toBe(bs58.encode(Uint8Array.of(0, 1, 2)));
  });

  it("parses pubkeys with agave's WrongSize / Invalid outcomes", () => {
    expect(parsePubkey("11111111111111111111111111111111")).toMatchObject({ bytes: new Uint8Array(32) });
    expect(parsePubkey("")).toBe("WrongSize");
    expect(parsePubkey("1".repeat(31))).toBe("WrongSize");
    expect(parsePubkey("1".repeat(45))).toBe("WrongSize");
    expect(parsePubkey("O".repeat(44))).toBe("Invalid");
    expect(parsePubkey("z".repeat(44))).toBe("Invalid");
    expect(parsePubkey("ñ")).toBe("Invalid");
  });

  it("reports the first bad character as the bs58 crate does", () => {
    expect(() => decodeBase58("abcI")).toThrow("InvalidCharacter { character: 'I', index: 3 }");
    expect(() => decodeBase58("ab'")).toThrow("InvalidCharacter { character: '\\'', index: 2 }");
    expect(() => decodeBase58("aé1")).toThrow("NonAsciiCharacter { index: 1 }");
  });
});

describe("strict base64", () => {
  it("decodes canonical input and refuses what the base64 crate refuses", () => {
    expect([...decodeBase64Strict("AQID")]).toEqual([1, 2, 3]);
    expect([...decodeBase64Strict("AQ==")]).toEqual([1]);
    expect([...decodeBase64Strict("")]).toEqual([]);
    expect(() => decodeBase64Strict("AQ")).toThrow("Invalid padding");
    expect(() => decodeBase64Strict("AQ=")).toThrow("Invalid padding");
    expect(() => decodeBase64Strict("A===")).toThrow("Invalid input length: 1");
    expect(() => decodeBase64Strict("AR==")).toThrow(
      "Invalid last symbol 0x52 ('R') at offset 1, decoded as 0b00010001.",
    );
    expect(() => decodeBase64Strict("A Q==")).toThrow("Invalid symbol 32, offset 1.");
    expect(() => decodeBase64Strict("AQ==AQ==")).toThrow("Invalid symbol 61, offset 2.");
  });
});

describe("UI amounts", () => {
  it("renders plain amounts as agave's real_number_string_trimmed and f64 division", () => {
    expect(realNumberStringTrimmed(1_234_567_890n, 3)).toBe("1234567.89");
    expect(realNumberStringTrimmed(1n, 9)).toBe("0.000000001");
    expect(realNumberStringTrimmed(1_000_000_000n, 9)).toBe("1");
    expect(realNumberStringTrimmed(0n, 6)).toBe("0");
    expect(uiTokenAmount(1_234_567_890n, { decimals: 20 })).toEqual({
      uiAmount: null, // 10^20 overflows a u64 in agave
      decimals: 20,
      amount: "1234567890",
      uiAmountString: "0.0000000000123456789",
    });
    expect(uiTokenAmount(18446744073709551615n, { decimals: 0 }).uiAmount).toBe(18446744073709552000);
  });

  it("formats like Rust's {:.N} (exact value, ties to even, no exponent)", () => {
    expect(formatFixed(0.5, 0)).toBe("0");
    expect(formatFixed(1.5, 0)).toBe("2");
    expect(formatFixed(2.5, 0)).toBe("2");
    expect(formatFixed(0.125, 2)).toBe("0.12");
    expect(formatFixed(0.1, 20)).toBe("0.10000000000000000555");
    expect(formatFixed(1e21, 1)).toBe("1000000000000000000000.0");
    expect(formatFixed(0, 3)).toBe("0.000");
  });

  it("applies an interest-bearing mint's continuous rate (5% for a year is exp(0.05))", () => {
    const year = 31_556_736n; // spl-token-2022's 365.24-day year
    const mint = {
      decimals: 6,
      interestBearing: {
        initializationTimestamp: 0n,
        preUpdateAverageRate: 500,
        lastUpdateTimestamp: year,
        currentRate: 500,
      },
      unixTimestamp: year,
    };
    // exp(0.05) = 1.0512710963760241 (spl-token-2022's own test value)
    expect(uiTokenAmount(1_000_000n, mint)).toEqual({
      uiAmount: 1.051271,
      decimals: 6,
      amount: "1000000",
      uiAmountString: "1.051271",
    });
    const later = { ...mint, unixTimestamp: year * 2n };
    expect(uiTokenAmount(1_000_000_000_000n, later).uiAmountString).toBe(
      formatFixed(1e6 * Math.exp(0.1), 6).replace(/0+$/, ""),
    );
  });

  it("applies a scaled-UI-amount mint's multiplier, switching at its effective time", () => {
    const mint = {
      decimals: 2,
      scaledUiAmount: { multiplier: 1.5, newMultiplierEffectiveTimestamp: 100n, newMultiplier: 3 },
      unixTimestamp: 99n,
    };
    expect(uiTokenAmount(1000n, mint)).toEqual({ uiAmount: 15, decimals: 2, amount: "1000", uiAmountString: "15" });
    expect(uiTokenAmount(1001n, { ...mint, unixTimestamp: 100n })).toEqual({
      uiAmount: 30.03,
      decimals: 2,
      amount: "1001",
      uiAmountString: "30.03",
    });
  });
});
