import { describe, expect, it } from "vitest";
import { createSemaphore } from "../../src/upstream/semaphore.ts";
import { parseRetryAfter } from "../../src/upstream/resilient-transport.ts";

describe("semaphore", () => {
  it("grants slots in FIFO order and never exceeds the limit", async () => {
    const semaphore = createSemaphore(2);
    const order: number[] = [];
    let held = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const release = await semaphore.acquire();
        order.push(i);
        held++;
        most = Math.max(most, held);
        await new Promise((r) => setTimeout(r, 5));
        held--;
        release();
        release(); // a second release is a no-op
      }),
    );
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(most).toBe(2);
    expect(semaphore.active).toBe(0);
  });

  it("drops an aborted waiter from the queue", async () => {
    const semaphore = createSemaphore(1);
    const release = await semaphore.acquire();
    const controller = new AbortController();
    const waiting = semaphore.acquire(controller.signal);
    expect(semaphore.waiting).toBe(1);
    controller.abort(new Error("gone"));
    await expect(waiting).rejects.toThrow("gone");
    expect(semaphore.waiting).toBe(0);
    release();
    expect(semaphore.active).toBe(0);
  });
});

describe("parseRetryAfter", () => {
  it("reads delta-seconds and HTTP dates", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    const ms = parseRetryAfter(inTenSeconds)!;
    expect(ms).toBeGreaterThan(8000);
    expect(ms).toBeLessThanOrEqual(10_000);
  });
});
