/** The slot watch of one URL, on its own: per commitment, with jitter, and a memory that ends. */
import { describe, expect, it } from "vitest";
import { createSlotWatch, REGRESSION_MEMORY_MS, SLOT_REGRESSION_TOLERANCE } from "../../src/upstream/slot-watch.ts";

const at = (commitment?: string) => ({ params: commitment === undefined ? [] : [{ commitment }] });
const withSlot = (slot: bigint) => ({ context: { slot }, value: null });

describe("createSlotWatch", () => {
  it("takes jitter of a few slots and refuses more", () => {
    const watch = createSlotWatch();
    expect(watch.check("getSlot", at("confirmed"), 1000n)).toBeUndefined();
    expect(watch.check("getSlot", at("confirmed"), 1000n - SLOT_REGRESSION_TOLERANCE)).toBeUndefined();
    expect(watch.check("getSlot", at("confirmed"), 1000n - SLOT_REGRESSION_TOLERANCE - 1n)?.kind).toBe(
      "slot_went_back",
    );
    expect(watch.check("getAccountInfo", at("confirmed"), withSlot(500n))?.path).toBe("result.context.slot");
  });

  it("compares slots at the same commitment only (finalized trails confirmed by design)", () => {
    const watch = createSlotWatch();
    expect(watch.check("getSlot", at("confirmed"), 1000n)).toBeUndefined();
    expect(watch.check("getAccountInfo", at("finalized"), withSlot(960n))).toBeUndefined();
    expect(watch.check("getAccountInfo", at(), withSlot(961n))).toBeUndefined(); // no commitment: finalized
  });

  it("takes a lower slot as the node's new truth once it has been refused for a while (a restarted node)", () => {
    let now = 0;
    const watch = createSlotWatch(() => now);
    watch.check("getSlot", at("confirmed"), 100_000n);
    now = 1000;
    expect(watch.check("getSlot", at("confirmed"), 10n)).toBeDefined();
    now = REGRESSION_MEMORY_MS + 1;
    expect(watch.check("getSlot", at("confirmed"), 12n)).toBeUndefined();
    expect(watch.check("getSlot", at("confirmed"), 13n)).toBeUndefined();
  });

  it("refuses a status for a slot past the answer's own, and a blockhash from the future", () => {
    const watch = createSlotWatch();
    const statuses = (slot: bigint) => ({ context: { slot: 100n }, value: [null, { slot }] });
    expect(watch.check("getSignatureStatuses", at(), statuses(99n))).toBeUndefined();
    expect(watch.check("getSignatureStatuses", at(), statuses(1100n))).toEqual({
      kind: "status_from_the_future",
      path: "result.value.1.slot",
    });
    const blockhash = (lastValidBlockHeight: bigint) => ({
      context: { slot: 1000n },
      value: { blockhash: "x", lastValidBlockHeight },
    });
    expect(watch.check("getLatestBlockhash", at("confirmed"), blockhash(1150n))).toBeUndefined();
    expect(watch.check("getLatestBlockhash", at("confirmed"), blockhash(50_000n))?.kind).toBe(
      "blockhash_from_the_future",
    );
  });
});
