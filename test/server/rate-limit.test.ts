/** The limiter on its own (in memory): limits, bursts, unlimited keys and what a refusal carries. */
import { describe, expect, it } from "vitest";
import { isSolgateError } from "../../src/errors.ts";
import { createRateLimiter, parseRateLimit } from "../../src/server/rate-limit.ts";

describe("parseRateLimit", () => {
  it("reads a rate per second, minute or hour, with an optional burst", () => {
    expect(parseRateLimit("50/s")).toEqual({ points: 50, durationMs: 1000, burst: 0 });
    expect(parseRateLimit("3000/m")).toEqual({ points: 3000, durationMs: 60_000, burst: 0 });
    expect(parseRateLimit(" 10 / h burst 5 ")).toEqual({ points: 10, durationMs: 3_600_000, burst: 5 });
  });
  it("refuses anything else", () => {
    for (const bad of ["", "50", "0/s", "50/d", "-1/s", "50/s burst", "fifty/s"])
      expect(parseRateLimit(bad), bad).toBeUndefined();
  });
});

describe("createRateLimiter", () => {
  it("refuses past the limit with RATE_LIMITED and the wait, per key, and lets unlimited keys through", async () => {
    const limiter = createRateLimiter({
      limits: new Map([["free", null]]),
      defaultLimit: { points: 3, durationMs: 60_000, burst: 0 },
    });
    for (let i = 0; i < 3; i++) await limiter.consume("alice");
    const error = await limiter.consume("alice").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isSolgateError(error) && error.reason).toBe("RATE_LIMITED");
    expect(isSolgateError(error) && error.retryAfterMs).toBeGreaterThan(50_000);
    expect(isSolgateError(error) && error.details.key).toBe("alice");
    // Another key has its own count; an unlimited one has none.
    await limiter.consume("carol");
    for (let i = 0; i < 100; i++) await limiter.consume("free");
  });

  it("takes a burst beyond the rate, then refuses", async () => {
    const limiter = createRateLimiter({ limits: new Map(), defaultLimit: { points: 2, durationMs: 60_000, burst: 3 } });
    let allowed = 0;
    for (let i = 0; i < 10; i++)
      allowed += await limiter.consume("k").then(
        () => 1,
        () => 0,
      );
    expect(allowed).toBe(5);
  });
});
