import { describe, expect, it } from "vitest";
import { createFeeWindow, mergeSorted, subtractSorted } from "../../src/fees/fee-window.ts";
import { levelsOf } from "../../src/fees/percentile.ts";

const tx = (price: bigint, ...writable: string[]) => ({ price, writable });

describe("fee window", () => {
  it("computes global levels over every price in the window", () => {
    const window = createFeeWindow({ windowSlots: 10 });
    window.addBlock(100n, [tx(0n, "a"), tx(10n, "b"), tx(20n, "a")]);
    window.addBlock(101n, [tx(1000n, "c"), tx(0n, "a")]);
    expect(window.global()).toEqual({ levels: levelsOf([0n, 10n, 20n, 1000n, 0n]), sampleSize: 5 });
  });

  it("slides: blocks older than windowSlots leave, globally and per account", () => {
    const window = createFeeWindow({ windowSlots: 3 });
    window.addBlock(10n, [tx(500n, "hot"), tx(500n, "hot")]);
    window.addBlock(11n, [tx(1n, "hot", "x")]);
    expect(window.account("hot")!.sampleSize).toBe(3);
    window.addBlock(13n, [tx(2n, "y")]); // window is now 11..13: slot 10 leaves
    expect(window.global()).toEqual({ levels: levelsOf([1n, 2n]), sampleSize: 2 });
    expect(window.account("hot")).toEqual({ levels: levelsOf([1n]), sampleSize: 1 });
    window.advanceTo(14n); // a skipped slot slides too: 12..14
    expect(window.account("hot")).toBeUndefined();
    expect(window.account("x")).toBeUndefined();
    expect(window.stats()).toMatchObject({ blocks: 1, samples: 1, accounts: 1 });
  });

  it("keeps per-account series separate from the global one", () => {
    const window = createFeeWindow();
    const txs = [
      ...Array.from({ length: 90 }, () => tx(0n, "payer")),
      ...Array.from({ length: 10 }, (_, i) => tx(BigInt(10_000 + i), "pool", "payer")),
    ];
    window.addBlock(1n, txs);
    expect(window.global()!.levels.high).toBe(0n);
    expect(window.account("pool")!.levels).toEqual(levelsOf(txs.slice(90).map((t) => t.price)));
  });

  it("ignores a block that is not newer than the newest slot", () => {
    const window = createFeeWindow();
    expect(window.addBlock(5n, [tx(1n, "a")])).toBe(true);
    expect(window.addBlock(5n, [tx(9n, "a")])).toBe(false);
    expect(window.addBlock(4n, [tx(9n, "a")])).toBe(false);
    expect(window.global()!.sampleSize).toBe(1);
  });

  it("caps the accounts it keeps, dropping the coldest", () => {
    const window = createFeeWindow({ maxAccounts: 100 });
    // "hot" is written in every block; the cold ones once each.
    for (let slot = 1; slot <= 30; slot++) {
      const cold = Array.from({ length: 10 }, (_, i) => tx(1n, `cold-${slot}-${i}`));
      window.addBlock(BigInt(slot), [tx(7n, "hot"), tx(7n, "hot"), ...cold]);
      expect(window.stats().accounts).toBeLessThanOrEqual(100);
    }
    expect(window.account("hot")!.sampleSize).toBe(60);
    expect(window.stats().evicted).toBeGreaterThan(0);
    // The newest cold accounts survive (ties broken by recency), the oldest are gone.
    expect(window.account("cold-30-0")).toBeDefined();
    expect(window.account("cold-1-0")).toBeUndefined();
    // Global prices are not capped.
    expect(window.global()!.sampleSize).toBe(30 * 12);
  });

  it("an account evicted then seen again is not corrupted when its old blocks leave", () => {
    const window = createFeeWindow({ windowSlots: 4, maxAccounts: 10 });
    window.addBlock(1n, [tx(5n, "again")]);
    // Push "again" out with hotter accounts.
    window.addBlock(
      2n,
      Array.from({ length: 20 }, (_, i) => tx(1n, `h${i % 10}`, `h${i % 10}x`)),
    );
    expect(window.account("again")).toBeUndefined();
    window.addBlock(3n, [tx(9n, "again"), tx(9n, "again")]);
    window.addBlock(5n, []); // slot 1 leaves: must not drop the new series' entries
    expect(window.account("again")).toEqual({ levels: levelsOf([9n, 9n]), sampleSize: 2 });
  });

  it("merges and subtracts sorted multisets", () => {
    const a = BigUint64Array.from([1n, 3n, 3n, 7n]);
    const b = BigUint64Array.from([2n, 3n, 9n]);
    const merged = mergeSorted(a, b);
    expect([...merged]).toEqual([1n, 2n, 3n, 3n, 3n, 7n, 9n]);
    expect([...subtractSorted(merged, b)]).toEqual([...a]);
    expect([...subtractSorted(merged, a)]).toEqual([...b]);
  });

  it("stays consistent with a recomputation from scratch over a long random run", () => {
    const windowSlots = 20;
    const window = createFeeWindow({ windowSlots });
    let seed = 3;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const history: { slot: bigint; txs: { price: bigint; writable: string[] }[] }[] = [];
    let slot = 0n;
    for (let i = 0; i < 300; i++) {
      slot += BigInt(1 + random(3)); // some slots skipped
      const txs = Array.from({ length: random(15) }, () =>
        tx(BigInt(random(50) * 100), `acc${random(12)}`, `acc${random(12)}`),
      );
      for (const t of txs) t.writable = [...new Set(t.writable)];
      window.addBlock(slot, txs);
      history.push({ slot, txs });
      const live = history.filter((h) => h.slot > slot - BigInt(windowSlots)).flatMap((h) => h.txs);
      const expected = levelsOf(live.map((t) => t.price));
      expect(window.global()?.levels).toEqual(expected);
      const account = `acc${random(12)}`;
      const mine = live.filter((t) => t.writable.includes(account));
      expect(window.account(account)?.levels).toEqual(levelsOf(mine.map((t) => t.price)));
    }
  });
});
