/**
 * Compute-unit requests and fee bids as recorded mainnet blocks show them, for the congestion profiles
 * (busy, congested, storm). Fitted by `scripts/traffic-distribution.ts` from the project's recordings
 * (test/fixtures/solana, copied from ../shared/fixtures): the numbers below are what that script prints,
 * and test/traffic/mainnet-distribution.test.ts re-fits them from the fixtures to keep them in step.
 *
 * - Requests: every non-vote transaction recorded (a 2022 block's 23, five 2024-2025 getTransaction
 *   records): the share that sets no SetComputeUnitLimit (agave's default, 200,000 for one program
 *   instruction), and a log-normal over the explicit limits.
 * - Bids: the 150 consecutive 2025 mainnet slots of getRecentPrioritizationFees
 *   (slots 338225766-338225915): the share at 0, and a log-normal over the rest.
 * The samples are few (28 transactions, 150 slot prices): a coarse fit, documented with its plot in
 * docs/localnet-congestion.md.
 */

/** A zero-or-log-normal distribution: `zeroShare` of draws are 0 (or the default), the rest log-normal. */
export interface LogNormalFit {
  /** Samples the fit came from. */
  samples: number;
  /** Share of samples at the special value (no request / no bid). */
  zeroShare: number;
  /** exp(mean of ln x) over the other samples. */
  median: number;
  /** Standard deviation of ln x over the other samples. */
  sigma: number;
}

/** Compute-unit requests: `zeroShare` = share with no SetComputeUnitLimit (agave's default request). */
export const MAINNET_UNIT_LIMITS: LogNormalFit = { samples: 28, zeroShare: 0.821429, median: 33_317, sigma: 2.5205 };
/** Compute-unit prices in micro-lamports: `zeroShare` = share unpriced. */
export const MAINNET_UNIT_PRICES: LogNormalFit = { samples: 150, zeroShare: 0.586667, median: 176_787, sigma: 1.5727 };

/** agave's default request for a transaction with one program instruction. */
export const DEFAULT_REQUEST = 200_000;
/** The smallest request drawn: the traffic's transfer needs about 450 CU with its budget instructions. */
export const MIN_REQUEST = 1_000;
export const MAX_REQUEST = 1_400_000;

/** Fits a zero-or-log-normal to `values`, where `isZero` marks the special ones. */
export function fitLogNormal(values: readonly number[], isZero: (value: number) => boolean): LogNormalFit {
  const rest = values.filter((v) => !isZero(v) && v > 0).map(Math.log);
  const mean = rest.reduce((a, b) => a + b, 0) / rest.length;
  const variance = rest.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, rest.length - 1);
  return {
    samples: values.length,
    zeroShare: (values.length - rest.length) / values.length,
    median: Math.exp(mean),
    sigma: Math.sqrt(variance),
  };
}

/** The fit's CDF at x (x >= 0); the special value counts as 0. */
export function fitCdf(fit: LogNormalFit, x: number): number {
  if (x <= 0) return fit.zeroShare;
  const z = (Math.log(x) - Math.log(fit.median)) / fit.sigma;
  return fit.zeroShare + (1 - fit.zeroShare) * normalCdf(z);
}

/** Standard normal CDF (Abramowitz-Stegun 7.1.26 erf; written here, 1e-7 accurate, enough for a plot). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const y =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? (1 + y) / 2 : (1 - y) / 2;
}

/** What the draws need: uniform and standard normal numbers. */
export interface Draws {
  next(): number;
  normal(): number;
}

/** A compute-unit request: agave's default or a log-normal explicit limit, within [1,000, 1,400,000]. */
export function drawUnitLimit(random: Draws, fit: LogNormalFit = MAINNET_UNIT_LIMITS): number {
  if (random.next() < fit.zeroShare) return DEFAULT_REQUEST;
  const value = Math.round(fit.median * Math.exp(fit.sigma * random.normal()));
  return Math.min(MAX_REQUEST, Math.max(MIN_REQUEST, value));
}

/** Mean cost of a drawn traffic transfer (agave's cost: 17,710 + its request), by deterministic sampling. */
export function meanTransferCost(draw: () => number, samples = 20_000): number {
  let total = 0;
  for (let i = 0; i < samples; i++) total += TRANSFER_BASE_COST + draw();
  return total / samples;
}

/**
 * Cost of the traffic's transfer apart from its request: 720 signature + 2 x 300 write locks + 26 bytes of
 * instruction data / 4 + 16,384 for the default 64 MiB loaded-data limit (cost-model.ts).
 */
export const TRANSFER_BASE_COST = 720 + 600 + 6 + 16_384;
