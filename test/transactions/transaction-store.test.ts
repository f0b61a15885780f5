import { describe, expect, it } from "vitest";
import { SolgateError } from "../../src/errors.ts";
import { createMemoryTransactionStore } from "../../src/transactions/transaction-store.ts";
import type { TrackedSend } from "../../src/transactions/transaction-store.ts";
import type { TransactionState } from "../../src/transactions/transaction-status.ts";

function send(signature: string, state: TransactionState = "submitted"): TrackedSend {
  return {
    signature,
    state,
    updatedAt: new Date(0),
    wire: new Uint8Array([1]),
    blockhash: "h",
    lastValidBlockHeight: 100n,
    expiryExact: true,
    commitment: "confirmed",
    landed: false,
    lastBroadcastAt: 0,
    broadcasts: 1,
  };
}

describe("createMemoryTransactionStore", () => {
  it("lists only sends in flight and drops settled ones after their TTL", async () => {
    let t = 0;
    const store = createMemoryTransactionStore({ terminalTtlMs: 1000, now: () => t });
    await store.put(send("a"));
    await store.put(send("b"));
    await store.put(send("b", "finalized"));
    expect((await store.active()).map((s) => s.signature)).toEqual(["a"]);
    expect((await store.get("b"))?.state).toBe("finalized");
    t = 999;
    expect(await store.get("b")).toBeDefined();
    t = 1000;
    expect(await store.get("b")).toBeUndefined();
    expect(store.size()).toBe(1);
  });

  it("evicts the oldest settled send when full, and refuses when everything is in flight", async () => {
    const store = createMemoryTransactionStore({ maxEntries: 2 });
    await store.put(send("a", "expired"));
    await store.put(send("b"));
    await store.put(send("c"));
    expect(await store.get("a")).toBeUndefined();
    expect(store.size()).toBe(2);
    const refused = await store.put(send("d")).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SolgateError);
    expect((refused as SolgateError).reason).toBe("RATE_LIMITED");
    // Updating a send already held never counts against the cap.
    await store.put({ ...send("c"), broadcasts: 2 });
    expect((await store.get("c"))?.broadcasts).toBe(2);
  });

  it("forgets a deleted send", async () => {
    const store = createMemoryTransactionStore();
    await store.put(send("a"));
    expect(await store.delete("a")).toBe(true);
    expect(await store.get("a")).toBeUndefined();
    expect(await store.active()).toEqual([]);
  });

  it("never forgets a send a second insert found (it was answered for)", async () => {
    const store = createMemoryTransactionStore();
    expect(await store.insert(send("j"))).toBeUndefined();
    expect((await store.insert(send("j")))?.signature).toBe("j");
    const forgotten = await store.delete("j");
    expect((await store.active()).map((s) => s.signature)).toEqual(["j"]);
    expect(forgotten).toBe(false);
  });
});
