import { describe, expect, it } from "vitest";
import { sleep } from "../src/sleep.ts";

describe("sleep", () => {
  it("resolves after its time, or at once when its signal aborts, and never rejects", async () => {
    let started = performance.now();
    await sleep(30);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    const stop = new AbortController();
    started = performance.now();
    const sleeping = sleep(60_000, stop.signal);
    stop.abort(new Error("stopped"));
    await expect(sleeping).resolves.toBeUndefined();
    expect(performance.now() - started).toBeLessThan(10_000);
    // Already aborted: at once.
    await expect(sleep(60_000, stop.signal, { ref: false })).resolves.toBeUndefined();
  });
});
