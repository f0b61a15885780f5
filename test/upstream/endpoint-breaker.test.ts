/**
 * The breaker of one URL as a unit: what opens it (a run of failures, a failure ratio), what does not (a
 * caller's abort), the cool-down and the single half-open probe. Attempts here are plain functions that
 * report whether the URL failed; the transport tests drive it with real sockets.
 */
import { describe, expect, it } from "vitest";
import { createEndpointBreaker } from "../../src/upstream/endpoint-breaker.ts";
import type { BreakerState } from "../../src/upstream/endpoint-breaker.ts";

const failed = async () => ({ endpointFailed: true });
const answered = async () => ({ endpointFailed: false });

describe("endpoint breaker", () => {
  it("opens after the configured run of failures, and a success in between resets the run", async () => {
    const breaker = createEndpointBreaker({ consecutiveFailures: 3, failureRatio: 1 });
    await breaker.run(failed);
    await breaker.run(failed);
    await breaker.run(answered);
    await breaker.run(failed);
    await breaker.run(failed);
    expect(breaker.state()).toBe("closed");
    await breaker.run(failed);
    expect(breaker.state()).toBe("open");
    expect(breaker.admits()).toBe(false);
    let called = false;
    expect(
      await breaker.run(async () => {
        called = true;
        return { endpointFailed: false };
      }),
    ).toBeUndefined();
    expect(called).toBe(false);
  });

  it("opens on a failure ratio even without a long run of failures", async () => {
    const breaker = createEndpointBreaker({ consecutiveFailures: 100, failureRatio: 0.5, windowSize: 10 });
    for (let i = 0; i < 10 && breaker.state() === "closed"; i++) await breaker.run(i % 2 === 0 ? failed : answered);
    expect(breaker.state()).toBe("open");
  });

  it("does not count an attempt that threw (the caller gave up)", async () => {
    const breaker = createEndpointBreaker({ consecutiveFailures: 2, failureRatio: 1 });
    for (let i = 0; i < 5; i++) {
      await expect(breaker.run(() => Promise.reject(new Error("aborted by the caller")))).rejects.toThrow("aborted");
    }
    expect(breaker.state()).toBe("closed");
  });

  it("after the cool-down lets one probe through, skips other calls meanwhile, and closes on its success", async () => {
    const states: BreakerState[] = [];
    const breaker = createEndpointBreaker({
      consecutiveFailures: 1,
      failureRatio: 1,
      halfOpenAfterMs: 100,
      onStateChange: (s) => states.push(s),
    });
    await breaker.run(failed);
    expect(breaker.retryAfterMs()).toBeGreaterThan(50);
    await new Promise((r) => setTimeout(r, 120));
    expect(breaker.admits()).toBe(true);
    let release = () => {};
    const probe = breaker.run(
      () =>
        new Promise<{ endpointFailed: boolean }>((resolve) => {
          release = () => resolve({ endpointFailed: false });
        }),
    );
    expect(breaker.state()).toBe("half_open");
    expect(await breaker.run(answered)).toBeUndefined();
    release();
    expect(await probe).toEqual({ endpointFailed: false });
    expect(breaker.state()).toBe("closed");
    expect(states).toEqual(["open", "half_open", "closed"]);
  });
});

describe("endpoint breaker cool-down", () => {
  const waitUntilAdmitted = async (breaker: ReturnType<typeof createEndpointBreaker>) => {
    const from = Date.now();
    while (!breaker.admits()) await new Promise((r) => setTimeout(r, 5));
    return Date.now() - from;
  };

  it("starts at the first cool-down, doubles with each failed probe up to the longest, and starts over once closed", async () => {
    const breaker = createEndpointBreaker({
      consecutiveFailures: 1,
      failureRatio: 1,
      firstHalfOpenAfterMs: 100,
      halfOpenAfterMs: 300,
    });
    await breaker.run(failed);
    expect(breaker.retryAfterMs()).toBeLessThanOrEqual(100);
    await waitUntilAdmitted(breaker);
    await breaker.run(failed); // the probe fails: 200 ms
    expect(breaker.retryAfterMs()).toBeGreaterThan(150);
    expect(breaker.retryAfterMs()).toBeLessThanOrEqual(200);
    await waitUntilAdmitted(breaker);
    await breaker.run(failed); // 400 ms, capped at 300
    expect(breaker.retryAfterMs()).toBeGreaterThan(250);
    expect(breaker.retryAfterMs()).toBeLessThanOrEqual(300);
    await waitUntilAdmitted(breaker);
    await breaker.run(answered);
    expect(breaker.state()).toBe("closed");
    await breaker.run(failed); // a new opening starts short again
    expect(breaker.retryAfterMs()).toBeLessThanOrEqual(100);
  });

  it("by default lets the first probe through after 1 s, not after the longest cool-down (10 s)", async () => {
    const breaker = createEndpointBreaker({ consecutiveFailures: 1, failureRatio: 1 });
    await breaker.run(failed);
    expect(breaker.retryAfterMs()).toBeGreaterThan(500);
    expect(breaker.retryAfterMs()).toBeLessThanOrEqual(1000);
  });
});
