/**
 * The congestion profiles' distributions stay what the recorded mainnet data gives: the committed
 * constants are re-fitted from the fixtures here, the plot in docs/ is what the script draws now, and the
 * draws follow the fit.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { distributionSvg, fitRecorded, recordedSamples } from "../../scripts/traffic-distribution.ts";
import {
  DEFAULT_REQUEST,
  drawUnitLimit,
  MAINNET_UNIT_LIMITS,
  MAINNET_UNIT_PRICES,
} from "../../src/traffic/mainnet-distribution.ts";
import { createRandom } from "../../src/world/seeded-random.ts";

describe("mainnet distribution of requests and bids", () => {
  it("is the fit of the recorded samples", () => {
    const { requests, prices } = recordedSamples();
    expect(requests).toHaveLength(28);
    expect(prices).toHaveLength(150);
    const fits = fitRecorded();
    for (const [fit, committed] of [
      [fits.requests, MAINNET_UNIT_LIMITS],
      [fits.prices, MAINNET_UNIT_PRICES],
    ] as const) {
      expect(committed.samples).toBe(fit.samples);
      expect(committed.zeroShare).toBeCloseTo(fit.zeroShare, 5);
      expect(committed.median / fit.median).toBeCloseTo(1, 4);
      expect(committed.sigma).toBeCloseTo(fit.sigma, 3);
    }
  });

  it("is drawn in docs/localnet-traffic-distribution.svg as the script draws it now", () => {
    const committed = readFileSync(
      new URL("../../../../docs/localnet-traffic-distribution.svg", import.meta.url),
      "utf8",
    );
    expect(committed).toBe(distributionSvg());
  });

  it("draws requests in the fit's proportions", () => {
    const random = createRandom("draws");
    const draws = Array.from({ length: 20_000 }, () => drawUnitLimit(random));
    const defaults = draws.filter((d) => d === DEFAULT_REQUEST).length / draws.length;
    expect(defaults).toBeGreaterThan(MAINNET_UNIT_LIMITS.zeroShare - 0.02);
    expect(defaults).toBeLessThan(MAINNET_UNIT_LIMITS.zeroShare + 0.02);
    const explicit = draws.filter((d) => d !== DEFAULT_REQUEST).sort((a, b) => a - b);
    const median = explicit[Math.floor(explicit.length / 2)]!;
    expect(median / MAINNET_UNIT_LIMITS.median).toBeGreaterThan(0.9);
    expect(median / MAINNET_UNIT_LIMITS.median).toBeLessThan(1.1);
  });
});
