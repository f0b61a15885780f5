/** Response serialisation: u64s beyond 2^53 as bare numbers, and arrays written from their elements' texts. */
import { describe, expect, it } from "vitest";
import { parseJson, stringifyJson, withElementTexts } from "../../src/rpc/json.ts";

const marked = <T>(items: T[]) =>
  withElementTexts(
    items,
    items.map((item) => JSON.stringify(item)),
  );

describe("stringifyJson", () => {
  it("writes marked arrays from their texts, wherever and however often they appear, as plain arrays would be", () => {
    const a = [
      { pubkey: "A", n: 1 },
      { pubkey: "B", s: 'x\u0000"y' },
    ];
    const b = [1, [2, 3], "four"];
    const tree = {
      jsonrpc: "2.0",
      result: { context: { slot: 5 }, value: marked([...a]), again: marked([...b]), empty: marked([]) },
      id: "\u0000localnet-element-texts:0",
    };
    const plain = { ...tree, result: { ...tree.result, value: a, again: b, empty: [] } };
    expect(stringifyJson(tree)).toBe(JSON.stringify(plain));
    // A batch of such responses, and a marked array at the top.
    expect(stringifyJson([tree, tree])).toBe(JSON.stringify([plain, plain]));
    expect(stringifyJson(marked([...a]))).toBe(JSON.stringify(a));
    // Readers in the process see an ordinary array.
    expect(tree.result.value).toEqual(a);
  });

  it("keeps u64s beyond 2^53 exact beside marked arrays (the bigint retry)", () => {
    const tree = { big: 2n ** 64n - 1n, list: marked([{ lamports: 5 }]) };
    const text = stringifyJson(tree);
    expect(text).toBe('{"big":18446744073709551615,"list":[{"lamports":5}]}');
    expect(parseJson(text)).toEqual({ big: 2n ** 64n - 1n, list: [{ lamports: 5 }] });
    // Nothing is left over for the next call.
    expect(stringifyJson({ x: [1] })).toBe('{"x":[1]}');
  });
});
